// SPDX-License-Identifier: Apache-2.0
/// One voice call's progress once dialled, as the emergency workflow is: events in (the clock, what
/// the modem says unprompted, a look at its list of calls), decisions out. Pure, so it is tested
/// without a serial line; `Modem.call` runs it over AT (`AT+CLCC` for a look, `AT+CHUP` to hang up).
///
/// The list, not a result code, says whether the call goes on: a late NO CARRIER from an earlier
/// call must not end this one; the result code only names the reason. A call picked up after it
/// rang is answered; one that went straight to active never rang (a switched-off phone's
/// voicemail, or the network's announcement): nobody heard it.
package struct CallProgress: Sendable {
    package enum Decision: Equatable, Sendable {
        /// Look at the list of calls now.
        case look
        /// Still ringing: look again at `nextLook`.
        case wait
        /// Hang up; the call ended so.
        case hangUp(CallReport.Outcome)
        /// Over already, nothing to hang up.
        case ended(CallReport.Outcome)
    }

    /// Seconds between two looks at the list of calls.
    package static let lookSeconds = 1.0

    package let ringSeconds: Double
    private var deadline = Double.infinity
    private var rang = false
    /// How the call ended in the modem's own words (NO CARRIER, BUSY…), once it has.
    private var ending: String?
    /// What the modem said unprompted of the call (ringing, picked up).
    private var heard: Set<ATParse.CallEvent> = []

    /// Made just before the dial: what the modem says from then on belongs to this call.
    package init(ringSeconds: Double) {
        self.ringSeconds = ringSeconds
    }

    /// The dial was accepted at `now`: it rings for `ringSeconds` from here.
    package mutating func dialled(at now: Double) {
        deadline = now + ringSeconds
    }

    /// The dial itself answered a call-progress result (BUSY, NO CARRIER…).
    package static func refused(_ word: String) -> CallReport.Outcome {
        .notAnswered(meaning(of: word))
    }

    /// When to wake next, at `now`.
    package func nextLook(after now: Double) -> Double { min(deadline, now + Self.lookSeconds) }

    /// Woken at `now`: rang out, or look.
    package func woke(at now: Double) -> Decision {
        now >= deadline ? .hangUp(.notAnswered("no answer in \(DecimalFormat.string(ringSeconds, decimals: 0)) s")) : .look
    }

    /// A call-progress result code the modem said unprompted.
    package mutating func said(_ word: String) { ending = word }

    /// Ringing or picked up, said unprompted (a short pick-up between two looks is only seen so).
    package mutating func said(_ event: ATParse.CallEvent) { heard.insert(event) }

    /// What the list of calls shows; nil when the look failed (the next one tells, and the deadline still ends it).
    package mutating func listed(_ calls: [ATParse.Call]?) -> Decision {
        guard let calls else { return .wait }
        if heard.contains(.ringing) { rang = true }
        guard let call = calls.first(where: { $0.outgoing && $0.voice }) else {
            // Picked up and hung up between two looks: the modem said so unprompted.
            if rang && heard.contains(.pickedUp) { return .ended(.answered) }
            return .ended(.notAnswered(ending.map(Self.meaning(of:)) ?? "the call ended"))
        }
        ending = nil
        switch call.state {
        case .alerting:
            rang = true
        case .active:
            return .hangUp(rang ? .answered : .notAnswered("answered without ringing (voicemail or an announcement)"))
        default:
            break
        }
        return .wait
    }

    static func meaning(of word: String) -> String {
        switch word {
        case "BUSY": "busy"
        case "NO ANSWER": "no answer (the network gave up)"
        case "NO DIALTONE": "no dial tone (no network)"
        default: "the call ended (rejected or out of reach)"
        }
    }
}
