// SPDX-License-Identifier: Apache-2.0
/// Two cascaded first-order low-pass stages over the force and the rotation: engine and road
/// vibration out, the bike's own motion kept. The weight comes from each sample's real interval, so
/// jitter and gaps are handled.
struct Smoothing: Sendable {
    /// The smoothed force, m/s².
    private(set) var force = Vector3.zero
    /// The smoothed rotation, rad/s (zero without a gyro).
    private(set) var rotation = Vector3.zero
    private var forceStage = Vector3.zero
    private var rotationStage = Vector3.zero

    /// Starts both stages at the first sample.
    mutating func start(_ sample: IMUSample) {
        forceStage = sample.accel
        force = sample.accel
        if let w = sample.gyro {
            rotationStage = w
            rotation = w
        }
    }

    /// `alpha`: dt / (time constant + dt).
    @inline(__always) mutating func add(_ sample: IMUSample, alpha: Double) {
        forceStage += (sample.accel - forceStage) * alpha
        force += (forceStage - force) * alpha
        if let w = sample.gyro {
            rotationStage += (w - rotationStage) * alpha
            rotation += (rotationStage - rotation) * alpha
        }
    }
}
