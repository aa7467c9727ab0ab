// SPDX-License-Identifier: Apache-2.0
/// The bike's forward axis: the principal direction of the horizontal force while riding (braking
/// and accelerating; turns add none because they are coordinated), kept as a covariance. It tells a
/// wheelie (a tilt about the pitch axis) from a bike lying on its side.
struct ForwardAxis: Sendable {
    private var covariance = SymmetricMatrix3()
    private var weight = 0.0
    private var mean = Vector3.zero
    private(set) var axis: Vector3?
    private var nextUpdate = 0.0

    /// Accumulates the horizontal force while the engine or the road shakes the frame (`usable`:
    /// not on a stand, the reference in full, no dead or silent axis); the principal axis of its
    /// variation is forward/backward. Only force with a vertical component of about 1 g counts:
    /// braking and accelerating add force sideways to gravity, while a turn raises the vertical
    /// component to g/cos(lean). The mean is removed, so a constant offset from a slightly wrong
    /// "up" teaches nothing.
    @inline(__always) mutating func learn(_ smoothed: Vector3, up: Vector3, gravity: Double, usable: Bool, dt: Double, t: Double) {
        let vertical = smoothed.dot(up)
        let horizontal = smoothed - up * vertical
        guard usable, abs(vertical - gravity) < DetectorConfiguration.forwardVerticalTolerance * gravity,
              horizontal.dot(horizontal) < square(DetectorConfiguration.forwardHorizontalLimit * gravity) else { return }
        let k = dt / (DetectorConfiguration.forwardLearningSeconds + dt)
        mean += (horizontal - mean) * k
        let varying = horizontal - mean
        covariance.blend(toward: varying, weight: k)
        if varying.dot(varying) > square(DetectorConfiguration.forwardVariation * gravity) { weight += dt }
        guard t >= nextUpdate, weight >= DetectorConfiguration.forwardEvidenceSeconds else { return }
        nextUpdate = t + DetectorConfiguration.forwardUpdateSeconds
        guard let principal = covariance.principalAxis(start: axis ?? varying, orthogonalTo: up) else { return }
        // Trust it only when one horizontal direction clearly dominates.
        let major = principal.dot(covariance.apply(principal))
        let minorAxis = up.cross(principal)
        let minor = minorAxis.dot(covariance.apply(minorAxis))
        axis = major >= DetectorConfiguration.forwardDominance * minor ? principal : nil
    }

    /// The sensor can no longer split forward from sideways (a dead or silent axis): forgotten
    /// until learned again.
    mutating func forget() { axis = nil }

    /// A new upright reference: everything learned against the old one goes.
    mutating func reset() {
        covariance = SymmetricMatrix3()
        weight = 0
        mean = .zero
        axis = nil
    }
}
