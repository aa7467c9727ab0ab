// SPDX-License-Identifier: Apache-2.0
/// The situations the generator writes; each trace is labelled with one.
package enum Scenario: String, CaseIterable, Codable, Sendable {
    // Crashes.
    case lowside, highside, collision
    case pinnedCollision = "pinned_collision"
    case tipOverAtStop = "tip_over_at_stop"
    case slowTurnDrop = "slow_turn_drop"
    /// Pushed at walking pace, leaned toward the rider, then dropped.
    case pushedThenDropped = "pushed_then_dropped"
    /// The agent starts while the bike lies on its side; it is lifted, ridden, and crashes.
    case startedLyingThenCrash = "started_lying_then_crash"
    // Rides that end on the side stand.
    case normalRide = "normal_ride"
    case hardRide = "hard_ride"
    case roughRoad = "rough_road"
    case offRoad = "off_road"
    // The hours around a ride: nobody is riding, nothing must reach the contacts.
    /// Parked (engine off, untouched for minutes), then pushed over by a passer-by or the wind.
    case parkedKnockedOver = "parked_knocked_over"
    /// Parked for minutes, then laid slowly on its side by a person (maintenance).
    case parkedLaidDown = "parked_laid_down"
    /// Parked for minutes, then bumped hard by a car: it rocks on its stand and stays up.
    case parkedBumped = "parked_bumped"
    /// The agent starts while the bike lies on its side; it is lifted and ridden.
    case startedLying = "started_lying"
    /// Strapped upright on a trailer towed at road and highway speed, engine off.
    case trailer
    /// On the centre stand in a garage, the engine idling and revved for minutes.
    case centreStandEngine = "centre_stand_engine"
    // The first seconds of moving (kept last: a corpus's first traces stay what they were).
    /// The agent has just started (with the ignition) and the bike goes down 1–5 s after it began to
    /// move: pulled out into the road and the front washes out, pushed out of a parking space and
    /// dropped, or dropped in a U-turn while leaving.
    case movingOffFall = "moving_off_fall"
    /// A crash (in the first seconds of moving or after a ride), then the fallen bike shakes before it
    /// is lifted: a wheel turning, someone taking hold of it.
    case fallenShaken = "fallen_shaken"
    // Hard hits that are no crash (kept last): a pothole's edge or a kerb at 20–110 km/h, a jump, a
    // drop of 0.3–2 m off a ledge or a row of whoops off road…
    /// …and the bike is ridden on.
    case hardHitRiddenOn = "hard_hit_ridden_on"
    /// …then the rider stops to look and sits on the bike, feet down, before riding on.
    case hardHitThenStop = "hard_hit_then_stop"
    /// …then the rider stops, puts the bike on its side stand and gets off.
    case hardHitThenOff = "hard_hit_then_off"

    package var isCrash: Bool {
        switch self {
        case .lowside, .highside, .collision, .pinnedCollision, .tipOverAtStop, .slowTurnDrop, .pushedThenDropped,
             .startedLyingThenCrash, .movingOffFall, .fallenShaken: true
        case .normalRide, .hardRide, .roughRoad, .offRoad, .parkedKnockedOver, .parkedLaidDown, .parkedBumped,
             .startedLying, .trailer, .centreStandEngine, .hardHitRiddenOn, .hardHitThenStop, .hardHitThenOff: false
        }
    }
}

/// What the generator knows about one trace: the ground truth an evaluation compares against.
package struct TraceLabel: Codable, Equatable, Sendable {
    package var file: String
    package var scenario: Scenario
    package var crash: Bool
    /// When control was lost (the crash begins), trace seconds.
    package var crashStart: Double?
    /// When the bike came to rest after the crash, trace seconds.
    package var rest: Double?
    /// Seconds of riding (moving) in the trace, for false alarms per hour.
    package var ridingSeconds: Double
    package var duration: Double
    package var rateHz: Double
    package var gyro: Bool
    package var rangeG: Double
    package var speedColumn: Bool
    package var deadAxis: Int?
    package var engineIdlingAfter: Bool
    /// When a parked bike (nobody riding it) started to fall, trace seconds: one `parked_fall` is due.
    package var parkedFall: Double?
    package var seed: UInt64

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
        case parkedFall = "parked_fall_s"
    }
}

/// The labelled set of traces `rideguard synth` writes next to them as `manifest.json`.
package struct Manifest: Codable, Sendable {
    package var format = "rideguard-manifest v1"
    package var seed: UInt64
    package var traces: [TraceLabel]

    package init(seed: UInt64, traces: [TraceLabel]) {
        self.seed = seed
        self.traces = traces
    }
}
