// SPDX-License-Identifier: Apache-2.0
/// Decides, sample by sample, whether the bike has gone down. Pure and allocation-free per sample.
///
/// What it relies on (independent of mounting, rate and gyro):
/// - **Posture.** In riding, even leaned over in a turn, the specific force stays along the bike's
///   own up axis, so its long-run direction *is* the bike's up (`UprightReference`).
/// - **Stillness.** Two cascaded low-pass stages remove engine and road vibration (`Smoothing`); the
///   bike is still while the smoothed force (and rotation, with a gyro) stays where it settled
///   (`Stillness`).
/// - **Collision.** A pulse of horizontal acceleration with a large delta-v (a hard stop in a
///   fraction of a second), then rest, even when the bike stays pinned upright (`Collisions`).
///
/// It is a composition of small state machines, each with its own state: the smoothing, the
/// stillness, the upright reference and the forward axis (`ForwardAxis`), the gyro's tilt
/// (`GyroTilt`), impacts and collisions, how the posture left upright (`FallWatch`), riding windows
/// (`RidingSpell`), the dead-axis watch (`AxisWatch`), the evidence of the last seconds
/// (`Evidence`) and who is with the bike (`Parking`). This type feeds them in order and decides.
package struct CrashDetector: Sendable {
    /// What the detector is doing now, for status displays and reports.
    package enum Phase: String, Sendable {
        case learning, moving, still, lying, crashed
    }

    /// Who is with the bike, from the physics: `riding` (moving with the engine or the road shaking
    /// it, or GPS speed), `stopped` (still, a rider on it at lights or in a queue), `parked` (still,
    /// no engine, no GPS speed for `parkedAfterSeconds`, or the ignition off): nobody is riding, and
    /// a fall is a `parked_fall`.
    package enum Context: String, Sendable {
        case riding, stopped, parked
    }

    package let configuration: DetectorConfiguration

    private var smoothing = Smoothing()
    private var stillness = Stillness()
    private var upright: UprightReference
    private var forwardAxis = ForwardAxis()
    private var gyroTilt = GyroTilt()
    private var collisions: Collisions
    private var falls = FallWatch()
    private var spell = RidingSpell()
    private var axes = AxisWatch()
    private var evidence = Evidence()
    private var parking = Parking()

    // Non-physical samples dropped since the last report.
    private var nonPhysical = 0
    private var lastNonPhysicalReport = -Double.infinity
    private var lastT = Double.nan
    private var lyingSince = Double.nan

    // Crash state.
    package private(set) var phase = Phase.learning
    private var crashed = false
    private var uprightSince = Double.nan

    /// Posture in degrees relative to the learned up (0 upright, 90 on its side, 180 upside down).
    package private(set) var postureDegrees = 0.0

    /// The learned reference: the smoothed force of the upright bike, m/s².
    package var reference: Vector3? { upright.force }
    /// The bike's up in the sensor frame, once learned.
    package var up: Vector3? { upright.force?.normalized }
    /// Gravity as this sensor reads it (its scale).
    package var gravity: Double { upright.gravity }
    /// The bike's forward axis in the sensor frame, once riding showed it.
    package var forward: Vector3? { forwardAxis.axis }
    package var context: Context { parking.context }
    /// The ignition input, where one is wired.
    package var ignition: Bool? { parking.ignition }

    /// What the detector sees now, for `replay --state-every`, status displays and reports.
    package struct State: Sendable {
        package var phase: Phase
        package var postureDegrees: Double
        /// Smoothed acceleration magnitude, in g.
        package var smoothedG: Double
        /// How long the smoothed signals have been steady, seconds.
        package var stillSeconds: Double
        package var forwardKnown: Bool
        package var gravity: Double
        package var context: Context
        /// Riding has confirmed the upright reference (or a calibration gave it).
        package var uprightConfirmed: Bool
    }

    /// The current state at the last sample's time.
    package var state: State {
        State(phase: phase, postureDegrees: postureDegrees, smoothedG: smoothing.force.magnitude / standardGravity,
              stillSeconds: stillness.since.isNaN ? 0 : lastT - stillness.since, forwardKnown: forwardAxis.axis != nil,
              gravity: upright.gravity, context: parking.context, uprightConfirmed: upright.confirmed)
    }

    package init(configuration: DetectorConfiguration = DetectorConfiguration()) {
        self.configuration = configuration
        upright = UprightReference(configuration: configuration)
        collisions = Collisions(configuration: configuration)
    }

    /// The ignition input changed (where one is wired): off, the bike is parked at once; on, a ride
    /// may begin. `nil` forgets it (the line was lost): the physics decide alone again.
    package mutating func setIgnition(_ on: Bool?) {
        parking.setIgnition(on)
    }

    /// Brings the detector back to watching after a handled crash (the rider said "I'm fine").
    package mutating func rearm() {
        crashed = false
        stillness.forget()
        lyingSince = .nan
        collisions.forgetCollision()
    }

    /// Feeds one sample; `emit` is called for each event it causes (rarely more than one). A
    /// non-physical sample is dropped and reported (once a second at most, with a count): one
    /// corrupt value must not poison the filters and hide the next crash.
    package mutating func process(_ incoming: IMUSample, emit: (DetectorEvent) -> Void) {
        var sample = incoming
        let t = sample.t
        if let speed = sample.speed, !(speed.isFinite && speed >= 0 && speed < DetectorConfiguration.largestSpeed) { sample.speed = nil }
        guard t.isFinite, Self.physical(sample.accel, DetectorConfiguration.largestAcceleration),
              sample.gyro.map({ Self.physical($0, DetectorConfiguration.largestRotation) }) ?? true,
              lastT.isNaN || t - lastT <= DetectorConfiguration.largestSampleGap else {
            nonPhysical += 1
            if !(lastNonPhysicalReport + DetectorConfiguration.faultReportInterval > t) || !t.isFinite {
                emit(.sensorFault(t: t.isFinite ? t : lastT, fault: .nonPhysical(count: nonPhysical)))
                nonPhysical = 0
                if t.isFinite { lastNonPhysicalReport = t }
            }
            return
        }
        if lastT.isNaN {
            start(with: sample)
            return
        }
        let dt = t - lastT
        if dt <= 0 {
            emit(.sensorFault(t: t, fault: dt == 0 ? .duplicateTime : .timeWentBackwards(by: -dt)))
            return
        }
        if dt > configuration.gapSeconds { emit(.sensorFault(t: t, fault: .gap(seconds: dt))) }
        lastT = t

        smoothing.add(sample, alpha: dt / (configuration.smoothingSeconds + dt))
        let smoothed = smoothing.force
        let a = sample.accel
        if axes.watch(a, smoothed: smoothed, t: t, dt: dt, emit: emit) { forwardAxis.forget() }
        evidence.record(sample, t: t, configuration: configuration)
        if let w = sample.gyro { gyroTilt.integrate(w, dt: dt) }

        // The reference's magnitude once a sample (learning the up and the forward axis need it too).
        guard upright.force != nil, upright.magnitude > 1e-9 else {
            if let direction = upright.learnFirst(smoothed, t: t, emit: emit) {
                phase = .moving
                emit(.uprightLearned(t: t, up: direction))
            }
            return
        }
        let up = upright.up
        let gravity = upright.gravity

        // Posture: the angle between the reference and the current smoothed force.
        let cosine = upright.postureCosine(smoothed)
        postureDegrees = acosDegrees(cosine)
        let magnitude = smoothed.magnitude
        // At rest a healthy sensor reads its gravity; reading clearly less means part of gravity is
        // hidden (a dead axis, or free fall): the split into forward and sideways is then unreliable.
        let degenerate = !upright.inFull
        let uncertain = magnitude < DetectorConfiguration.uncertainForceShare * gravity || degenerate || axes.deadAxis
        if uncertain && gyroTilt.usable(at: t) {
            // How far gravity has turned since the bike was last still and upright, by the gyro.
            // With a known dead axis, gravity at the anchor is rebuilt around it and the result must
            // also match what the live axes read now, which a turn (force along the bike, not
            // gravity) does not. Otherwise the gyro only settles a tilt the accelerometer already
            // sees as large but ambiguous: it measures the geometric lean, which in a steady turn is
            // large while the force stays along the bike, and needs a trustworthy vertical.
            if axes.deadAxis {
                // Only after a rotation as fast as a fall (riding turns and stops stay far below):
                // over a long stop the integrated bias alone would tilt the rebuilt gravity.
                let fellFast = evidence.peakRotation >= DetectorConfiguration.deadAxisFallRotation
                if fellFast, let tilt = gyroTilt.deadAxisTilt(now: smoothed, deadReported: axes.deadReported) {
                    postureDegrees = max(postureDegrees, tilt)
                }
            } else if !degenerate && postureDegrees >= DetectorConfiguration.gyroTiltFromDegrees {
                postureDegrees = max(postureDegrees, gyroTilt.tilt(up: up))
            }
        }
        if falls.watch(postureDegrees: postureDegrees, evidence: evidence, t: t, configuration: configuration) { spell.reset() }
        // A bike that went over as a fall does lies from `fallenLyingAngleDegrees` (the upright may be
        // the side stand's lean, or a pushed bike's). Short of the lying angle it must rest for
        // `ambiguousRestConfirmationSeconds`: a held wheelie reads 45–55° and gets there as fast, but
        // is never held still that long. (Not with a dead axis, whose posture is only a bound.)
        let lowered = falls.fellSinceUpright && !degenerate && !axes.deadAxis
        let lying = isLying(cosine: cosine, uncertain: uncertain,
                            from: lowered ? configuration.fallenLyingAngleDegrees : configuration.lyingAngleDegrees)

        if let deltaV = collisions.pulse(a, up: up, gravity: gravity, smoothed: smoothed, seesGravity: !degenerate && !axes.deadAxis,
                                         t: t, dt: dt, emit: emit) {
            evidence.add(deltaV: deltaV)
            // A blow to a parked bike (a car's bump) hits nobody, whatever the context reads after
            // it (rocked on its stand, it may seem moved about).
            if parking.nobodyRiding { collisions.forgetCollision() }
        }
        if let speed = sample.speed, let drop = collisions.speed(speed, t: t) { evidence.add(deltaV: drop) }
        let still = stillness.update(smoothing, hasGyro: sample.gyro != nil, speed: sample.speed, t: t, configuration: configuration)
        let shaking = axes.strongest >= configuration.engineVibrationG * standardGravity
        let gpsMoving = (sample.speed ?? 0) > configuration.movingSpeed
        if watchRiding(shaking: shaking, still: still, gpsMoving: gpsMoving, magnitude: magnitude, up: up,
                       cosine: cosine, referencePlausible: !degenerate, t: t, dt: dt, emit: emit) {
            return
        }
        parking.update(still: still, shaking: shaking, gpsMoving: gpsMoving, lying: lying,
                       riding: spell.movingSeconds > 0 && (gpsMoving || !still || stillness.began(within: DetectorConfiguration.recentlyMovedSeconds, of: t)),
                       t: t, configuration: configuration)

        if crashed {
            watchForRearm(still: still, magnitude: magnitude, t: t, emit: emit)
            return
        }

        if lying {
            if lyingSince.isNaN { lyingSince = t }
        } else {
            lyingSince = .nan
            upright.learn(smoothed, magnitude: magnitude, up: up, plausible: !degenerate, still: still, dt: dt, activity: axes.activity,
                          rotation: smoothing.rotation, speed: collisions.speedReading, configuration: configuration)
            forwardAxis.learn(smoothing.force, up: up, gravity: upright.gravity,
                              usable: !degenerate && !axes.deadAxis && !axes.silentAxis && axes.strongest > DetectorConfiguration.ridingVibration,
                              dt: dt, t: t)
        }

        let stillFor = still ? t - stillness.since : 0
        if sample.gyro != nil {
            gyroTilt.anchor(still: still, stillFor: stillFor, upright: postureDegrees < DetectorConfiguration.uprightDegrees && !lying,
                            smoothed: smoothed, rotation: smoothing.rotation, dt: dt, t: t)
        }
        if stillFor >= DetectorConfiguration.deficientRestSeconds && (magnitude < DetectorConfiguration.uncertainForceShare * upright.gravity || degenerate) {
            axes.sawDeficientRestNow()
        }
        if parking.nobodyRiding {
            // Nobody is riding: a fall is the parked bike's, never a crash; a bump is no collision.
            watchParked(lying: lying, still: still, stillFor: stillFor, uncertain: uncertain, magnitude: magnitude, t: t, emit: emit)
            return
        }
        if !upright.confirmed && !falls.fellSinceUpright {
            // The reference may be a bike lying on its side (started lying, stored, carried): lifted,
            // it would seem to lie. Until riding confirms it only a fall into lying (the swing of a
            // bike going over under its own weight, not a lift) or a collision raises a crash.
            if collisions.collidedRecently(at: t) && still && stillFor >= configuration.collisionRestSeconds {
                declareCrash(.collisionThenStill, t: t, stillFor: stillFor, emit: emit)
                return
            }
            phase = lying ? .lying : (still ? .still : .moving)
            return
        }
        if lying && still {
            // Uncertain postures wait longer (free fall cannot last that long). A reference far from 1 g
            // also needs a clearer angle, or a longer rest: there hard braking can look like a large
            // tilt for a few seconds. So does a turn toward a dead axis (the force reads well under
            // 1 g): pitch and roll look alike there, and a held wheelie (45–55°, read larger through
            // the two live axes) short of `wheelieMaximumDegrees` stays up for 3–4 s. A GPS speed on the
            // sample (a fix under 3 s old; the agent gives none older) at walking pace rules out
            // both: braking from it ends within 0.2 s, a wheelie needs speed, and any faster fix
            // during the rest would have ended the stillness.
            let needed = restNeeded(uncertain: uncertain)
            let hiddenTurn = axes.deadAxis && magnitude < DetectorConfiguration.uncertainForceShare * gravity
                && postureDegrees < configuration.wheelieMaximumDegrees
            let angleClear = !degenerate || postureDegrees >= max(configuration.lyingAngleDegrees, DetectorConfiguration.clearDeadAxisLyingDegrees)
            let clear = sample.speed != nil || (angleClear && !hiddenTurn) || stillFor >= configuration.ambiguousRestConfirmationSeconds
            if clear && restedLying(stillFor: stillFor, needed: needed, t: t) {
                declareCrash(.lyingStill, t: t, stillFor: stillFor, emit: emit)
                return
            }
        } else if still && postureDegrees >= configuration.lyingAngleDegrees && stillFor >= configuration.ambiguousRestConfirmationSeconds {
            // Past the lying angle but about the pitch axis: a wheelie moves, and is never held
            // still for seconds. A bike that came to rest that far over has gone down, whatever
            // the learned forward axis says (it can be wrong after a short ride).
            declareCrash(.lyingStill, t: t, stillFor: stillFor, emit: emit)
            return
        }
        if collisions.collidedRecently(at: t) && still && stillFor >= configuration.collisionRestSeconds {
            declareCrash(.collisionThenStill, t: t, stillFor: stillFor, emit: emit)
            return
        }
        // A landing or a hard hit is no collision while the bike stays about upright (the rider on
        // it, or on its side stand); one that leaves it resting tilted was a crash.
        if collisions.hitRecently(at: t) && still && stillFor >= configuration.collisionRestSeconds
            && postureDegrees >= DetectorConfiguration.tiltedAfterHitDegrees {
            declareCrash(.collisionThenStill, t: t, stillFor: stillFor, emit: emit)
            return
        }
        phase = lying ? .lying : (still ? .still : .moving)
    }

    // MARK: - Steps

    private static func physical(_ v: Vector3, _ limit: Double) -> Bool {
        abs(v.x) <= limit && abs(v.y) <= limit && abs(v.z) <= limit   // false for NaN too
    }

    private mutating func start(with sample: IMUSample) {
        lastT = sample.t
        smoothing.start(sample)
        collisions.start(sample.accel)
        stillness.start(sample)
        upright.start(at: sample.t)
        evidence.start(at: sample.t)
        axes.start(at: sample.t)
        if upright.force != nil { phase = .moving }
    }

    /// Lying: far from upright, and tilted sideways (a wheelie tilts as far, but about the pitch
    /// axis) or upside down. Before the forward axis is known, or when the reading is uncertain,
    /// any large tilt counts: better a countdown the rider cancels than a fall not seen.
    // Inlined: called on the detector's own (inout) value, a call copied all of it first.
    @inline(__always) private func isLying(cosine: Double, uncertain: Bool, from angle: Double) -> Bool {
        guard postureDegrees >= angle else { return false }
        guard let forward = forwardAxis.axis, !uncertain, postureDegrees < configuration.wheelieMaximumDegrees else { return true }
        let longitudinal = smoothing.force.dot(forward) / upright.gravity
        // What is not vertical or longitudinal is sideways; inferring it keeps a dead lateral axis
        // from hiding that the bike lies on its side.
        let lateral = max(0, 1 - cosine * cosine - longitudinal * longitudinal).squareRoot()
        return lateral >= DetectorConfiguration.sidewaysShare * abs(longitudinal)
    }

    private mutating func declareCrash(_ reason: CrashEvidence.Reason, t: Double, stillFor: Double,
                                       emit: (DetectorEvent) -> Void) {
        crashed = true
        phase = .crashed
        uprightSince = .nan
        emit(.crashDetected(t: t, evidence: evidence.crash(reason, postureDegrees: postureDegrees, stillFor: stillFor, lyingSince: lyingSince)))
    }

    /// Riding spells confirm the provisional reference, or replace one that riding contradicts: the
    /// bike cannot be ridden lying down. A window (`RidingSpell`) lasts `ridingConfirmationSeconds`
    /// of moving while the reference is provisional, `relearnRidingSeconds` once confirmed; it counts
    /// only when consistent. Within 30° of the reference it confirms it; elsewhere it replaces it.
    /// Replacing it ends a crash and a parked bike's fall. Returns true when replaced.
    @inline(__always) private mutating func watchRiding(shaking: Bool, still: Bool, gpsMoving: Bool, magnitude: Double, up: Vector3,
                                                        cosine: Double, referencePlausible: Bool,
                                                        t: Double, dt: Double, emit: (DetectorEvent) -> Void) -> Bool {
        // A fallen bike shakes (a wheel turning, hands on it) but is not ridden: no window begins within
        // `fallSettleSeconds` of a fall, nor before the fall's crash (or parked fall) is declared.
        if t - falls.fallTime < configuration.fallSettleSeconds || (falls.fellSinceUpright && !crashed && !parking.downWhileParked) {
            if spell.started { spell.reset() }
            return false
        }
        let active = shaking || gpsMoving || !still
        // Whatever the live axes read (with a dead axis carrying gravity, riding may read far less
        // than 1 g), short of a direction lost in noise or a blow.
        guard spell.goesOn(active: active, t: t), active, magnitude > DetectorConfiguration.spellSmallestForceG * standardGravity,
              magnitude < DetectorConfiguration.steadyForceMaximum * upright.gravity else { return false }
        // During a crash or a parked fall only GPS speed counts: hands on a lying bike move it and shake
        // it as riding does, and a crash ends only when the bike is seen upright again (or ridden).
        let moving = fallInProgress ? gpsMoving
            : gpsMoving || !still || stillness.began(within: DetectorConfiguration.recentlyMovedSeconds, of: t)
        // A crash or a parked fall in progress takes the long window, as a confirmed reference does.
        let needed = upright.confirmed || fallInProgress ? configuration.relearnRidingSeconds : configuration.ridingConfirmationSeconds
        guard let window = spell.add(direction: smoothing.force / magnitude, force: smoothing.force, cosine: cosine, moving: moving,
                                     needed: needed, dt: dt) else { return false }
        return judge(window, up: up, referencePlausible: referencePlausible, t: t, emit: emit)
    }

    /// What a closed riding window says of the upright reference. Returns true when it replaced it.
    private mutating func judge(_ window: RidingSpell.Window, up: Vector3, referencePlausible: Bool, t: Double,
                                emit: (DetectorEvent) -> Void) -> Bool {
        let gravity = upright.gravity
        // Riding's force averages to at least 1 g along the bike's up: a window that reads about
        // 1 g in full (0.95 g or more hides at most 18° on a dead axis) shows the up; less, only
        // part of it.
        let shownInFull = window.consistent && window.magnitude >= DetectorConfiguration.fullGravityShown * standardGravity
            && UprightReference.plausible(window.magnitude)
        if !referencePlausible || !UprightReference.plausible(window.magnitude) {
            // The reference or the window shown only in part (a dead axis carries gravity). Riding
            // shown in full replaces a partial reference, wherever it points. Otherwise the
            // directions say little (braking, accelerating and turns spread a small visible force
            // widely, and the visible part of a lying bike's gravity may point along its up): the
            // posture does. Within 30° in both halves of the window it confirms the reference (a
            // lift followed by a stand does not).
            if shownInFull {
                replaceReference(with: window.direction * gravity, t: t, emit: emit)
                return true
            }
            if min(window.halfCosines.0, window.halfCosines.1) >= DetectorConfiguration.confirmCosine {
                // Each riding window also gives the up itself to a reference shown in part, which
                // nothing else refines: learned at rest (on the side stand, 10-20° off) it would hide
                // that much of every fall (a lowside read lying at 53° for 70°); a first window
                // closed during a lift is mostly the lying bike's (a crash read 15° for 90°). (The
                // forward axis and horizontal statistics are not learned from a reference shown in
                // part, so nothing learned against the old one stays.)
                if !referencePlausible && window.magnitude > DetectorConfiguration.smallestDirectionG * standardGravity {
                    upright.refinePartial(window.force)
                }
                upright.confirm()
                return false
            }
            // Ridden far from a reference shown in full (in both halves of the window), reading
            // clearly less than 1 g: the dead axis carries gravity in the riding posture, and the reference was
            // learned in another one (a bike started lying). The bike cannot be ridden lying:
            // riding's mean force, shown in part, is the reference now, as if the agent had started
            // upright with this sensor.
            // (Not a force too small to point anywhere: the same 0.05 g floor as the first reference.)
            if referencePlausible && window.magnitude < DetectorConfiguration.uncertainForceShare * gravity
                && window.magnitude > DetectorConfiguration.smallestDirectionG * standardGravity
                && max(window.halfCosines.0, window.halfCosines.1) < DetectorConfiguration.confirmCosine {
                replaceReference(with: window.force, t: t, emit: emit)
                return true
            }
            return false
        }
        guard window.consistent else { return false }
        if window.direction.dot(up) >= DetectorConfiguration.confirmCosine {
            upright.confirm()
            return false
        }
        // Elsewhere: with a healthy sensor about 1 g replaces it; with a dead axis, only what is
        // shown in full is the bike's up.
        // (The window reads about 1 g here: the branch above took every other.)
        guard !axes.deadAxis || shownInFull else { return false }
        replaceReference(with: window.direction * gravity, t: t, emit: emit)
        return true
    }

    /// Riding contradicted the reference: this one replaces it, confirmed. A crash or a parked bike's
    /// fall in progress goes on until the bike is seen upright against it for `rearmSeconds`.
    private mutating func replaceReference(with force: Vector3, t: Double, emit: (DetectorEvent) -> Void) {
        upright.replace(with: force)
        forwardAxis.reset()
        gyroTilt.invalidate()
        lyingSince = .nan
        uprightSince = .nan
        // A bike laid down (or lifted) while parked was no fall: the ride that replaced the reference ends it.
        if !parking.fallReported { parking.downWhileParked = false }
        emit(.uprightLearned(t: t, up: force.normalized ?? force))
        if !crashed { phase = .moving }
    }

    /// How long a lying bike must be still: longer when the reading is uncertain, longer still short
    /// of the lying angle (a fall's rest from `fallenLyingAngleDegrees`).
    private func restNeeded(uncertain: Bool) -> Double {
        if postureDegrees < configuration.lyingAngleDegrees { return configuration.ambiguousRestConfirmationSeconds }
        return uncertain ? configuration.lowMagnitudeRestConfirmationSeconds : configuration.restConfirmationSeconds
    }

    /// Lying and still for `needed` seconds, a crash's or a parked fall's rest. A fall lies down
    /// before it comes to rest; a posture that passes the lying angle while the force stays still
    /// (the gyro's tilt on a dead axis, turned by a rotation the live axes never saw) must last the
    /// whole wait itself.
    private func restedLying(stillFor: Double, needed: Double, t: Double) -> Bool {
        let lyingNeeded = lyingSince > stillness.since ? needed : min(needed, configuration.restConfirmationSeconds)
        return stillFor >= needed && t - lyingSince >= lyingNeeded
    }

    /// A crash or a parked bike's fall is in progress: it ends when the bike is seen upright again.
    private var fallInProgress: Bool { crashed || parking.fallReported }

    /// A fall, not a person's hands, in the last 10–20 s: a rotation as fast as a falling bike's
    /// (150–300 °/s before it lands; a person lowers or lifts one at a few tens), by the gyro or by
    /// the posture's own speed, or a landing.
    private var fellLikeAFall: Bool {
        evidence.peakRotation * 180 / Double.pi >= configuration.parkedFallRotationDegreesPerSecond
            || lastT - falls.fastTiltTime <= DetectorConfiguration.fellLikeAFallSeconds
            || evidence.peakG >= configuration.parkedFallPeakG
    }

    /// Upright against the reference: it reads what the learned reference read (less than 1 g when a
    /// dead axis hides part).
    private func standsUpright(magnitude: Double) -> Bool {
        postureDegrees < DetectorConfiguration.rearmUprightDegrees
            && magnitude > DetectorConfiguration.rearmForceShare * min(upright.gravity, upright.force?.magnitude ?? upright.gravity)
    }

    /// A parked bike lying still went down: a fall (fast rotation, or a landing) is a `parked_fall`,
    /// reported once; a person laying it down is nothing. Upright again for `rearmSeconds` ends it.
    private mutating func watchParked(lying: Bool, still: Bool, stillFor: Double, uncertain: Bool, magnitude: Double,
                                      t: Double, emit: (DetectorEvent) -> Void) {
        if parking.downWhileParked {
            if standsUpright(magnitude: magnitude) {
                if uprightSince.isNaN { uprightSince = t }
                if t - uprightSince >= configuration.rearmSeconds {
                    parking.downWhileParked = false
                    parking.fallReported = false
                }
            } else {
                uprightSince = .nan
            }
        } else if lying && still {
            let needed = restNeeded(uncertain: uncertain)
            if restedLying(stillFor: stillFor, needed: needed, t: t) {
                parking.downWhileParked = true
                uprightSince = .nan
                if fellLikeAFall {
                    parking.fallReported = true
                    emit(.parkedFall(t: t, evidence: evidence.crash(.lyingStill, postureDegrees: postureDegrees, stillFor: stillFor,
                                                                    lyingSince: lyingSince)))
                }
            }
        }
        phase = lying ? .lying : (still ? .still : .moving)
    }

    /// After a crash: upright and not lying still for `rearmSeconds` re-arms.
    private mutating func watchForRearm(still: Bool, magnitude: Double, t: Double, emit: (DetectorEvent) -> Void) {
        if standsUpright(magnitude: magnitude) {
            if uprightSince.isNaN { uprightSince = t }
            if t - uprightSince >= configuration.rearmSeconds {
                rearm()
                phase = .moving
                emit(.rearmed(t: t))
            }
        } else {
            uprightSince = .nan
        }
    }
}
