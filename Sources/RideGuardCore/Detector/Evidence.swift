// SPDX-License-Identifier: Apache-2.0
/// What the last seconds showed, for the crash's evidence and for telling a fall from a person's
/// hands: peaks and delta-v over the last 10–20 s (two buckets), the peak rotation over the last
/// 1–2 s (a fall's swing comes just before its smoothed posture crosses), and the last landing.
struct Evidence: Sendable {
    struct Bucket: Sendable {
        /// Squared magnitudes, kept per sample (a square root each only when read).
        var peakAccelSquared = 0.0
        var peakRotationSquared = 0.0
        /// The peak force, in g.
        var peakG: Double { peakAccelSquared.squareRoot() / standardGravity }
        /// The peak rotation rate, rad/s.
        var peakRotation: Double { peakRotationSquared.squareRoot() }
        var deltaV = 0.0
        var peakSpeed = 0.0
        var sawGyro = false
        var sawSpeed = false
    }

    private var bucketStart = -Double.infinity
    private(set) var recent = Bucket()
    private(set) var previous = Bucket()
    private var shortStart = -Double.infinity
    private var rotationRecent = 0.0
    private var rotationPrevious = 0.0
    /// When the force last reached `parkedFallPeakG`.
    private(set) var landingTime = -Double.infinity

    mutating func start(at t: Double) { bucketStart = t }

    @inline(__always) mutating func record(_ sample: IMUSample, t: Double, configuration: DetectorConfiguration) {
        if t - shortStart >= DetectorConfiguration.rotationBucketSeconds {
            rotationPrevious = rotationRecent
            rotationRecent = 0
            shortStart = t
        }
        let forceSquared = sample.accel.dot(sample.accel)
        if forceSquared >= square(configuration.parkedFallPeakG * standardGravity) { landingTime = t }
        if let w = sample.gyro { rotationRecent = max(rotationRecent, w.dot(w)) }
        if t - bucketStart >= DetectorConfiguration.evidenceBucketSeconds {
            previous = recent
            recent = Bucket()
            bucketStart = t
        }
        recent.peakAccelSquared = max(recent.peakAccelSquared, forceSquared)
        if let w = sample.gyro {
            recent.sawGyro = true
            recent.peakRotationSquared = max(recent.peakRotationSquared, w.dot(w))
        }
        if let speed = sample.speed {
            recent.sawSpeed = true
            recent.peakSpeed = max(recent.peakSpeed, speed)
        }
    }

    /// A pulse's delta-v, or a GPS speed drop, m/s.
    mutating func add(deltaV: Double) { recent.deltaV = max(recent.deltaV, deltaV) }

    /// The peak rotation rate of the last 10–20 s, rad/s.
    var peakRotation: Double { max(recent.peakRotation, previous.peakRotation) }
    /// The peak force of the last 10–20 s, in g.
    var peakG: Double { max(recent.peakG, previous.peakG) }
    /// The peak rotation rate of the last 1–2 s, squared (rad/s)².
    var swingSquared: Double { max(rotationRecent, rotationPrevious) }

    /// What a crash (or a parked fall) is reported with.
    func crash(_ reason: CrashEvidence.Reason, postureDegrees: Double, stillFor: Double, lyingSince: Double) -> CrashEvidence {
        CrashEvidence(
            reason: reason,
            postureDegrees: postureDegrees,
            stillSeconds: stillFor,
            peakG: peakG,
            deltaV: max(recent.deltaV, previous.deltaV),
            peakRotationDegreesPerSecond: recent.sawGyro || previous.sawGyro ? peakRotation * 180 / Double.pi : nil,
            speedBefore: recent.sawSpeed || previous.sawSpeed ? max(recent.peakSpeed, previous.peakSpeed) : nil,
            fallTime: lyingSince.isNaN ? nil : lyingSince
        )
    }
}
