// SPDX-License-Identifier: Apache-2.0
/// What the agent needs from the world, declared here and met by adapters: the real hardware, or
/// its simulated twin, chosen once where the agent is wired.

/// Time for the services: wall-clock seconds, so that deadlines the workflow persists still mean
/// something after a restart, and sleeping until one. Tests drive a manual clock instead.
package protocol ServiceClock: Sendable {
    func now() -> Double
    /// Sleeps until `deadline` (in `now()`'s time base); throws when the task is cancelled.
    func sleep(until deadline: Double) async throws
}

/// Something that can be switched on and off: the GPIO buzzer or its simulated twin.
package protocol BuzzerOutput: Sendable {
    func set(_ on: Bool)
}

/// Something that sends an SMS and returns the references of its parts: the modem, or its
/// simulated twin.
package protocol SMSTransport: Sendable {
    func send(_ text: String, to number: String) async throws(SendError) -> [Int]
}

/// A send that did not go out: give up on the message (`permanent`), or try again later.
package struct SendError: Error, Equatable, CustomStringConvertible, Sendable {
    package var permanent: Bool
    package var reason: String
    /// Parts the network accepted before the failure (they may be sent again on retry).
    package var acceptedParts: Int
    /// Whose trouble it is, where the modem said (a +CMS ERROR); nil for a modem that did not
    /// answer or a lost port.
    package var cause: SMSCause?

    package init(permanent: Bool, reason: String, acceptedParts: Int, cause: SMSCause? = nil) {
        self.permanent = permanent
        self.reason = reason
        self.acceptedParts = acceptedParts
        self.cause = cause
    }

    package var description: String { (permanent ? "permanent: " : "") + reason }
}

/// Something that rings a number and says how the call ended: the modem, or its simulated twin.
/// Cancelling the calling task hangs up at once (an acknowledgement came another way, or the rider
/// cancelled); the call then ends `.stopped`.
package protocol VoiceCaller: Sendable {
    /// Whether voice calls can be made; nil when not known yet.
    var canCall: Bool? { get async }
    func call(_ number: String, ringSeconds: Double) async -> CallReport
}

/// How one call ended, and what it cost the AT port.
package struct CallReport: Equatable, Sendable {
    package enum Outcome: Equatable, Sendable {
        /// Picked up after it rang: somebody, or their voicemail, answered.
        case answered
        /// Rang out, busy, rejected, or answered at once without ringing (a switched-off phone's
        /// voicemail or the network's announcement): why.
        case notAnswered(String)
        /// Could not be placed (no network, the modem gone): why.
        case failed(String)
        /// The modem cannot make voice calls.
        case noVoice
        /// Hung up because the calls were stopped.
        case stopped
    }

    package var outcome: Outcome
    /// Time the call's commands held the AT port, seconds (other commands go in between).
    package var portSeconds: Double
    /// Commands the call sent.
    package var commands: Int

    package init(_ outcome: Outcome, portSeconds: Double = 0, commands: Int = 0) {
        self.outcome = outcome
        self.portSeconds = portSeconds
        self.commands = commands
    }
}
