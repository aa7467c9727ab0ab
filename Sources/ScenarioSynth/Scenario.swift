/// The situations the generator writes; each trace is labelled with one.
public enum Scenario: String, CaseIterable, Codable, Sendable {
    // Crashes.
    case lowside, highside, collision
    case pinnedCollision = "pinned_collision"
    case tipOverAtStop = "tip_over_at_stop"
    case slowTurnDrop = "slow_turn_drop"
    /// Pushed at walking pace, leaned toward the rider, then dropped.
    case pushedThenDropped = "pushed_then_dropped"
    // Rides that end on the side stand.
    case normalRide = "normal_ride"
    case hardRide = "hard_ride"
    case roughRoad = "rough_road"
    case offRoad = "off_road"

    public var isCrash: Bool {
        switch self {
        case .lowside, .highside, .collision, .pinnedCollision, .tipOverAtStop, .slowTurnDrop, .pushedThenDropped: true
        case .normalRide, .hardRide, .roughRoad, .offRoad: false
        }
    }
}

/// What the generator knows about one trace: the ground truth an evaluation compares against.
public struct TraceLabel: Codable, Equatable, Sendable {
    public var file: String
    public var scenario: Scenario
    public var crash: Bool
    /// When control was lost (the crash begins), trace seconds.
    public var crashStart: Double?
    /// When the bike came to rest after the crash, trace seconds.
    public var rest: Double?
    /// Seconds of riding (moving) in the trace, for false alarms per hour.
    public var ridingSeconds: Double
    public var duration: Double
    public var rateHz: Double
    public var gyro: Bool
    public var rangeG: Double
    public var speedColumn: Bool
    public var deadAxis: Int?
    public var engineIdlingAfter: Bool
    public var seed: UInt64

    enum CodingKeys: String, CodingKey {
        case file, scenario, crash, seed, duration, gyro
        case crashStart = "crash_start_s"
        case rest = "rest_s"
        case ridingSeconds = "riding_s"
        case rateHz = "rate_hz"
        case rangeG = "range_g"
        case speedColumn = "speed_column"
        case deadAxis = "dead_axis"
        case engineIdlingAfter = "engine_idling_after"
    }
}

/// The labelled set of traces `rideguard synth` writes next to them as `manifest.json`.
public struct Manifest: Codable, Sendable {
    public var format = "rideguard-manifest v1"
    public var seed: UInt64
    public var traces: [TraceLabel]

    public init(seed: UInt64, traces: [TraceLabel]) {
        self.seed = seed
        self.traces = traces
    }
}
