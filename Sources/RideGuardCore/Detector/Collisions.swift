// SPDX-License-Identifier: Apache-2.0
/// Impact pulses and collisions. A pulse integrates the horizontal change of force from just
/// before it, so that neither gravity (in a wheelie or a lean) nor steady braking counts as
/// delta-v; a large horizontal peak with a large delta-v is a collision. So is a GPS speed drop
/// faster than any brakes with a pulse just before it: it needs no axis in particular, so it still
/// sees a pinned collision whose pulse fell on a dead or clipped axis.
struct Collisions: Sendable {
    private var inPulse = false
    private var pulseStart = 0.0
    private var pulseLastAbove = 0.0
    private var pulseDeltaV = Vector3.zero
    private var pulsePeak = 0.0
    private var pulseHorizontalPeak = 0.0
    private var pulseBaseline = Vector3.zero
    private var lastImpactReport = -Double.infinity
    private var lastPulseEnd = -Double.infinity
    /// GPS speed: the last reading and since when it has been read (a trace holds it between fixes).
    private(set) var speedReading = Double.nan
    private var speedReadingSince = Double.nan
    private var collisionTime = -Double.infinity

    /// Feeds one sample (`smoothed`: the force before it, the pulse's baseline). Returns the delta-v
    /// of a pulse that ended, m/s; reports an impact strong enough to tell.
    @inline(__always) mutating func pulse(_ a: Vector3, up: Vector3, gravity: Double, smoothed: Vector3, t: Double, dt: Double,
                                          configuration: DetectorConfiguration, emit: (DetectorEvent) -> Void) -> Double? {
        let g = standardGravity
        // Compared squared: no square root per sample.
        let dynamicVector = a - up * gravity
        let dynamicSquared = dynamicVector.dot(dynamicVector)
        if !inPulse {
            guard dynamicSquared > square(configuration.impactThresholdG * g) else { return nil }
            inPulse = true
            pulseStart = t
            pulseLastAbove = t
            pulseDeltaV = .zero
            pulsePeak = 0
            pulseHorizontalPeak = 0
            pulseBaseline = smoothed
        }
        let change = a - pulseBaseline
        let horizontal = change - up * change.dot(up)
        if dynamicSquared > square(DetectorConfiguration.pulseContinuesG * g) { pulseLastAbove = t }
        pulseDeltaV += horizontal * dt
        pulsePeak = max(pulsePeak, a.magnitude / g)
        pulseHorizontalPeak = max(pulseHorizontalPeak, horizontal.magnitude / g)
        guard t - pulseLastAbove > DetectorConfiguration.pulseEndSeconds || t - pulseStart > configuration.pulseMaximumSeconds else { return nil }
        inPulse = false
        lastPulseEnd = t
        let deltaV = pulseDeltaV.magnitude
        if pulseHorizontalPeak >= configuration.collisionPeakG && deltaV >= configuration.collisionDeltaV {
            collisionTime = t
        }
        if pulsePeak >= configuration.reportedImpactG && t - lastImpactReport >= DetectorConfiguration.impactReportInterval {
            lastImpactReport = t
            emit(.impact(t: pulseStart, peakG: pulsePeak, horizontalG: pulseHorizontalPeak, deltaV: deltaV))
        }
        return deltaV
    }

    /// A GPS speed reading. Returns the drop when it was a collision's, m/s.
    mutating func speed(_ speed: Double, t: Double, configuration: DetectorConfiguration) -> Double? {
        guard speed.isFinite, speed != speedReading else { return nil }
        var collision: Double?
        if speedReading.isFinite {
            // A held value is the last fix repeated: GPS gives one at least every second.
            let drop = speedReading - speed
            let interval = min(t - speedReadingSince, DetectorConfiguration.gpsFixInterval)
            if drop >= configuration.collisionSpeedDrop && drop > configuration.maximumBrakingG * standardGravity * interval
                && t - lastPulseEnd <= DetectorConfiguration.speedDropPulseSeconds {
                collisionTime = t
                collision = drop
            }
        }
        speedReading = speed
        speedReadingSince = t
        return collision
    }

    /// A collision in the last `collisionWatchSeconds`.
    func collidedRecently(at t: Double, configuration: DetectorConfiguration) -> Bool {
        t - collisionTime <= configuration.collisionWatchSeconds
    }

    /// The crash was handled: a collision before it is done with.
    mutating func forgetCollision() { collisionTime = -.infinity }
}
