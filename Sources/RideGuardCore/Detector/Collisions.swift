// SPDX-License-Identifier: Apache-2.0
/// Impact pulses and collisions. A pulse integrates the change of force from just before it, so
/// that neither gravity (in a wheelie or a lean) nor steady braking counts as delta-v. What a pulse
/// was follows from the physics of what caused it:
/// - A **collision** that stops a motorcycle takes away its forward speed: a large horizontal peak,
///   a large horizontal delta-v, more horizontal than vertical, and the bike at rest at once (what
///   it hit stopped it: it does not roll on and get braked to a stop).
/// - A **landing** (a jump, a drop off a ledge, a whoop) comes after a flight: the force falls to
///   about nothing while the bike is in the air. Its delta-v is vertical in the world; the frame's
///   pitch at touchdown shows part of it as horizontal, so the direction alone cannot tell it.
/// - A **hard hit** (a pothole's far edge, a bump, a kerb climbed) changes the momentum mostly
///   along the bike's up.
/// A GPS speed drop faster than any brakes with a pulse just before it is a collision too: it needs
/// no axis in particular, so it still sees a pinned collision whose pulse fell on a dead or clipped
/// axis. A GPS speed still above walking pace well after a pulse shows the bike rode on: that pulse
/// stopped nothing.
struct Collisions: Sendable {
    /// The detector's settings this needs, taken once: passing the whole configuration on every
    /// sample made the compiler copy it (272 bytes) for each call.
    private struct Limits: Sendable {
        /// `impactThresholdG`, as a squared acceleration, (m/s²)².
        var impactSquared: Double
        var collisionPeakG: Double
        var collisionDeltaV: Double
        var pulseMaximumSeconds: Double
        var reportedImpactG: Double
        var watchSeconds: Double
        var speedDrop: Double
        /// `maximumBrakingG`, m/s².
        var braking: Double
        var movingSpeed: Double

        init(_ c: DetectorConfiguration) {
            impactSquared = square(c.impactThresholdG * standardGravity)
            collisionPeakG = c.collisionPeakG
            collisionDeltaV = c.collisionDeltaV
            pulseMaximumSeconds = c.pulseMaximumSeconds
            reportedImpactG = c.reportedImpactG
            watchSeconds = c.collisionWatchSeconds
            speedDrop = c.collisionSpeedDrop
            braking = c.maximumBrakingG * standardGravity
            movingSpeed = c.movingSpeed
        }
    }

    private let limits: Limits
    private var inPulse = false
    private var pulseStart = 0.0
    private var pulseLastAbove = 0.0
    private var pulseDeltaV = Vector3.zero
    private var pulseVerticalDeltaV = 0.0
    private var pulsePeak = 0.0
    private var pulseHorizontalPeak = 0.0
    private var pulseBaseline = Vector3.zero
    private var pulseAfterFlight = 0.0
    private var lastImpactReport = -Double.infinity
    private var lastPulseEnd = -Double.infinity
    /// The force through a fast low-pass (`flightFilterSeconds`): the engine's vibration out, a
    /// flight's fall to nothing kept.
    private var quick = Vector3.zero
    private var flightStart = Double.nan
    private var lastFlightEnd = -Double.infinity
    private var lastFlightSeconds = 0.0
    /// GPS speed: the last reading and since when it has been read (a trace holds it between fixes).
    private(set) var speedReading = Double.nan
    private var speedReadingSince = Double.nan
    private var collisionTime = -Double.infinity
    /// A landing or a hard hit as strong as a collision: a crash if the bike then rests tilted.
    private var hitTime = -Double.infinity
    /// A pulse's collision (not a GPS speed drop's) is watched: the bike must be at rest at once.
    private var collisionFromPulse = false
    /// While it is: when the smoothed force last settled within `settledTolerance` (whatever GPS and
    /// the gyro say), and where. Braking to a stop moves it by 0.3 g and more; a pinned bike's lean
    /// settling, or a rider shifting on a standing bike, less.
    private var settledSince = Double.nan
    private var settledAnchor = Vector3.zero

    init(configuration: DetectorConfiguration) {
        limits = Limits(configuration)
    }

    mutating func start(_ force: Vector3) {
        quick = force
    }

    /// Feeds one sample (`smoothed`: the force before it, the pulse's baseline; `seesGravity`: the
    /// sensor reads gravity in full, so a force near nothing is a flight, not a dead axis). Returns
    /// the delta-v of a pulse that ended, m/s; reports an impact strong enough to tell.
    @inline(__always) mutating func pulse(_ a: Vector3, up: Vector3, gravity: Double, smoothed: Vector3, seesGravity: Bool,
                                          t: Double, dt: Double, emit: (DetectorEvent) -> Void) -> Double? {
        let g = standardGravity
        watchFlight(a, seesGravity: seesGravity, t: t, dt: dt)
        if collisionFromPulse { watchSettling(smoothed, t: t) }
        // Compared squared: no square root per sample.
        let dynamicVector = a - up * gravity
        let dynamicSquared = dynamicVector.dot(dynamicVector)
        if !inPulse {
            guard dynamicSquared > limits.impactSquared else { return nil }
            inPulse = true
            pulseStart = t
            pulseLastAbove = t
            pulseDeltaV = .zero
            pulseVerticalDeltaV = 0
            pulsePeak = 0
            pulseHorizontalPeak = 0
            pulseBaseline = smoothed
            // In the air now, or landed a moment ago: this pulse is the landing.
            pulseAfterFlight = !flightStart.isNaN && t - flightStart >= DetectorConfiguration.flightSeconds ? t - flightStart
                : t - lastFlightEnd <= DetectorConfiguration.landingAfterFlightSeconds ? lastFlightSeconds : 0
        }
        let change = a - pulseBaseline
        let vertical = change.dot(up)
        let horizontal = change - up * vertical
        if dynamicSquared > square(DetectorConfiguration.pulseContinuesG * g) { pulseLastAbove = t }
        pulseDeltaV += horizontal * dt
        pulseVerticalDeltaV += vertical * dt
        pulsePeak = max(pulsePeak, a.magnitude / g)
        pulseHorizontalPeak = max(pulseHorizontalPeak, horizontal.magnitude / g)
        guard t - pulseLastAbove > DetectorConfiguration.pulseEndSeconds || t - pulseStart > limits.pulseMaximumSeconds else { return nil }
        return endPulse(seesGravity: seesGravity, t: t, emit: emit)
    }

    /// The pulse ended: what it was (rarely: out of the per-sample path). Returns its delta-v.
    private mutating func endPulse(seesGravity: Bool, t: Double, emit: (DetectorEvent) -> Void) -> Double {
        inPulse = false
        lastPulseEnd = t
        let deltaV = pulseDeltaV.magnitude
        let kind: ImpactKind
        let strong = pulseHorizontalPeak >= limits.collisionPeakG && deltaV >= limits.collisionDeltaV
        if pulseAfterFlight > 0 {
            kind = .landing(flightSeconds: pulseAfterFlight)
            if strong { hitTime = t }
        } else if !strong {
            kind = .bump
        } else if seesGravity && abs(pulseVerticalDeltaV) >= DetectorConfiguration.hardHitVerticalShare * deltaV {
            // (Not with a dead axis: the up is then learned from part of gravity, and the split
            // between vertical and horizontal is not to be trusted.)
            kind = .hardHit(verticalDeltaV: abs(pulseVerticalDeltaV))
            hitTime = t
        } else {
            kind = .collision
            collisionTime = t
            collisionFromPulse = true
            settledSince = .nan
            settledAnchor = .zero
        }
        if pulsePeak >= limits.reportedImpactG && t - lastImpactReport >= DetectorConfiguration.impactReportInterval {
            lastImpactReport = t
            emit(.impact(t: pulseStart, peakG: pulsePeak, horizontalG: pulseHorizontalPeak, deltaV: deltaV, kind: kind))
        }
        return deltaV
    }

    /// A flight: the force, lightly filtered, under `freeFallG` for at least `flightSeconds`.
    @inline(__always) private mutating func watchFlight(_ a: Vector3, seesGravity: Bool, t: Double, dt: Double) {
        // dt/τ rather than dt/(τ + dt): no division per sample; the time constant is then 30–40 ms
        // from 100 Hz to 1 kHz, all the same to a flight of 0.1 s or more.
        quick += (a - quick) * min(1, dt * (1 / DetectorConfiguration.flightFilterSeconds))
        if seesGravity && quick.dot(quick) < square(DetectorConfiguration.freeFallG * standardGravity) {
            if flightStart.isNaN { flightStart = t }
        } else if !flightStart.isNaN {
            if t - flightStart >= DetectorConfiguration.flightSeconds {
                lastFlightEnd = t
                lastFlightSeconds = t - flightStart
            }
            flightStart = .nan
        }
    }

    /// A GPS speed reading. Returns the drop when it was a collision's, m/s.
    mutating func speed(_ speed: Double, t: Double) -> Double? {
        guard speed.isFinite, speed != speedReading else { return nil }
        var collision: Double?
        if speedReading.isFinite {
            // A held value is the last fix repeated: GPS gives one at least every second.
            let drop = speedReading - speed
            let interval = min(t - speedReadingSince, DetectorConfiguration.gpsFixInterval)
            if drop >= limits.speedDrop && drop > limits.braking * interval
                && t - lastPulseEnd <= DetectorConfiguration.speedDropPulseSeconds {
                collisionTime = t
                collisionFromPulse = false
                collision = drop
            }
        }
        // Ridden on: a fix taken well after the pulse still reads moving.
        if collisionFromPulse && speed > limits.movingSpeed && t - collisionTime >= DetectorConfiguration.riddenOnAfterSeconds
            && t - collisionTime <= limits.watchSeconds {
            collisionTime = -.infinity
        }
        speedReading = speed
        speedReadingSince = t
        return collision
    }

    /// Times the settling after a pulse's collision, until it is no longer watched.
    private mutating func watchSettling(_ smoothed: Vector3, t: Double) {
        guard t - collisionTime <= limits.watchSeconds else {
            collisionFromPulse = false
            return
        }
        let drifted = smoothed - settledAnchor
        if drifted.dot(drifted) <= square(DetectorConfiguration.settledTolerance) {
            if settledSince.isNaN { settledSince = t }
        } else {
            settledAnchor = smoothed
            settledSince = .nan
        }
    }

    /// A collision in the last `collisionWatchSeconds`, after which the bike came to rest at once
    /// if a pulse showed it (its sensor settled within `collisionStopSeconds`).
    @inline(__always) func collidedRecently(at t: Double) -> Bool {
        guard t - collisionTime <= limits.watchSeconds else { return false }
        return !collisionFromPulse || settledSince <= collisionTime + DetectorConfiguration.collisionStopSeconds
    }

    /// A landing or a hard hit as strong as a collision in the last `collisionWatchSeconds`.
    @inline(__always) func hitRecently(at t: Double) -> Bool {
        t - hitTime <= limits.watchSeconds
    }

    /// The crash was handled: a collision (or a hit) before it is done with.
    mutating func forgetCollision() {
        collisionTime = -.infinity
        collisionFromPulse = false
        hitTime = -.infinity
    }
}

/// What an impact pulse was, by its physics.
package enum ImpactKind: Equatable, Sendable {
    /// Horizontal, large, and it may have stopped the bike.
    case collision
    /// After a flight of this long, seconds: a jump's or a drop's landing.
    case landing(flightSeconds: Double)
    /// Mostly along the bike's up (this much delta-v, m/s): a pothole, a bump, a kerb climbed.
    case hardHit(verticalDeltaV: Double)
    /// Short of a collision's peak or delta-v.
    case bump

    /// Its name in `rideguard replay --json`.
    package var code: String {
        switch self {
        case .collision: "collision"
        case .landing: "landing"
        case .hardHit: "hard_hit"
        case .bump: "bump"
        }
    }

    /// In words, for the journal and `replay`.
    package var summary: String {
        switch self {
        case .collision: "a collision if the bike is at rest at once"
        case .landing(let flight): "a landing after \(DecimalFormat.string(flight, decimals: 2)) s in the air, not a collision"
        case .hardHit(let vertical): "a hard hit along the bike's up (\(DecimalFormat.string(vertical, decimals: 1)) m/s), not a collision"
        case .bump: "a bump, not a collision"
        }
    }
}
