/// Decides, sample by sample, whether the bike has gone down. Pure and allocation-free per sample.
///
/// What it relies on (independent of mounting, rate and gyro):
/// - **Posture.** In riding, even leaned over in a turn, the specific force stays along the bike's
///   own up axis, so its long-run direction *is* the bike's up. The detector learns that reference
///   and measures the posture as the angle whose cosine is the smoothed force projected on it,
///   divided by the gravity learned at rest. Dividing by learned gravity, not by the measured
///   magnitude, keeps the posture right when a dead axis carries part of gravity.
/// - **Stillness.** Two cascaded low-pass stages remove engine and road vibration; the bike is
///   still while the smoothed force (and rotation, with a gyro) stays where it settled.
/// - **Collision.** A pulse of horizontal acceleration with a large delta-v (a hard stop in a
///   fraction of a second), then rest, even when the bike stays pinned upright.
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

    // Learned reference: the smoothed force of the upright bike (m/s²). Its magnitude is about 1 g
    // for a healthy sensor and less when a dead axis carries part of gravity.
    package private(set) var reference: Vector3? { didSet { referenceChanged() } }
    /// The bike's up in the sensor frame, once learned.
    package var up: Vector3? { reference?.normalized }
    /// Gravity as this sensor reads it (its scale), used to express readings in g.
    package private(set) var gravity = standardGravity { didSet { referenceChanged() } }
    // Kept with the reference and gravity (they change far less often than samples come): 1/g, the
    // reference in g, and the most a dead axis can hide of it, √(1−|m_ref|²).
    private var perG = 1 / standardGravity
    private var referenceInG = Vector3.zero
    private var hiddenReference = 0.0
    private var learningSum = Vector3.zero
    private var learningStart = Double.nan
    private var learningCount = 0
    private var uprightLearnedSeconds = 0.0

    // Forward axis: the principal direction of the horizontal force while riding (braking and
    // accelerating; turns add none because they are coordinated). Kept as a covariance.
    private var horizontalCovariance = SymmetricMatrix3()
    private var horizontalWeight = 0.0
    private var horizontalMean = Vector3.zero
    package private(set) var forward: Vector3?
    private var nextForwardUpdate = 0.0

    // Non-physical samples dropped since the last report.
    private var nonPhysical = 0
    private var lastNonPhysicalReport = -Double.infinity

    // Filters.
    private var lastT = Double.nan
    private var smoothed1 = Vector3.zero
    private var smoothed = Vector3.zero
    private var gyroSmoothed1 = Vector3.zero
    private var gyroSmoothed = Vector3.zero

    // Stillness: where the smoothed signals settled and since when.
    private var stillAnchor = Vector3.zero
    private var gyroStillAnchor = Vector3.zero
    private var stillSince = Double.nan
    private var lyingSince = Double.nan

    // Impact pulse in progress.
    private var inPulse = false
    private var pulseStart = 0.0
    private var pulseLastAbove = 0.0
    private var pulseDeltaV = Vector3.zero
    private var pulsePeak = 0.0
    private var pulseHorizontalPeak = 0.0
    private var pulseBaseline = Vector3.zero
    private var lastImpactReport = -Double.infinity
    private var lastPulseEnd = -Double.infinity

    // GPS speed: the last reading and since when it has been read (a trace holds it between fixes).
    private var speedReading = Double.nan
    private var speedReadingSince = Double.nan
    private var collisionTime = -Double.infinity

    // Evidence over the last 20 s (two 10 s buckets).
    private var bucketStart = -Double.infinity
    private var recent = EvidenceBucket()
    private var previous = EvidenceBucket()

    // Dead-axis watch.
    private var activity = Vector3.zero
    /// The most vibration each axis has shown while the frame shook, and for how many seconds it
    /// shook (both sampled once a second).
    private var activityPeak = Vector3.zero
    private var shakenSeconds = 0
    /// An axis has shown almost none of the vibration the others carry: it is dead, reported yet or not.
    private var silentAxis = false
    private var smoothedMinimum = Vector3(.infinity, .infinity, .infinity)
    private var smoothedMaximum = Vector3(-.infinity, -.infinity, -.infinity)
    private var deadReported = Vector3.zero
    private var nextAxisCheck = 0.0
    /// A rest where the sensor read clearly less than its gravity: evidence that an axis is missing.
    private var sawDeficientRest = false
    private var startTime = 0.0

    // Gyro tilt: rotation integrated since the bike was last still and upright, used when the
    // accelerometer cannot see the posture (a dead axis carrying gravity).
    private var gyroBias = Vector3.zero
    private var rotationSinceUpright = Quaternion.identity
    private var gyroTiltValid = false
    private var rotationSinceStill = Quaternion.identity
    private var gyroAnchorTime = -Double.infinity
    // The smoothed force when the current still period began, and at the gyro anchor.
    private var forceAtStillStart = Vector3.zero
    private var forceAtAnchor = Vector3.zero

    // Crash state.
    package private(set) var phase = Phase.learning
    private var crashed = false
    private var uprightSince = Double.nan

    // The reference learned at start is provisional until riding confirms (or replaces) it. A riding
    // spell lasts while the engine or the road shakes the frame (or GPS says moving), with breaks of
    // at most 2 s; its moving samples add up the force's direction.
    private var referenceConfirmed = false
    private var spellLastShaken = -Double.infinity
    private var spellDirection = Vector3.zero
    private var spellForce = Vector3.zero
    private var spellCosine = 0.0
    private var spellSeconds = 0.0
    private var spellMovingSeconds = 0.0
    /// The sums when the window was half way (in moving seconds): both halves must agree.
    private var spellHalf: (direction: Vector3, cosine: Double, seconds: Double)?

    // Context: parked after a quiet stillness, until the engine, GPS or moving about says otherwise.
    package private(set) var context = Context.stopped
    /// The ignition input, where one is wired: off parks the bike at once, on ends parked.
    package private(set) var ignition: Bool?
    private var quietSince = Double.nan
    private var engineSince = Double.nan
    private var gpsMovingSince = Double.nan
    private var movedSince = Double.nan
    /// A parked bike went down (fell, or was laid down): nothing more until it stands upright again.
    private var downWhileParked = false
    /// …and it fell (a `parked_fall` was reported), not laid down or lifted by a person.
    private var parkedFallReported = false
    // How fast the posture last went from upright (under 20°) to past 60°: the last time it was
    // upright, the upright time already judged, and when a crossing was as fast as a fall.
    private var lastUprightTime = -Double.infinity
    private var tiltJudgedFrom = -Double.infinity
    private var fallJudgedFrom = -Double.infinity
    private var fallCrossingTime = -Double.infinity
    private var fastTiltTime = -Double.infinity
    /// When the bike last went over into lying as a fall does (`wentOverAsAFall`), not as a lift.
    private var fallTime = -Double.infinity
    // The peak rotation (squared) of the last one to two seconds, in two one-second buckets: a
    // fall's swing comes just before its smoothed posture crosses. And the last force of a landing.
    private var shortStart = -Double.infinity
    private var rotationRecent = 0.0
    private var rotationPrevious = 0.0
    private var landingTime = -Double.infinity

    /// Posture in degrees relative to the learned up (0 upright, 90 on its side, 180 upside down).
    package private(set) var postureDegrees = 0.0
    /// The cones `learnUp` refines the reference in: once taught, and the wide one before.
    private let learnedCone: Cone
    private static let wideCone = Cone(degrees: 40)

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
        State(phase: phase, postureDegrees: postureDegrees, smoothedG: smoothed.magnitude / standardGravity,
              stillSeconds: stillSince.isNaN ? 0 : lastT - stillSince, forwardKnown: forward != nil, gravity: gravity,
              context: context, uprightConfirmed: referenceConfirmed)
    }

    package init(configuration: DetectorConfiguration = DetectorConfiguration()) {
        self.configuration = configuration
        learnedCone = Cone(degrees: configuration.uprightLearningConeDegrees)
        if let up = configuration.calibratedUp, up.count == 3, let unit = Vector3(up[0], up[1], up[2]).normalized {
            reference = unit * standardGravity
            referenceConfirmed = true
        }
        referenceChanged()      // an initializer's assignments call no didSet
    }

    /// The ignition input changed (where one is wired): off, the bike is parked at once; on, a ride
    /// may begin. `nil` forgets it (the line was lost): the physics decide alone again.
    package mutating func setIgnition(_ on: Bool?) {
        ignition = on
        if on == false {
            context = .parked
        } else if on == true && context == .parked {
            context = .stopped
            quietSince = .nan
        }
    }

    /// Brings the detector back to watching after a handled crash (the rider said "I'm fine").
    package mutating func rearm() {
        crashed = false
        stillSince = .nan
        lyingSince = .nan
        collisionTime = -.infinity
    }

    /// Beyond any MEMS IMU's range with a wide margin (accelerometers reach ±16 g, some ±200 g;
    /// gyros ±4000 °/s): such a reading is a corrupt sample, not a motion. m/s² and rad/s.
    package static let largestAcceleration = 4000.0
    package static let largestRotation = 200.0

    /// Feeds one sample; `emit` is called for each event it causes (rarely more than one). A
    /// non-physical sample is dropped and reported (once a second at most, with a count): one
    /// corrupt value must not poison the filters and hide the next crash.
    package mutating func process(_ incoming: IMUSample, emit: (DetectorEvent) -> Void) {
        var sample = incoming
        let t = sample.t
        if let speed = sample.speed, !(speed.isFinite && speed >= 0 && speed < 200) { sample.speed = nil }
        guard t.isFinite, Self.physical(sample.accel, Self.largestAcceleration),
              sample.gyro.map({ Self.physical($0, Self.largestRotation) }) ?? true,
              lastT.isNaN || t - lastT <= 86_400 else {
            nonPhysical += 1
            if !(lastNonPhysicalReport + 1 > t) || !t.isFinite {
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

        // Two cascaded first-order low-pass stages; alpha from the real dt handles jitter and gaps.
        let alpha = dt / (configuration.smoothingSeconds + dt)
        let a = sample.accel
        smoothed1 += (a - smoothed1) * alpha
        smoothed += (smoothed1 - smoothed) * alpha
        if let w = sample.gyro {
            gyroSmoothed1 += (w - gyroSmoothed1) * alpha
            gyroSmoothed += (gyroSmoothed1 - gyroSmoothed) * alpha
        }

        watchAxes(a, t: t, dt: dt, emit: emit)
        recordEvidence(sample, t: t)
        if let w = sample.gyro {
            rotationSinceUpright.rotate(by: (w - gyroBias) * dt)
            rotationSinceStill.rotate(by: (w - gyroBias) * dt)
        }

        // The reference's magnitude once a sample (learnUp and learnForward need it too).
        guard let reference, case let referenceMagnitude = reference.magnitude, referenceMagnitude > 1e-9 else {
            learnInitialUp(t: t, emit: emit)
            return
        }
        let up = reference * (1 / referenceMagnitude)

        // Posture: the angle between the reference and the current smoothed force.
        let cosine = postureCosine(smoothed)
        postureDegrees = acosDegrees(cosine)
        let magnitude = smoothed.magnitude
        // At rest a healthy sensor reads its gravity; reading clearly less means part of gravity is
        // hidden (a dead axis, or free fall): the split into forward and sideways is then unreliable.
        let degenerate = !plausible(referenceMagnitude)
        let uncertain = magnitude < 0.9 * gravity || degenerate || deadReported != .zero
        if uncertain && gyroTiltValid && t - gyroAnchorTime <= 60 {
            // How far gravity has turned since the bike was last still and upright, by the gyro
            // (it drifts: the anchor must be recent). With a known dead axis, gravity at the anchor
            // is rebuilt around it and the result must also match what the live axes read now,
            // which a turn (force along the bike, not gravity) does not. Otherwise the gyro only
            // settles a tilt the accelerometer already sees as large but ambiguous: it measures
            // the geometric lean, which in a steady turn is large while the force stays along the
            // bike, and needs a trustworthy vertical.
            if deadReported != .zero {
                // Only after a rotation as fast as a fall (riding turns and stops stay far below):
                // over a long stop the integrated bias alone would tilt the rebuilt gravity.
                let fellFast = max(recent.peakRotation, previous.peakRotation) >= 1.5
                if fellFast, let tilt = deadAxisGyroTilt(now: smoothed) { postureDegrees = max(postureDegrees, tilt) }
            } else if !degenerate && postureDegrees >= 40 {
                // Gravity as read at the anchor (in full there: the bike may have leaned on its
                // stand), turned by the rotation since: the posture includes that lean.
                let anchorMagnitude = forceAtAnchor.magnitude
                let before = plausible(anchorMagnitude) ? forceAtAnchor * (1 / anchorMagnitude) : up
                postureDegrees = max(postureDegrees, acosDegrees(max(-1, min(1, up.dot(rotationSinceUpright.inverseRotate(before))))))
            }
        }
        // A fall crosses from 20° to 60° in a few tenths of a second (the pendulum's last part
        // turns at 150–300 °/s; the smoothing slows what it shows, never speeds it up); a person
        // laying the bike down takes seconds. It needs no gyro and no axis in particular, so it
        // still sees a fall whose landing struck a dead axis.
        if postureDegrees < 20 {
            lastUprightTime = t
        } else {
            // Judged from the crossing until a second after it: the landing may come just after.
            if postureDegrees >= configuration.fallenLyingAngleDegrees {
                if lastUprightTime > fallJudgedFrom {
                    fallJudgedFrom = lastUprightTime
                    fallCrossingTime = t
                }
                if !fellSinceUpright && t - fallCrossingTime <= 1 && wentOverAsAFall {
                    fallTime = t
                    resetSpell()
                }
            }
            if postureDegrees >= 60 && lastUprightTime > tiltJudgedFrom {
                tiltJudgedFrom = lastUprightTime
                if 40 >= configuration.parkedFallRotationDegreesPerSecond * (t - lastUprightTime) { fastTiltTime = t }
            }
        }
        // A bike that went over as a fall does lies from `fallenLyingAngleDegrees` (the upright may be
        // the side stand's lean, or a pushed bike's). Short of the lying angle it must rest for
        // `ambiguousRestConfirmationSeconds`: a held wheelie reads 45–55° and gets there as fast, but
        // is never held still that long. (Not with a dead axis, whose posture is only a bound.)
        let lowered = fellSinceUpright && !degenerate && deadReported == .zero
        let lying = isLying(cosine: cosine, uncertain: uncertain,
                            from: lowered ? configuration.fallenLyingAngleDegrees : configuration.lyingAngleDegrees)

        trackImpact(a, up: up, t: t, dt: dt, emit: emit)
        if let speed = sample.speed { watchSpeed(speed, t: t) }
        let still = updateStillness(sample, t: t)
        let shaking = max(activity.x, activity.y, activity.z) >= configuration.engineVibrationG * standardGravity
        let gpsMoving = (sample.speed ?? 0) > configuration.movingSpeed
        if watchRiding(shaking: shaking, still: still, gpsMoving: gpsMoving, magnitude: magnitude, up: up,
                       cosine: cosine, referencePlausible: !degenerate, t: t, dt: dt, emit: emit) {
            return
        }
        updateContext(still: still, shaking: shaking, gpsMoving: gpsMoving, lying: lying, t: t)

        if crashed {
            watchForRearm(lying: lying, still: still, magnitude: magnitude, t: t, emit: emit)
            return
        }

        if lying {
            if lyingSince.isNaN { lyingSince = t }
        } else {
            lyingSince = .nan
            learnUp(magnitude: magnitude, still: still, dt: dt, up: up, referencePlausible: !degenerate)
            learnForward(up: up, dt: dt, t: t, referencePlausible: !degenerate)
        }

        let stillFor = still ? t - stillSince : 0
        if sample.gyro != nil {
            // The rotation counts from the start of the last still period in which the bike stood
            // upright for a second. The smoothed signals lag, so a slow fall begins while it still
            // looks still and upright; a still period must last before it becomes the reference.
            if still && stillFor == 0 {
                rotationSinceStill = .identity
                forceAtStillStart = smoothed
            }
            if still && stillFor >= 1 && postureDegrees < 20 && !lying {
                rotationSinceUpright = rotationSinceStill
                forceAtAnchor = forceAtStillStart
                gyroTiltValid = true
                gyroAnchorTime = t
                if (gyroSmoothed - gyroBias).magnitude < 0.05 { gyroBias += (gyroSmoothed - gyroBias) * (dt / (5 + dt)) }
            }
        }
        if stillFor >= 2 && (magnitude < 0.9 * gravity || degenerate) { sawDeficientRest = true }
        if context == .parked || downWhileParked {
            // Nobody is riding: a fall is the parked bike's, never a crash; a bump is no collision.
            watchParked(lying: lying, still: still, stillFor: stillFor, uncertain: uncertain, magnitude: magnitude, t: t, emit: emit)
            return
        }
        if !referenceConfirmed && !fellSinceUpright {
            // The reference may be a bike lying on its side (started lying, stored, carried): lifted,
            // it would seem to lie. Until riding confirms it only a fall into lying (the swing of a
            // bike going over under its own weight, not a lift) or a collision raises a crash.
            if t - collisionTime <= configuration.collisionWatchSeconds && still && stillFor >= configuration.collisionRestSeconds {
                declareCrash(.collisionThenStill, t: t, stillFor: stillFor, emit: emit)
                return
            }
            phase = lying ? .lying : (still ? .still : .moving)
            return
        }
        if lying && still {
            // Uncertain postures wait longer (free fall cannot last that long). A reference far from 1 g
            // also needs a clearer angle, or a longer rest: there hard braking can look like a large
            // tilt for a few seconds.
            let needed = restNeeded(uncertain: uncertain)
            let clear = !degenerate || postureDegrees >= max(configuration.lyingAngleDegrees, 65)
                || stillFor >= configuration.ambiguousRestConfirmationSeconds
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
        if t - collisionTime <= configuration.collisionWatchSeconds && still && stillFor >= configuration.collisionRestSeconds {
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
        smoothed1 = sample.accel
        smoothed = sample.accel
        stillAnchor = sample.accel
        if let w = sample.gyro {
            gyroSmoothed1 = w
            gyroSmoothed = w
            gyroStillAnchor = w
        }
        learningStart = sample.t
        bucketStart = sample.t
        startTime = sample.t
        if reference != nil { phase = .moving }
    }

    /// The first reference: the mean force over the first half second (a rider sitting on the bike,
    /// or riding). Riding refines it afterwards. A mean far from 1 g is no reference: a dead axis may
    /// carry gravity, or the bike is in the air; report it and try again.
    private mutating func learnInitialUp(t: Double, emit: (DetectorEvent) -> Void) {
        learningSum += smoothed
        learningCount += 1
        guard t - learningStart >= 0.5 else { return }
        let mean = learningSum / Double(learningCount)
        learningSum = .zero
        learningCount = 0
        learningStart = t
        guard let direction = mean.normalized, mean.magnitude > 0.05 * standardGravity else { return }
        if plausible(mean.magnitude) {
            gravity = mean.magnitude
        } else {
            // Far from 1 g: a dead axis carries part of gravity (or the range is wrong). Keep the
            // reading as the reference; posture is then estimated conservatively. Provisional like
            // any first reference: the bike may be lying with the dead axis along gravity, and
            // riding that reads the full 1 g elsewhere replaces it (`watchRiding`).
            emit(.sensorFault(t: t, fault: .implausibleGravity(g: mean.magnitude / standardGravity)))
        }
        reference = mean
        phase = .moving
        emit(.uprightLearned(t: t, up: direction))
    }

    /// The tilt since the gyro anchor when a known dead axis hides part of gravity. At rest the full
    /// gravity is 1 g, so at the anchor its hidden part along the dead axis is ±√(1 − |visible|²);
    /// each sign, turned by the rotation the gyro measured since, predicts what the live axes read
    /// now. The sign whose prediction matches the reading (clearly better than the other) gives
    /// the tilt; none matching, the gyro says nothing.
    private func deadAxisGyroTilt(now: Vector3) -> Double? {
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
            let turned = rotationSinceUpright.inverseRotate(gravity)
            // The live axes must read the turned gravity, and the dead one must hide what is
            // missing from 1 g now.
            var mismatch = turned - current
            mismatch[dead] = abs(turned[dead]) - hiddenNow
            let cosine = gravity.dot(turned) / max(gravity.dot(gravity), 1e-9)
            return (mismatch.magnitude, acosDegrees(max(-1, min(1, cosine))))
        }
        let plus = candidate(1), minus = candidate(-1)
        let (best, other) = plus.error <= minus.error ? (plus, minus) : (minus, plus)
        guard best.error < 0.25, best.error < 0.5 * other.error || hidden < 0.1 else { return nil }
        return best.tilt
    }

    /// Lying: far from upright, and tilted sideways (a wheelie tilts as far, but about the pitch
    /// axis) or upside down. Before the forward axis is known, or when the reading is uncertain,
    /// any large tilt counts: better a countdown the rider cancels than a fall not seen.
    // Inlined: called on the detector's own (inout) value, a call copied all 1.3 kB of it first.
    @inline(__always) private func isLying(cosine: Double, uncertain: Bool, from angle: Double) -> Bool {
        guard postureDegrees >= angle else { return false }
        guard let forward, !uncertain, postureDegrees < configuration.wheelieMaximumDegrees else { return true }
        let longitudinal = smoothed.dot(forward) / gravity
        // What is not vertical or longitudinal is sideways; inferring it keeps a dead lateral axis
        // from hiding that the bike lies on its side.
        let lateral = max(0, 1 - cosine * cosine - longitudinal * longitudinal).squareRoot()
        return lateral >= 0.5 * abs(longitudinal)
    }

    /// Accumulates the horizontal force while the engine or the road shakes the frame (not on a
    /// stand); the principal axis of its variation is forward/backward. Only force with a vertical
    /// component of about 1 g counts: braking and accelerating add force sideways to gravity, while a
    /// turn raises the vertical component to g/cos(lean). The mean is removed, so a constant offset
    /// from a slightly wrong "up" teaches nothing.
    private mutating func learnForward(up: Vector3, dt: Double, t: Double, referencePlausible: Bool) {
        let vertical = smoothed.dot(up)
        let horizontal = smoothed - up * vertical
        let shaking = max(activity.x, activity.y, activity.z) > 0.3
        guard referencePlausible, deadReported == .zero, !silentAxis, shaking,
              abs(vertical - gravity) < 0.03 * gravity, horizontal.dot(horizontal) < square(0.8 * gravity) else { return }
        let k = dt / (60 + dt)
        horizontalMean += (horizontal - horizontalMean) * k
        let varying = horizontal - horizontalMean
        horizontalCovariance.blend(toward: varying, weight: k)
        if varying.dot(varying) > square(0.08 * gravity) { horizontalWeight += dt }
        guard t >= nextForwardUpdate, horizontalWeight >= 5 else { return }
        nextForwardUpdate = t + 1
        guard let axis = horizontalCovariance.principalAxis(start: forward ?? varying, orthogonalTo: up) else { return }
        // Trust it only when one horizontal direction clearly dominates.
        let major = axis.dot(horizontalCovariance.apply(axis))
        let minorAxis = up.cross(axis)
        let minor = minorAxis.dot(horizontalCovariance.apply(minorAxis))
        forward = major >= 4 * minor ? axis : nil
    }

    /// The cosine of the angle between a force and the reference, both in g. A dead axis hides a
    /// component of each; the hidden parts are at most √(1−|m|²), so the largest cosine the
    /// readings allow is m_ref·m + √(1−|m_ref|²)·√(1−|m|²): a conservative posture that is the
    /// plain projection for a healthy sensor.
    @inline(__always) private func postureCosine(_ force: Vector3) -> Double {
        let m = force * perG
        let hidden = max(0, 1 - m.dot(m)).squareRoot()
        return max(-1, min(1, referenceInG.dot(m) + hiddenReference * hidden))
    }

    private mutating func referenceChanged() {
        perG = 1 / gravity
        referenceInG = (reference ?? .zero) * perG
        hiddenReference = max(0, 1 - referenceInG.dot(referenceInG)).squareRoot()
    }

    private func plausible(_ magnitude: Double) -> Bool {
        abs(magnitude / standardGravity - 1) < 0.1
    }

    /// Riding refines the up direction: the average force while the frame shakes (engine, road),
    /// over which braking and accelerating cancel and coordinated turns add nothing sideways. A
    /// running average at first, so that a start on the side stand fades fast, then exponential.
    /// Gross outliers (a wheelie, a fall) are left out. Quiet rest refines gravity's magnitude.
    /// A reference far from 1 g (dead axis) is kept as first learned.
    ///
    /// Only while the bike is really upright: a bike pushed at walking pace leans for real (nothing
    /// balances the lean as in a turn), and the reference must not follow it. So once a minute of
    /// riding taught it, only forces within `uprightLearningConeDegrees` of it refine it (riding
    /// keeps the force on the bike's up; a pushed lean, hard braking, a camber do not), and never
    /// while GPS says walking pace. Before that, a wide cone lets a start on the side stand fade.
    private mutating func learnUp(magnitude: Double, still: Bool, dt: Double, up: Vector3, referencePlausible: Bool) {
        guard configuration.calibratedUp == nil, referencePlausible else { return }
        let taught = uprightLearnedSeconds >= configuration.uprightLearningSeconds
        // Within the cone: a cosine clearly above or below the edge's decides alone; within 0.01°
        // of the edge, the same arccosine as the posture does (the decision is the one it was).
        let cone = taught ? learnedCone : Self.wideCone
        guard magnitude > 0.6 * gravity && magnitude < 2 * gravity, case let direction = smoothed / magnitude,
              case let cosine = direction.dot(up), cosine <= 1, cosine > cone.outside,
              cosine > cone.inside || acosDegrees(cosine) < cone.degrees else { return }
        let walkingPace = speedReading.isFinite && speedReading < configuration.movingSpeed && !still
        let shaking = max(activity.x, activity.y, activity.z) > 0.3
        if shaking && !walkingPace {
            uprightLearnedSeconds += dt
            let k = dt / (min(configuration.uprightLearningSeconds, uprightLearnedSeconds) + dt)
            if let refined = (up + (direction - up) * k).normalized { self.reference = refined * gravity }
        }
        // Gravity's magnitude (the sensor's own scale) only when quiet: turns read g/cos(lean).
        let quiet = activity.x + activity.y + activity.z < 0.6 && gyroSmoothed.dot(gyroSmoothed) < 0.05 * 0.05
        let k = dt / (configuration.uprightLearningSeconds + dt)
        if still && quiet && magnitude > 0.95 * gravity && magnitude < 1.05 * gravity {
            gravity += (magnitude - gravity) * k
        }
    }

    /// Impact pulses: integrate the horizontal change of force from just before the pulse, so that
    /// neither gravity (in a wheelie or a lean) nor steady braking counts as delta-v.
    private mutating func trackImpact(_ a: Vector3, up: Vector3, t: Double, dt: Double, emit: (DetectorEvent) -> Void) {
        let g = standardGravity
        // Compared squared: no square root per sample.
        let dynamicVector = a - up * gravity
        let dynamicSquared = dynamicVector.dot(dynamicVector)
        if !inPulse {
            guard dynamicSquared > square(configuration.impactThresholdG * g) else { return }
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
        if dynamicSquared > square(1.5 * g) { pulseLastAbove = t }
        pulseDeltaV += horizontal * dt
        pulsePeak = max(pulsePeak, a.magnitude / g)
        pulseHorizontalPeak = max(pulseHorizontalPeak, horizontal.magnitude / g)
        guard t - pulseLastAbove > 0.1 || t - pulseStart > configuration.pulseMaximumSeconds else { return }
        inPulse = false
        lastPulseEnd = t
        let deltaV = pulseDeltaV.magnitude
        recent.deltaV = max(recent.deltaV, deltaV)
        if pulseHorizontalPeak >= configuration.collisionPeakG && deltaV >= configuration.collisionDeltaV {
            collisionTime = t
        }
        if pulsePeak >= configuration.reportedImpactG && t - lastImpactReport >= 1 {
            lastImpactReport = t
            emit(.impact(t: pulseStart, peakG: pulsePeak, horizontalG: pulseHorizontalPeak, deltaV: deltaV))
        }
    }

    /// A collision seen by GPS: the speed fell between two readings faster than any brakes can
    /// stop a bike, with an impact pulse in between. It needs no axis in particular, so it still
    /// sees a pinned collision whose longitudinal pulse fell on a dead or clipped axis.
    private mutating func watchSpeed(_ speed: Double, t: Double) {
        guard speed.isFinite, speed != speedReading else { return }
        if speedReading.isFinite {
            // A held value is the last fix repeated: GPS gives one at least every second.
            let drop = speedReading - speed
            let interval = min(t - speedReadingSince, 1)
            if drop >= configuration.collisionSpeedDrop && drop > configuration.maximumBrakingG * standardGravity * interval
                && t - lastPulseEnd <= 1.5 {
                collisionTime = t
                recent.deltaV = max(recent.deltaV, drop)
            }
        }
        speedReading = speed
        speedReadingSince = t
    }

    /// Still while the smoothed signals stay where they settled; returns whether still now.
    private mutating func updateStillness(_ sample: IMUSample, t: Double) -> Bool {
        // Magnitudes compared squared: no square root per sample.
        let moved = smoothed - stillAnchor
        var settled = moved.dot(moved) <= square(configuration.stillAccelerationTolerance)
        if sample.gyro != nil {
            let turned = gyroSmoothed - gyroStillAnchor
            settled = settled && turned.dot(turned) <= square(configuration.stillRotationTolerance)
                && gyroSmoothed.dot(gyroSmoothed) <= square(configuration.stillRotationLimit)
        }
        if let speed = sample.speed, speed > configuration.movingSpeed { settled = false }
        if settled {
            if stillSince.isNaN { stillSince = t }
            return true
        }
        stillAnchor = smoothed
        gyroStillAnchor = gyroSmoothed
        stillSince = .nan
        return false
    }

    private mutating func declareCrash(_ reason: CrashEvidence.Reason, t: Double, stillFor: Double,
                                       emit: (DetectorEvent) -> Void) {
        crashed = true
        phase = .crashed
        uprightSince = .nan
        emit(.crashDetected(t: t, evidence: evidence(reason, stillFor: stillFor)))
    }

    private func evidence(_ reason: CrashEvidence.Reason, stillFor: Double) -> CrashEvidence {
        CrashEvidence(
            reason: reason,
            postureDegrees: postureDegrees,
            stillSeconds: stillFor,
            peakG: max(recent.peakG, previous.peakG),
            deltaV: max(recent.deltaV, previous.deltaV),
            peakRotationDegreesPerSecond: recent.sawGyro || previous.sawGyro
                ? max(recent.peakRotation, previous.peakRotation) * 180 / Double.pi : nil,
            speedBefore: recent.sawSpeed || previous.sawSpeed ? max(recent.peakSpeed, previous.peakSpeed) : nil,
            fallTime: lyingSince.isNaN ? nil : lyingSince
        )
    }

    /// Riding spells confirm the provisional reference, or replace one that riding contradicts: the
    /// bike cannot be ridden lying down. A spell lasts while the engine or the road shakes the frame,
    /// the force moves or GPS says moving, with breaks of at most 2 s, and adds up the force's
    /// direction. It is judged in windows of moving time (GPS speed, or within 2 s of the smoothed
    /// force changing, as riding keeps doing and idling never does): `ridingConfirmationSeconds`
    /// while the reference is provisional, `relearnRidingSeconds` once confirmed. A window counts
    /// only when its directions bunch (the mean of the unit vectors at least 0.95 long, as
    /// coordinated riding keeps it) and its two halves agree within 15° (a lift followed by a stand
    /// does neither). Within 30° of the reference it confirms it; elsewhere it replaces it.
    /// Replacing it ends a crash and a parked bike's fall. Returns true when replaced.
    private mutating func watchRiding(shaking: Bool, still: Bool, gpsMoving: Bool, magnitude: Double, up: Vector3,
                                      cosine: Double, referencePlausible: Bool,
                                      t: Double, dt: Double, emit: (DetectorEvent) -> Void) -> Bool {
        // A fallen bike shakes (a wheel turning, hands on it) but is not ridden: no window begins within
        // `fallSettleSeconds` of a fall, nor before the fall's crash (or parked fall) is declared.
        if t - fallTime < configuration.fallSettleSeconds || (fellSinceUpright && !crashed && !downWhileParked) {
            if spellSeconds > 0 { resetSpell() }
            return false
        }
        let active = shaking || gpsMoving || !still
        if active {
            spellLastShaken = t
        } else if t - spellLastShaken > 2 {
            if spellSeconds > 0 { resetSpell() }
            return false
        }
        // Whatever the live axes read (with a dead axis carrying gravity, riding may read far less
        // than 1 g), short of a direction lost in noise or a blow.
        guard active, magnitude > 0.02 * standardGravity, magnitude < 2 * gravity else { return false }
        let direction = smoothed / magnitude      // the magnitude the posture step computed already
        spellSeconds += dt
        spellDirection += direction * dt
        spellForce += smoothed * dt
        spellCosine += cosine * dt
        // During a crash or a parked fall only GPS speed counts: hands on a lying bike move it and shake
        // it as riding does, and a crash ends only when the bike is seen upright again (or ridden).
        let moving = fallInProgress ? gpsMoving : gpsMoving || !still || t - stillSince < 2
        if moving { spellMovingSeconds += dt }
        // A crash or a parked fall in progress takes the long window, as a confirmed reference does.
        let needed = referenceConfirmed || fallInProgress
            ? configuration.relearnRidingSeconds : configuration.ridingConfirmationSeconds
        if spellHalf == nil && spellMovingSeconds >= needed / 2 { spellHalf = (spellDirection, spellCosine, spellSeconds) }
        // A window closes after `needed` seconds of moving; one that mostly idled starts afresh.
        guard spellMovingSeconds >= needed, let meanDirection = spellDirection.normalized else {
            if spellSeconds >= 120 { resetSpell() }
            return false
        }
        // Consistent: the directions bunched (the mean of unit vectors at least 0.95 long), and the
        // window's two halves within 15° of each other (a lift followed by a stand is neither).
        let halves = spellHalf.flatMap { half in
            half.direction.normalized.flatMap { a in (spellDirection - half.direction).normalized.map { a.dot($0) } }
        } ?? 0
        let consistent = spellDirection.magnitude / spellSeconds >= 0.95 && halves >= 0.966
        // The mean force: braking and accelerating cancel in it, turns add along the bike's up; its
        // magnitude is how much of gravity the sensor shows in the riding posture.
        let meanForce = spellForce / spellSeconds
        let meanMagnitude = meanForce.magnitude
        // The posture's cosine (the largest the readings allow) over each half of the window.
        let halfCosines = spellHalf.map { half in
            (half.cosine / half.seconds, (spellCosine - half.cosine) / max(spellSeconds - half.seconds, 1e-9))
        } ?? (0, 0)
        resetSpell()
        // Riding's force averages to at least 1 g along the bike's up: a window that reads about
        // 1 g in full (0.95 g or more hides at most 18° on a dead axis) shows the up; less, only
        // part of it.
        let shownInFull = consistent && meanMagnitude >= 0.95 * standardGravity && plausible(meanMagnitude)
        if !referencePlausible || !plausible(meanMagnitude) {
            // The reference or the window shown only in part (a dead axis carries gravity). Riding
            // shown in full replaces a partial reference, wherever it points. Otherwise the
            // directions say little (braking, accelerating and turns spread a small visible force
            // widely, and the visible part of a lying bike's gravity may point along its up): the
            // posture does. Within 30° in both halves of the window it confirms the reference (a
            // lift followed by a stand does not).
            if shownInFull {
                replaceReference(with: meanDirection * gravity, t: t, emit: emit)
                return true
            }
            if min(halfCosines.0, halfCosines.1) >= 0.866 {
                // Each riding window also gives the up itself to a reference shown in part, which
                // nothing else refines: learned at rest (on the side stand, 10-20° off) it would hide
                // that much of every fall (a lowside read lying at 53° for 70°); a first window
                // closed during a lift is mostly the lying bike's (a crash read 15° for 90°). (The
                // forward axis and horizontal statistics are not learned from a reference shown in
                // part, so nothing learned against the old one stays.)
                if !referencePlausible && meanMagnitude > 0.05 * standardGravity {
                    reference = meanForce
                }
                referenceConfirmed = true
                return false
            }
            // Ridden far from a reference shown in full (in both halves of the window), reading
            // clearly less than 1 g: the dead axis carries gravity in the riding posture, and the reference was
            // learned in another one (a bike started lying). The bike cannot be ridden lying:
            // riding's mean force, shown in part, is the reference now, as if the agent had started
            // upright with this sensor.
            // (Not a force too small to point anywhere: the same 0.05 g floor as the first reference.)
            if referencePlausible && meanMagnitude < 0.9 * gravity && meanMagnitude > 0.05 * standardGravity
                && max(halfCosines.0, halfCosines.1) < 0.866 {
                replaceReference(with: meanForce, t: t, emit: emit)
                return true
            }
            return false
        }
        guard consistent else { return false }
        if meanDirection.dot(up) >= 0.866 {
            referenceConfirmed = true
            return false
        }
        // Elsewhere: with a healthy sensor about 1 g replaces it; with a dead axis, only what is
        // shown in full is the bike's up.
        // (The window reads about 1 g here: the branch above took every other.)
        guard deadReported == .zero || shownInFull else { return false }
        replaceReference(with: meanDirection * gravity, t: t, emit: emit)
        return true
    }

    /// Riding contradicted the reference: this one replaces it, confirmed. A crash or a parked bike's
    /// fall in progress goes on until the bike is seen upright against it for `rearmSeconds`.
    private mutating func replaceReference(with force: Vector3, t: Double, emit: (DetectorEvent) -> Void) {
        reference = force
        referenceConfirmed = true
        uprightLearnedSeconds = 0
        horizontalCovariance = SymmetricMatrix3()
        horizontalWeight = 0
        horizontalMean = .zero
        forward = nil
        gyroTiltValid = false
        lyingSince = .nan
        uprightSince = .nan
        // A bike laid down (or lifted) while parked was no fall: the ride that replaced the reference ends it.
        if !parkedFallReported { downWhileParked = false }
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
        let lyingNeeded = lyingSince > stillSince ? needed : min(needed, configuration.restConfirmationSeconds)
        return stillFor >= needed && t - lyingSince >= lyingNeeded
    }

    /// The bike went over from upright into lying as a fall does: by the gyro, a rotation at least
    /// `fallRotationDegreesPerSecond` in the last one to two seconds (a pendulum's swing; a person
    /// lifts or lowers a bike at a few tens). Without a gyro, or with one that read under 2 °/s while
    /// the posture turned past 45° (dead, or stuck at zero), a landing of `parkedFallPeakG`. (Not a
    /// landing beside a working gyro: a pothole is one, and it would hold riding windows back.)
    /// Anything else is a lift, or a person lowering the bike: the accelerometer alone cannot tell
    /// those apart.
    private var wentOverAsAFall: Bool {
        let rotation = max(rotationRecent, rotationPrevious)
        let rate = configuration.fallRotationDegreesPerSecond * Double.pi / 180
        if rotation >= rate * rate { return true }
        // The landing ends the swing: the smoothed posture leaves upright only as the bike lands.
        return rotation < square(2 * Double.pi / 180) && landingTime >= lastUprightTime - 0.5
    }

    /// A crash or a parked bike's fall is in progress: it ends when the bike is seen upright again.
    private var fallInProgress: Bool { crashed || parkedFallReported }

    /// The bike went over as a fall does and has not been seen upright since.
    private var fellSinceUpright: Bool { fallTime > lastUprightTime }

    /// A fall, not a person's hands, in the last 10–20 s: a rotation as fast as a falling bike's
    /// (150–300 °/s before it lands; a person lowers or lifts one at a few tens), by the gyro or by
    /// the posture's own speed, or a landing.
    private var fellLikeAFall: Bool {
        max(recent.peakRotation, previous.peakRotation) * 180 / Double.pi >= configuration.parkedFallRotationDegreesPerSecond
            || lastT - fastTiltTime <= 20
            || max(recent.peakG, previous.peakG) >= configuration.parkedFallPeakG
    }

    private mutating func resetSpell() {
        spellSeconds = 0
        spellMovingSeconds = 0
        spellDirection = .zero
        spellForce = .zero
        spellCosine = 0
        spellHalf = nil
    }

    /// Riding, stopped or parked. Parked after `parkedAfterSeconds` still with no vibration and no GPS
    /// speed (or at once with the ignition off); parked until the engine has run, GPS has moved or
    /// the bike has been moved about upright for `unparkSeconds` (or the ignition is on).
    private mutating func updateContext(still: Bool, shaking: Bool, gpsMoving: Bool, lying: Bool, t: Double) {
        func since(_ condition: Bool, _ start: inout Double) -> Double {
            if !condition { start = .nan; return 0 }
            if start.isNaN { start = t }
            return t - start
        }
        let engine = since(shaking && !gpsMoving, &engineSince)
        let moving = since(gpsMoving, &gpsMovingSince)
        let moved = since(!still && !lying, &movedSince)
        let quiet = since(still && !shaking && !gpsMoving, &quietSince)
        if ignition == false {
            context = .parked
        } else if context == .parked {
            if ignition == true || engine >= configuration.unparkSeconds || moving >= configuration.unparkSeconds || moved >= configuration.unparkSeconds {
                context = still ? .stopped : .riding
            }
        } else if ignition == nil && quiet >= configuration.parkedAfterSeconds {
            context = .parked
        } else {
            context = spellMovingSeconds > 0 && (gpsMoving || !still || t - stillSince < 2) ? .riding : .stopped
        }
    }

    /// A parked bike lying still went down: a fall (fast rotation, or a landing) is a `parked_fall`,
    /// reported once; a person laying it down is nothing. Upright again for `rearmSeconds` ends it.
    private mutating func watchParked(lying: Bool, still: Bool, stillFor: Double, uncertain: Bool, magnitude: Double,
                                      t: Double, emit: (DetectorEvent) -> Void) {
        if downWhileParked {
            let upright = postureDegrees < 30 && magnitude > 0.7 * min(gravity, reference?.magnitude ?? gravity)
            if upright {
                if uprightSince.isNaN { uprightSince = t }
                if t - uprightSince >= configuration.rearmSeconds {
                    downWhileParked = false
                    parkedFallReported = false
                }
            } else {
                uprightSince = .nan
            }
        } else if lying && still {
            let needed = restNeeded(uncertain: uncertain)
            if restedLying(stillFor: stillFor, needed: needed, t: t) {
                downWhileParked = true
                uprightSince = .nan
                if fellLikeAFall {
                    parkedFallReported = true
                    emit(.parkedFall(t: t, evidence: evidence(.lyingStill, stillFor: stillFor)))
                }
            }
        }
        phase = lying ? .lying : (still ? .still : .moving)
    }

    /// After a crash: upright and not lying still for `rearmSeconds` re-arms.
    private mutating func watchForRearm(lying: Bool, still: Bool, magnitude: Double, t: Double,
                                        emit: (DetectorEvent) -> Void) {
        // Upright reads what the learned reference read (less than 1 g when a dead axis hides part).
        let upright = postureDegrees < 30 && magnitude > 0.7 * min(gravity, reference?.magnitude ?? gravity)
        if upright {
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

    /// Per-axis vibration activity, and the range each smoothed axis has covered this session.
    /// An axis that never moved, with no vibration either, while the others swung by several m/s²,
    /// in a session where the sensor at rest read clearly less than 1 g, is dead. (Without that last
    /// proof a healthy axis along the bike's side looks the same: coordinated riding never loads it.)
    private mutating func watchAxes(_ a: Vector3, t: Double, dt: Double, emit: (DetectorEvent) -> Void) {
        let k = dt / (3.0 + dt)
        let deviation = a - smoothed
        activity.x += (abs(deviation.x) - activity.x) * k
        activity.y += (abs(deviation.y) - activity.y) * k
        activity.z += (abs(deviation.z) - activity.z) * k
        for axis in 0..<3 {
            smoothedMinimum[axis] = min(smoothedMinimum[axis], smoothed[axis])
            smoothedMaximum[axis] = max(smoothedMaximum[axis], smoothed[axis])
        }
        guard t >= nextAxisCheck else { return }
        nextAxisCheck = t + 1
        let range = smoothedMaximum - smoothedMinimum
        let widest = max(range.x, range.y, range.z)
        let strongest = max(activity.x, activity.y, activity.z)
        // The engine and the road shake a frame in every direction (its rocking, the mount's give):
        // over half a minute of it, a healthy axis shows a few per cent of the strongest axis's
        // vibration at the very least (a knock on a parked bike is too short to count). One showing
        // less than 2 % is dead even where its report waits for a rest short of 1 g (a dead forward
        // axis carries no gravity, so it never gets one); the variation along it is then none, and
        // any other horizontal direction would seem to "dominate" as the forward axis.
        if strongest > 0.3 {
            shakenSeconds += 1
            activityPeak = Vector3(max(activityPeak.x, activity.x), max(activityPeak.y, activity.y), max(activityPeak.z, activity.z))
            let silent = shakenSeconds >= 30
                && min(activityPeak.x, activityPeak.y, activityPeak.z) < 0.02 * max(activityPeak.x, activityPeak.y, activityPeak.z)
            if silent && !silentAxis { forward = nil }
            silentAxis = silent
        }
        for axis in 0..<3 where deadReported[axis] == 0 && sawDeficientRest {
            if widest > 3 && range[axis] < 0.3 && activity[axis] < 0.15 * strongest && t - startTime >= 60 {
                deadReported[axis] = 1
                // A dead axis corrupts the split into forward and sideways: stop telling wheelies from falls.
                forward = nil
                emit(.sensorFault(t: t, fault: .deadAxis(axis: axis)))
            }
        }
    }

    private mutating func recordEvidence(_ sample: IMUSample, t: Double) {
        if t - shortStart >= 1 {
            rotationPrevious = rotationRecent
            rotationRecent = 0
            shortStart = t
        }
        let forceSquared = sample.accel.dot(sample.accel)
        if forceSquared >= square(configuration.parkedFallPeakG * standardGravity) { landingTime = t }
        if let w = sample.gyro { rotationRecent = max(rotationRecent, w.dot(w)) }
        if t - bucketStart >= 10 {
            previous = recent
            recent = EvidenceBucket()
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
}

/// A unit quaternion for integrating rotation rates.
struct Quaternion: Sendable {
    var w = 1.0, x = 0.0, y = 0.0, z = 0.0

    static let identity = Quaternion()

    /// Composes a small body rotation `angle` (rotation vector, radians) on the right.
    mutating func rotate(by angle: Vector3) {
        let (hx, hy, hz) = (angle.x / 2, angle.y / 2, angle.z / 2)
        let nw = w - x * hx - y * hy - z * hz
        let nx = x + w * hx + y * hz - z * hy
        let ny = y + w * hy + z * hx - x * hz
        let nz = z + w * hz + x * hy - y * hx
        let norm = (nw * nw + nx * nx + ny * ny + nz * nz).squareRoot()
        let perNorm = 1 / norm
        (w, x, y, z) = (nw * perNorm, nx * perNorm, ny * perNorm, nz * perNorm)
    }

    /// A vector fixed in the world, seen from the rotated body: q* v q.
    func inverseRotate(_ v: Vector3) -> Vector3 {
        let u = Vector3(-x, -y, -z)
        let t = u.cross(v) * 2
        return v + t * w + u.cross(t)
    }
}

/// A symmetric 3×3 matrix kept as an exponential average of outer products.
struct SymmetricMatrix3: Sendable {
    var xx = 0.0, yy = 0.0, zz = 0.0, xy = 0.0, xz = 0.0, yz = 0.0

    mutating func blend(toward v: Vector3, weight k: Double) {
        xx += (v.x * v.x - xx) * k
        yy += (v.y * v.y - yy) * k
        zz += (v.z * v.z - zz) * k
        xy += (v.x * v.y - xy) * k
        xz += (v.x * v.z - xz) * k
        yz += (v.y * v.z - yz) * k
    }

    func apply(_ v: Vector3) -> Vector3 {
        Vector3(xx * v.x + xy * v.y + xz * v.z, xy * v.x + yy * v.y + yz * v.z, xz * v.x + yz * v.y + zz * v.z)
    }

    /// The dominant eigenvector in the plane orthogonal to `normal`, by power iteration.
    func principalAxis(start: Vector3, orthogonalTo normal: Vector3) -> Vector3? {
        var v = start - normal * start.dot(normal)
        for _ in 0..<16 {
            var next = apply(v)
            next = next - normal * next.dot(normal)
            guard let unit = next.normalized else { return nil }
            v = unit
        }
        return v.normalized
    }
}

private struct EvidenceBucket: Sendable {
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

@inlinable func square(_ x: Double) -> Double { x * x }

/// A cone around the upright, with the cosines 0.01° inside and outside its edge: a direction whose
/// cosine is above `inside` is in it, below `outside` is not, between needs the arccosine.
private struct Cone: Sendable {
    let degrees: Double
    let inside: Double
    let outside: Double

    init(degrees: Double) {
        self.degrees = degrees
        inside = Self.cosine(max(0, degrees - 0.01))
        outside = Self.cosine(degrees + 0.01)
    }

    /// cos of an angle of at most 90°, in degrees: its Taylor series to the x¹⁴ term (error below
    /// 1e-10), the core having no C library's `cos`.
    static func cosine(_ degrees: Double) -> Double {
        let x = degrees * Double.pi / 180
        var term = 1.0, sum = 1.0
        for n in stride(from: 2, through: 14, by: 2) {
            term *= -x * x / Double((n - 1) * n)
            sum += term
        }
        return sum
    }
}

/// acos in degrees without Foundation (the standard library has no acos): Abramowitz–Stegun's
/// polynomial, good to 2e-8 rad (about 1e-6°), far below what a posture needs.
@inlinable @inline(__always) func acosDegrees(_ x: Double) -> Double {
    // Abramowitz–Stegun 4.4.46 (error below 2e-8 rad), its polynomial evaluated as pairs
    // (Estrin's scheme) rather than one long chain: it runs on every sample.
    let ax = abs(x)
    let x2 = ax * ax
    let low = (1.5707963050 - 0.2145988016 * ax) + (0.0889789874 - 0.0501743046 * ax) * x2
    let high = (0.0308918810 - 0.0170881256 * ax) + (0.0066700901 - 0.0012624911 * ax) * x2
    let p = low + high * (x2 * x2)
    let r = (1 - ax).squareRoot() * p
    let radians = x >= 0 ? r : Double.pi - r
    return radians * 180 / Double.pi
}
