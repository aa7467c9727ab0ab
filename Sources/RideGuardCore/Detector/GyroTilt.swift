// SPDX-License-Identifier: Apache-2.0
/// The tilt by the gyro: rotation integrated since the bike was last still and upright, used when
/// the accelerometer cannot see the posture (a dead axis carrying gravity, or a reading short of
/// 1 g). The gyro drifts, so the anchor must be recent; its bias is learned at rest.
struct GyroTilt: Sendable {
    private var bias = Vector3.zero
    /// The rotation since the anchor: the last still period in which the bike stood upright for a second.
    private var sinceUpright = Quaternion.identity
    private var valid = false
    private var sinceStill = Quaternion.identity
    private var anchorTime = -Double.infinity
    // The smoothed force when the current still period began, and at the anchor.
    private var forceAtStillStart = Vector3.zero
    private var forceAtAnchor = Vector3.zero

    @inline(__always) mutating func integrate(_ w: Vector3, dt: Double) {
        sinceUpright.rotate(by: (w - bias) * dt)
        sinceStill.rotate(by: (w - bias) * dt)
    }

    /// A tilt can be measured: anchored, and recently.
    func usable(at t: Double) -> Bool { valid && t - anchorTime <= DetectorConfiguration.gyroAnchorLifetimeSeconds }

    /// The rotation counts from the start of the last still period in which the bike stood upright
    /// for a second. The smoothed signals lag, so a slow fall begins while it still looks still and
    /// upright; a still period must last before it becomes the anchor.
    @inline(__always) mutating func anchor(still: Bool, stillFor: Double, upright: Bool, smoothed: Vector3, rotation: Vector3,
                                           dt: Double, t: Double) {
        if still && stillFor == 0 {
            sinceStill = .identity
            forceAtStillStart = smoothed
        }
        if still && stillFor >= DetectorConfiguration.gyroAnchorRestSeconds && upright {
            sinceUpright = sinceStill
            forceAtAnchor = forceAtStillStart
            valid = true
            anchorTime = t
            if (rotation - bias).magnitude < DetectorConfiguration.gyroBiasLimit {
                bias += (rotation - bias) * (dt / (DetectorConfiguration.gyroBiasSeconds + dt))
            }
        }
    }

    /// A new upright reference: the anchor was upright against the old one.
    mutating func invalidate() { valid = false }

    /// Gravity as read at the anchor (in full there: the bike may have leaned on its stand), turned
    /// by the rotation since: the posture including that lean, °.
    func tilt(up: Vector3) -> Double {
        let anchorMagnitude = forceAtAnchor.magnitude
        let before = UprightReference.plausible(anchorMagnitude) ? forceAtAnchor * (1 / anchorMagnitude) : up
        return acosDegrees(max(-1, min(1, up.dot(sinceUpright.inverseRotate(before)))))
    }

    /// The tilt since the anchor when a known dead axis hides part of gravity. At rest the full
    /// gravity is 1 g, so at the anchor its hidden part along the dead axis is ±√(1 − |visible|²);
    /// each sign, turned by the rotation the gyro measured since, predicts what the live axes read
    /// now. The sign whose prediction matches the reading (clearly better than the other) gives
    /// the tilt; none matching, the gyro says nothing.
    func deadAxisTilt(now: Vector3, deadReported: Vector3) -> Double? {
        guard let dead = (0..<3).first(where: { deadReported[$0] != 0 }) else { return nil }
        let anchor = forceAtAnchor / standardGravity
        let current = now / standardGravity
        var visibleNow = current
        visibleNow[dead] = 0
        let hidden = max(0, 1 - anchor.dot(anchor)).squareRoot()
        let hiddenNow = max(0, 1 - visibleNow.dot(visibleNow)).squareRoot()
        func candidate(_ sign: Double) -> (error: Double, tilt: Double) {
            var gravity = anchor
            gravity[dead] += sign * hidden
            let turned = sinceUpright.inverseRotate(gravity)
            // The live axes must read the turned gravity, and the dead one must hide what is
            // missing from 1 g now.
            var mismatch = turned - current
            mismatch[dead] = abs(turned[dead]) - hiddenNow
            let cosine = gravity.dot(turned) / max(gravity.dot(gravity), 1e-9)
            return (mismatch.magnitude, acosDegrees(max(-1, min(1, cosine))))
        }
        let plus = candidate(1), minus = candidate(-1)
        let (best, other) = plus.error <= minus.error ? (plus, minus) : (minus, plus)
        guard best.error < DetectorConfiguration.gyroTiltFitError,
              best.error < DetectorConfiguration.gyroTiltFitMargin * other.error || hidden < DetectorConfiguration.gyroTiltSmallHidden else { return nil }
        return best.tilt
    }
}
