// SPDX-License-Identifier: Apache-2.0
/// Still while the smoothed signals stay where they settled (and GPS says no more than walking).
struct Stillness: Sendable {
    private var forceAnchor = Vector3.zero
    private var rotationAnchor = Vector3.zero
    /// When the current still period began; NaN while moving.
    private(set) var since = Double.nan

    mutating func start(_ sample: IMUSample) {
        forceAnchor = sample.accel
        if let w = sample.gyro { rotationAnchor = w }
    }

    /// Still now? `hasGyro`: the sample carried a rotation (then it must be steady too).
    @inline(__always) mutating func update(_ smoothing: Smoothing, hasGyro: Bool, speed: Double?, t: Double,
                                           configuration: DetectorConfiguration) -> Bool {
        // Magnitudes compared squared: no square root per sample.
        let moved = smoothing.force - forceAnchor
        var settled = moved.dot(moved) <= square(configuration.stillAccelerationTolerance)
        if hasGyro {
            let turned = smoothing.rotation - rotationAnchor
            settled = settled && turned.dot(turned) <= square(configuration.stillRotationTolerance)
                && smoothing.rotation.dot(smoothing.rotation) <= square(configuration.stillRotationLimit)
        }
        if let speed, speed > configuration.movingSpeed { settled = false }
        if settled {
            if since.isNaN { since = t }
            return true
        }
        forceAnchor = smoothing.force
        rotationAnchor = smoothing.rotation
        since = .nan
        return false
    }

    /// Forgets the current still period (the detector re-armed): it must begin again.
    mutating func forget() { since = .nan }

    /// Still for less than `seconds` at `t`: the force changed that recently (false while moving).
    func began(within seconds: Double, of t: Double) -> Bool { t - since < seconds }
}
