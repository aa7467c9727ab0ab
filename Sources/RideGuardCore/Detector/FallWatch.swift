// SPDX-License-Identifier: Apache-2.0
/// How the posture last left upright. A fall crosses from 20° to 60° in a few tenths of a second
/// (the pendulum's last part turns at 150–300 °/s; the smoothing slows what it shows, never speeds
/// it up); a person laying the bike down takes seconds. It needs no gyro and no axis in particular,
/// so it still sees a fall whose landing struck a dead axis.
struct FallWatch: Sendable {
    /// The last time the bike was upright, the upright time already judged, and when a crossing was
    /// as fast as a fall.
    private(set) var lastUprightTime = -Double.infinity
    private var tiltJudgedFrom = -Double.infinity
    private var fallJudgedFrom = -Double.infinity
    private var fallCrossingTime = -Double.infinity
    /// When a tilt was last as fast as a fall's.
    private(set) var fastTiltTime = -Double.infinity
    /// When the bike last went over into lying as a fall does (`wentOverAsAFall`), not as a lift.
    private(set) var fallTime = -Double.infinity

    /// The bike went over as a fall does and has not been seen upright since.
    var fellSinceUpright: Bool { fallTime > lastUprightTime }

    /// Feeds the posture. Returns true when the bike just went over into lying as a fall does.
    @inline(__always) mutating func watch(postureDegrees: Double, evidence: Evidence, t: Double, configuration: DetectorConfiguration) -> Bool {
        if postureDegrees < DetectorConfiguration.uprightDegrees {
            lastUprightTime = t
            return false
        }
        var fell = false
        // Judged from the crossing until a second after it: the landing may come just after.
        if postureDegrees >= configuration.fallenLyingAngleDegrees {
            if lastUprightTime > fallJudgedFrom {
                fallJudgedFrom = lastUprightTime
                fallCrossingTime = t
            }
            if !fellSinceUpright && t - fallCrossingTime <= DetectorConfiguration.fallJudgingSeconds
                && wentOverAsAFall(evidence, configuration: configuration) {
                fallTime = t
                fell = true
            }
        }
        if postureDegrees >= DetectorConfiguration.fastTiltDegrees && lastUprightTime > tiltJudgedFrom {
            tiltJudgedFrom = lastUprightTime
            if DetectorConfiguration.fastTiltDegrees - DetectorConfiguration.uprightDegrees
                >= configuration.parkedFallRotationDegreesPerSecond * (t - lastUprightTime) { fastTiltTime = t }
        }
        return fell
    }

    /// The bike went over from upright into lying as a fall does: by the gyro, a rotation at least
    /// `fallRotationDegreesPerSecond` in the last one to two seconds (a pendulum's swing; a person
    /// lifts or lowers a bike at a few tens). Without a gyro, or with one that read under 2 °/s while
    /// the posture turned past 45° (dead, or stuck at zero), a landing of `parkedFallPeakG`. (Not a
    /// landing beside a working gyro: a pothole is one, and it would hold riding windows back.)
    /// Anything else is a lift, or a person lowering the bike: the accelerometer alone cannot tell
    /// those apart.
    private func wentOverAsAFall(_ evidence: Evidence, configuration: DetectorConfiguration) -> Bool {
        let rotation = evidence.swingSquared
        let rate = configuration.fallRotationDegreesPerSecond * Double.pi / 180
        if rotation >= rate * rate { return true }
        // The landing ends the swing: the smoothed posture leaves upright only as the bike lands.
        return rotation < square(DetectorConfiguration.stuckGyroDegreesPerSecond * Double.pi / 180)
            && evidence.landingTime >= lastUprightTime - DetectorConfiguration.landingBeforeTiltSeconds
    }
}
