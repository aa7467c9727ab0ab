// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import Storage

/// What each SMS's fate says beyond the message itself: a SIM that cannot send (no credit, barred,
/// not provisioned) is the modem's trouble, and no alert would leave the bike by SMS until one goes
/// out again; a number the network says is not in service (or cannot receive SMS) makes that
/// contact unreachable. The network's passing trouble (congestion, no coverage) says nothing of
/// either: the outbox retries.
struct SMSOutcomes: Sendable {
    let database: RideGuardDatabase
    let emergency: EmergencyService
    let selfTest: SelfTest
    let clock: any ServiceClock
    let logger: Logger

    func note(_ kind: OutboxKind, to recipient: String, _ outcome: SendOutcome) {
        if kind == .selfTest { selfTest.noted(outcome) }
        if kind == .confirmation { noteConfirmation(to: recipient, outcome) }
        let error: SendError
        switch outcome {
        case .sent:
            emergency.post(.event(.health(.sms, problem: nil, at: clock.now())))
            return
        case .gaveUp(let given?), .willRetry(let given): error = given
        case .gaveUp(nil): return
        }
        // A SIM missing or locked at bring-up names no cause: the SIM's own health says it.
        guard let cause = error.cause else { return }
        switch cause.party {
        case .sim:
            emergency.post(.event(.health(.sms, problem: "the SIM cannot send SMS: \(cause.advice) (\(error.reason))", at: clock.now())))
        case .contact where error.permanent:
            let reason = "\(cause.advice) (\(error.reason))"
            do {
                let contacts = try database.contactsAsKnown()
                guard let contact = contacts.first(where: { $0.number == recipient }) else { return }
                if try database.setContactStanding(recipient, .unreachable(at: clock.now(), reason: reason),
                                                   journal: "contact \(contact.forLogs) unreachable: \(reason)", now: clock.now()) {
                    logger.warning("contacts: \(contact.forLogs) unreachable: \(reason)")
                }
            } catch {
                logger.error("contacts: \(PhoneNumber.mask(recipient)) is unreachable (\(reason)), but the database refused to keep it: \(error)")
            }
        case .contact, .network, .unknown:
            break
        }
    }

    /// The contact's question went out (they wait for their reply from now), or why not yet.
    private func noteConfirmation(to recipient: String, _ outcome: SendOutcome) {
        let held: String? = switch outcome {
        case .sent: nil
        case .willRetry(let error): error.reason
        case .gaveUp(let error): "given up: \(error?.reason ?? "its message was damaged on the card")"
        }
        do { try database.noteConfirmationSend(to: recipient, held: held, now: clock.now()) } catch {
            logger.error("contacts: the question to \(PhoneNumber.mask(recipient)) \(held == nil ? "went out" : "is held back"), but the database refused to note it: \(error)")
        }
    }
}
