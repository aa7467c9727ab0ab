// SPDX-License-Identifier: Apache-2.0
/// What the detector says; rare by design (at most a few per minute of riding).
package enum DetectorEvent: Equatable, Sendable {
    /// The reference "up" of the bike was first established.
    case uprightLearned(t: Double, up: Vector3)
    /// A shock worth reporting (not an alarm on its own), and what it was.
    case impact(t: Double, peakG: Double, horizontalG: Double, deltaV: Double, kind: ImpactKind)
    /// The bike has gone down: the moment the alert countdown starts.
    case crashDetected(t: Double, evidence: CrashEvidence)
    /// A parked bike (nobody riding it) fell over: no countdown, no contact; the rider is told.
    case parkedFall(t: Double, evidence: CrashEvidence)
    /// Back to normal riding after a crash; the detector watches again.
    case rearmed(t: Double)
    case sensorFault(t: Double, fault: SensorFault)

    package var t: Double {
        switch self {
        case .uprightLearned(let t, _), .impact(let t, _, _, _, _), .crashDetected(let t, _), .parkedFall(let t, _),
             .rearmed(let t), .sensorFault(let t, _):
            return t
        }
    }

    /// The event's name in `rideguard replay --json`.
    package var name: String {
        switch self {
        case .uprightLearned: "upright_learned"
        case .impact: "impact"
        case .crashDetected: "crash_detected"
        case .parkedFall: "parked_fall"
        case .rearmed: "rearmed"
        case .sensorFault: "sensor_fault"
        }
    }
}

/// Why the detector believes the bike went down, with the numbers behind it.
package struct CrashEvidence: Codable, Equatable, Sendable {
    package enum Reason: String, Codable, Sendable {
        /// The bike lies far from upright and has been still.
        case lyingStill = "lying_still"
        /// A collision pulse, then the bike came to rest (possibly still upright).
        case collisionThenStill = "collision_then_still"
    }

    package var reason: Reason
    /// Angle between the learned up and gravity when detected, degrees (180 = upside down).
    package var postureDegrees: Double
    /// How long the bike had been still, seconds.
    package var stillSeconds: Double
    /// Largest acceleration in the last 20 s, in g.
    package var peakG: Double
    /// Largest horizontal delta-v of one pulse in the last 20 s, m/s.
    package var deltaV: Double
    /// Fastest rotation in the last 20 s, degrees per second (nil without a gyro).
    package var peakRotationDegreesPerSecond: Double?
    /// Highest GPS speed in the last 20 s, m/s (nil when unknown).
    package var speedBefore: Double?
    /// When the bike went past the lying angle, when it did.
    package var fallTime: Double?

    package var summary: String {
        var parts: [String] = []
        switch reason {
        case .lyingStill: parts.append("bike down: lying at \(DecimalFormat.string(postureDegrees, decimals: 0))° from upright, still for \(DecimalFormat.string(stillSeconds, decimals: 1)) s")
        case .collisionThenStill: parts.append("collision (\(DecimalFormat.string(deltaV, decimals: 1)) m/s in one pulse), then still for \(DecimalFormat.string(stillSeconds, decimals: 1)) s at \(DecimalFormat.string(postureDegrees, decimals: 0))°")
        }
        parts.append("peak \(DecimalFormat.string(peakG, decimals: 1)) g")
        if let rotation = peakRotationDegreesPerSecond { parts.append("rotation up to \(DecimalFormat.string(rotation, decimals: 0)) °/s") }
        if let speed = speedBefore { parts.append("speed before \(DecimalFormat.string(speed * 3.6, decimals: 0)) km/h") }
        return parts.joined(separator: "; ")
    }
}

package enum SensorFault: Equatable, Sendable {
    /// One accelerometer axis shows no signal while the others move (0 = x, 1 = y, 2 = z).
    case deadAxis(axis: Int)
    /// No samples for this long, seconds.
    case gap(seconds: Double)
    /// A sample whose time is before the previous one's (dropped).
    case timeWentBackwards(by: Double)
    /// A sample with the previous one's time (dropped).
    case duplicateTime
    /// At rest the accelerometer reads this many g instead of about 1: no upright reference yet.
    case implausibleGravity(g: Double)
    /// Samples dropped since the last report because no motion reads so: a number that is not
    /// finite, beyond any IMU's range, or a time leap of more than a day.
    case nonPhysical(count: Int)

    /// The fault is one sample dropped for its time, not a fault of the sensor.
    package var isDroppedSample: Bool {
        switch self {
        case .timeWentBackwards, .duplicateTime: true
        default: false
        }
    }

    package var code: String {
        switch self {
        case .deadAxis: "dead_axis"
        case .gap: "gap"
        case .timeWentBackwards: "time_went_backwards"
        case .duplicateTime: "duplicate_time"
        case .implausibleGravity: "implausible_gravity"
        case .nonPhysical: "non_physical"
        }
    }

    package var summary: String {
        switch self {
        case .deadAxis(let axis): "accelerometer axis \(["x", "y", "z"][axis]) shows no signal while the others move"
        case .gap(let seconds): "no samples for \(DecimalFormat.string(seconds, decimals: 3)) s"
        case .timeWentBackwards(let by): "sample time went back by \(DecimalFormat.string(by, decimals: 6)) s; sample dropped"
        case .duplicateTime: "duplicate time: the sample has the previous one's time; sample dropped"
        case .nonPhysical(let count): "\(count) non-physical sample\(count == 1 ? "" : "s") dropped (not a number, beyond any IMU's range, or a time leap of more than a day)"
        case .implausibleGravity(let g): "the accelerometer reads \(DecimalFormat.string(g, decimals: 2)) g at rest where about 1 g was expected (dead axis or wrong range?); posture is estimated conservatively"
        }
    }
}
