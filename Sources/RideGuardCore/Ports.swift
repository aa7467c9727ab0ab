/// What the agent needs from the world, declared here and met by adapters: the real hardware, or
/// its simulated twin, chosen once where the agent is wired.

/// Time for the services: wall-clock seconds, so that deadlines the workflow persists still mean
/// something after a restart, and sleeping until one. Tests drive a manual clock instead.
public protocol ServiceClock: Sendable {
    func now() -> Double
    /// Sleeps until `deadline` (in `now()`'s time base); throws when the task is cancelled.
    func sleep(until deadline: Double) async throws
}

/// Something that can be switched on and off: the GPIO buzzer or its simulated twin.
public protocol BuzzerOutput: Sendable {
    func set(_ on: Bool)
}

/// Something that sends an SMS and returns the references of its parts: the modem, or its
/// simulated twin.
public protocol SMSTransport: Sendable {
    func send(_ text: String, to number: String) async throws(SendError) -> [Int]
}

/// A send that did not go out: give up on the message (`permanent`), or try again later.
public struct SendError: Error, Equatable, CustomStringConvertible, Sendable {
    public var permanent: Bool
    public var reason: String
    /// Parts the network accepted before the failure (they may be sent again on retry).
    public var acceptedParts: Int

    public init(permanent: Bool, reason: String, acceptedParts: Int) {
        self.permanent = permanent
        self.reason = reason
        self.acceptedParts = acceptedParts
    }

    public var description: String { (permanent ? "permanent: " : "") + reason }
}
