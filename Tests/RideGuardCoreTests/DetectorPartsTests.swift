// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

/// The detector's parts, each on its own: the state machines `CrashDetector` composes.
struct DetectorPartsTests {
    let configuration = DetectorConfiguration()
    let g = standardGravity

    @Test func theMathsAgreeWithTheTrigonometry() {
        #expect(abs(acosDegrees(0) - 90) < 1e-5)
        #expect(abs(acosDegrees(0.5) - 60) < 1e-5)
        #expect(abs(acosDegrees(-1) - 180) < 1e-5)
        #expect(abs(Cone.cosine(60) - 0.5) < 1e-9)
        // A quarter turn about z: the world's x is seen along the body's −y.
        var q = Quaternion.identity
        for _ in 0..<1000 { q.rotate(by: Vector3(0, 0, Double.pi / 2 / 1000)) }
        let seen = q.inverseRotate(Vector3(1, 0, 0))
        #expect(abs(seen.x) < 1e-6 && abs(seen.y + 1) < 1e-6)
        var m = SymmetricMatrix3()
        for i in 0..<200 { m.blend(toward: Vector3(i % 2 == 0 ? 1 : -1, 0.1, 0), weight: 0.05) }
        let axis = m.principalAxis(start: Vector3(0.3, 1, 0), orthogonalTo: Vector3(0, 0, 1))
        #expect(axis.map { abs($0.x) > 0.99 } == true)
    }

    @Test func smoothingFollowsAStepAndLeavesTheGyroAloneWithoutOne() {
        var smoothing = Smoothing()
        smoothing.start(IMUSample(t: 0, accel: .zero))
        let dt = 1.0 / 200
        for i in 1...200 { smoothing.add(IMUSample(t: Double(i) * dt, accel: Vector3(10, 0, 0)), alpha: dt / (0.2 + dt)) }
        // Two first-order stages of 0.2 s after 1 s: 1 − e⁻⁵(1 + 5) ≈ 96 % of the step.
        #expect(smoothing.force.x > 9.4 && smoothing.force.x < 9.8, "\(smoothing.force)")
        #expect(smoothing.rotation == .zero)
    }

    @Test func stillnessEndsWhenTheForceMovesOrGPSSaysMoving() {
        var smoothing = Smoothing()
        let rest = IMUSample(t: 0, accel: Vector3(0, 0, g))
        smoothing.start(rest)
        var stillness = Stillness()
        stillness.start(rest)
        let r1 = stillness.update(smoothing, hasGyro: false, speed: nil, t: 1, configuration: configuration)
        #expect(r1)
        #expect(stillness.since == 1 && stillness.began(within: 2, of: 2.5) && !stillness.began(within: 2, of: 3.5))
        let r2 = stillness.update(smoothing, hasGyro: false, speed: 5, t: 2, configuration: configuration)
        #expect(!r2)
        #expect(stillness.since.isNaN)
        smoothing.add(IMUSample(t: 3, accel: Vector3(5, 0, g)), alpha: 1)
        let moved = stillness.update(smoothing, hasGyro: false, speed: nil, t: 3, configuration: configuration)
        let anchored = stillness.update(smoothing, hasGyro: false, speed: nil, t: 3.5, configuration: configuration)
        #expect(!moved && anchored)   // it moved, and settled where it went
        smoothing.add(IMUSample(t: 4, accel: Vector3(0, 0, g)), alpha: 1)
        let r3 = stillness.update(smoothing, hasGyro: false, speed: nil, t: 4, configuration: configuration)
        #expect(!r3)
    }

    @Test func aHardHorizontalPulseIsACollisionAndABumpIsNot() {
        var collisions = Collisions(configuration: configuration)
        var events: [DetectorEvent] = []
        let up = Vector3(0, 0, 1), upright = Vector3(0, 0, g), dt = 0.005
        collisions.start(upright)
        var deltaV: Double?
        var t = 0.0
        for i in 0..<60 {   // 0.1 s at 10 g backwards, then 0.2 s upright
            t = Double(i) * dt
            let a = i < 20 ? Vector3(-10 * g, 0, g) : upright
            if let v = collisions.pulse(a, up: up, gravity: g, smoothed: upright, seesGravity: true, t: t, dt: dt, emit: { events.append($0) }) {
                deltaV = v
            }
        }
        #expect(deltaV.map { $0 > 9 && $0 < 10.5 } == true, "\(String(describing: deltaV))")
        // At rest at once (the smoothed force steady from the pulse's end): a collision's stop.
        var pinned = collisions
        for i in 1...200 { _ = pinned.pulse(upright, up: up, gravity: g, smoothed: upright, seesGravity: true, t: t + Double(i) * dt, dt: dt, emit: { _ in }) }
        #expect(pinned.collidedRecently(at: t + 1))
        #expect(!pinned.collidedRecently(at: t + configuration.collisionWatchSeconds + 1))
        // Ridden on, then braked at 0.4 g for 3 s to a stop: it came to rest late, by its rider's hand.
        var ridden = collisions
        var u = t
        for i in 1...1000 {
            u = t + Double(i) * dt
            let smoothed = u < t + 3 ? Vector3(-0.4 * g * (i % 200 < 100 ? 1 : 0.5), 0, g) : upright
            _ = ridden.pulse(smoothed, up: up, gravity: g, smoothed: smoothed, seesGravity: true, t: u, dt: dt, emit: { _ in })
        }
        #expect(!ridden.collidedRecently(at: u), "at rest only 3 s later: ridden to a stop")
        #expect(events.contains { if case .impact(_, let peak, _, _, .collision) = $0 { peak > 9 } else { false } })

        var bumped = Collisions(configuration: configuration)
        for i in 0..<60 {   // 3 g straight up: a pothole, no horizontal delta-v
            let a = i < 20 ? Vector3(0, 0, 4 * g) : upright
            _ = bumped.pulse(a, up: up, gravity: g, smoothed: upright, seesGravity: true, t: Double(i) * dt, dt: dt, emit: { _ in })
        }
        #expect(!bumped.collidedRecently(at: 1))
    }

    @Test func aGPSSpeedDropIsACollisionOnlyWithAPulseJustBefore() {
        var alone = Collisions(configuration: configuration)
        let r4 = alone.speed(15, t: 0)
        #expect(r4 == nil)
        let unexplained = alone.speed(2, t: 1)
        #expect(unexplained == nil)      // no pulse: a glitch, or GPS
        #expect(!alone.collidedRecently(at: 1))

        var struck = Collisions(configuration: configuration)
        let up = Vector3(0, 0, 1), upright = Vector3(0, 0, g)
        for i in 0..<40 {
            let a = i < 10 ? Vector3(0, 0, 5 * g) : upright
            _ = struck.pulse(a, up: up, gravity: g, smoothed: upright, seesGravity: true, t: 0.5 + Double(i) * 0.005, dt: 0.005, emit: { _ in })
        }
        let r5 = struck.speed(15, t: 0.4)
        #expect(r5 == nil)
        let r6 = struck.speed(2, t: 1.2)
        #expect(r6 == 13)
        #expect(struck.collidedRecently(at: 2), "GPS saw the stop: no settling asked")
        #expect(struck.speedReading == 2)
    }

    @Test func evidenceKeepsTheLastTenToTwentySeconds() {
        var evidence = Evidence()
        evidence.start(at: 0)
        evidence.record(IMUSample(t: 0.5, accel: Vector3(0, 0, 3 * g), gyro: Vector3(4, 0, 0)), t: 0.5, configuration: configuration)
        #expect(abs(evidence.peakG - 3) < 1e-9 && evidence.peakRotation == 4 && evidence.swingSquared == 16)
        #expect(evidence.landingTime == 0.5)
        evidence.record(IMUSample(t: 2, accel: Vector3(0, 0, g)), t: 2, configuration: configuration)
        evidence.record(IMUSample(t: 3, accel: Vector3(0, 0, g)), t: 3, configuration: configuration)
        #expect(evidence.swingSquared == 0)                    // the swing is the last one to two seconds'
        evidence.record(IMUSample(t: 12, accel: Vector3(0, 0, g)), t: 12, configuration: configuration)
        #expect(abs(evidence.peakG - 3) < 1e-9)                // 10–20 s ago: still evidence
        evidence.record(IMUSample(t: 23, accel: Vector3(0, 0, g)), t: 23, configuration: configuration)
        #expect(abs(evidence.peakG - 1) < 1e-9 && evidence.peakRotation == 0)
        let crash = evidence.crash(.lyingStill, postureDegrees: 80, stillFor: 2, lyingSince: .nan)
        #expect(crash.peakRotationDegreesPerSecond == nil && crash.fallTime == nil && crash.postureDegrees == 80)
    }

    @Test func anAxisThatNeverMovesIsDeadOnlyAfterARestShortOfOneG() {
        func ride(sawDeficientRest: Bool) -> (events: [DetectorEvent], forwardLost: Bool) {
            var axes = AxisWatch()
            axes.start(at: 0)
            if sawDeficientRest { axes.sawDeficientRestNow() }
            var events: [DetectorEvent] = []
            var forwardLost = false
            let dt = 0.01
            for i in 0..<7000 {
                let t = Double(i) * dt
                let swing = 3 * (t.truncatingRemainder(dividingBy: 4) < 2 ? 1.0 : -1.0)
                let shake = i % 2 == 0 ? 1.0 : -1.0
                let a = Vector3(swing + shake, 0, 7 + swing + shake)     // y reads nothing at all
                let smoothed = Vector3(swing, 0, 7 + swing)
                if axes.watch(a, smoothed: smoothed, t: t, dt: dt, emit: { events.append($0) }) { forwardLost = true }
            }
            return (events, forwardLost)
        }
        let dead = ride(sawDeficientRest: true)
        #expect(dead.events.contains { if case .sensorFault(_, .deadAxis(1)) = $0 { true } else { false } }, "\(dead.events)")
        #expect(dead.forwardLost)
        let healthy = ride(sawDeficientRest: false)
        #expect(!healthy.events.contains { if case .sensorFault(_, .deadAxis) = $0 { true } else { false } })
        #expect(healthy.forwardLost)       // silent all the same: the forward axis is not trusted
    }

    @Test func theFirstUprightIsTheMeanOfHalfASecondAndAPartialOneIsReported() {
        var reference = UprightReference(configuration: configuration)
        reference.start(at: 0)
        var events: [DetectorEvent] = []
        var up: Vector3?
        for i in 1...100 where up == nil { up = reference.learnFirst(Vector3(0, 0, g), t: Double(i) * 0.01, emit: { events.append($0) }) }
        #expect(up == Vector3(0, 0, 1) && events.isEmpty && !reference.confirmed)
        #expect(abs(reference.postureCosine(Vector3(g, 0, 0))) < 1e-12)     // on its side: 90°

        var partial = UprightReference(configuration: configuration)
        partial.start(at: 0)
        up = nil
        for i in 1...100 where up == nil { up = partial.learnFirst(Vector3(0, 0, 0.6 * g), t: Double(i) * 0.01, emit: { events.append($0) }) }
        #expect(events.contains { if case .sensorFault(_, .implausibleGravity) = $0 { true } else { false } })
        // A dead axis may hide 0.8 g: the posture is the smallest the readings allow.
        #expect(partial.postureCosine(Vector3(0.6 * g, 0, 0)) > 0.5)

        var calibrated = DetectorConfiguration()
        calibrated.calibratedUp = [0, 1, 0]
        let given = UprightReference(configuration: calibrated)
        #expect(given.confirmed && given.force == Vector3(0, g, 0))
    }

    @Test func ridingRefinesTheUprightOnlyInsideTheCone() {
        var reference = UprightReference(configuration: configuration)
        reference.start(at: 0)
        for i in 1...60 { _ = reference.learnFirst(Vector3(0, 0.1 * g, g), t: Double(i) * 0.01, emit: { _ in }) }
        let first = try! #require(reference.force?.normalized)
        let shaken = Vector3(0.5, 0.5, 0.5)
        for _ in 0..<2000 {
            reference.learn(Vector3(0, 0, g), magnitude: g, up: reference.force!.normalized!, plausible: true, still: false, dt: 0.01,
                            activity: shaken, rotation: .zero, speed: .nan, configuration: configuration)
        }
        #expect(reference.force!.normalized!.dot(Vector3(0, 0, 1)) > first.dot(Vector3(0, 0, 1)))
        let before = reference.force!
        // A bike pushed at a 30° lean at walking pace teaches nothing.
        for _ in 0..<500 {
            reference.learn(Vector3(0, 0.5 * g, 0.866 * g), magnitude: g, up: reference.force!.normalized!, plausible: true, still: false, dt: 0.01,
                            activity: shaken, rotation: .zero, speed: 1, configuration: configuration)
        }
        #expect(reference.force == before)
    }

    @Test func theForwardAxisIsWhereTheHorizontalForceVaries() {
        var forward = ForwardAxis()
        let up = Vector3(0, 0, 1)
        for i in 0..<3000 {
            let braking = (i / 100) % 2 == 0 ? 0.3 * g : -0.3 * g      // braking and accelerating along x
            forward.learn(Vector3(braking, 0, g), up: up, gravity: g, usable: true, dt: 0.01, t: Double(i) * 0.01)
        }
        #expect(forward.axis.map { abs($0.x) > 0.99 } == true, "\(String(describing: forward.axis))")
        forward.forget()
        #expect(forward.axis == nil)
        var unusable = ForwardAxis()
        for i in 0..<3000 {
            let braking = (i / 100) % 2 == 0 ? 0.3 * g : -0.3 * g
            unusable.learn(Vector3(braking, 0, g), up: up, gravity: g, usable: false, dt: 0.01, t: Double(i) * 0.01)
        }
        #expect(unusable.axis == nil)
    }

    @Test func theGyroMeasuresTheTiltSinceTheBikeStoodStillAndUpright() {
        var tilt = GyroTilt()
        let upright = Vector3(0, 0, g)
        #expect(!tilt.usable(at: 0))
        tilt.anchor(still: true, stillFor: 0, upright: true, smoothed: upright, rotation: .zero, dt: 0.01, t: 0)
        tilt.anchor(still: true, stillFor: 1.5, upright: true, smoothed: upright, rotation: .zero, dt: 0.01, t: 1.5)
        #expect(tilt.usable(at: 2) && !tilt.usable(at: 1.5 + DetectorConfiguration.gyroAnchorLifetimeSeconds + 1))
        for _ in 0..<100 { tilt.integrate(Vector3(Double.pi / 2, 0, 0), dt: 0.01) }      // a quarter turn in a second
        #expect(abs(tilt.tilt(up: Vector3(0, 0, 1)) - 90) < 0.5)
        tilt.invalidate()
        #expect(!tilt.usable(at: 2))
    }

    @Test func aRidingWindowClosesAfterItsMovingSecondsAndBreaksOffWhenIdle() {
        var spell = RidingSpell()
        var window: RidingSpell.Window?
        var t = 0.0
        while window == nil && t < 10 {
            t += 0.01
            let r7 = spell.goesOn(active: true, t: t)
            #expect(r7)
            window = spell.add(direction: Vector3(0, 0, 1), force: Vector3(0, 0, g), cosine: 1, moving: true, needed: 5, dt: 0.01)
        }
        let closed = try! #require(window)
        #expect(abs(t - 5) < 0.02 && closed.consistent && abs(closed.magnitude - g) < 1e-9)
        #expect(abs(closed.halfCosines.0 - 1) < 1e-9 && abs(closed.halfCosines.1 - 1) < 1e-9)
        #expect(!spell.started)

        _ = spell.add(direction: Vector3(0, 0, 1), force: Vector3(0, 0, g), cosine: 1, moving: true, needed: 5, dt: 0.01)
        let r8 = spell.goesOn(active: false, t: t + 1)
        #expect(r8 && spell.started)
        let r9 = spell.goesOn(active: false, t: t + 2.5)
        #expect(!r9 && !spell.started)
    }

    @Test func aFallLeavesUprightInTenthsOfASecondAndALoweringTakesSeconds() {
        var swung = Evidence()
        swung.start(at: 0)
        swung.record(IMUSample(t: 0.1, accel: Vector3(0, 0, standardGravity), gyro: Vector3(3, 0, 0)), t: 0.1, configuration: configuration)
        var falls = FallWatch()
        let r10 = falls.watch(postureDegrees: 5, evidence: swung, t: 0, configuration: configuration)
        #expect(!r10)
        let r11 = falls.watch(postureDegrees: 40, evidence: swung, t: 0.1, configuration: configuration)
        #expect(!r11)
        let r12 = falls.watch(postureDegrees: 75, evidence: swung, t: 0.3, configuration: configuration)
        #expect(r12)
        #expect(falls.fellSinceUpright && falls.fastTiltTime == 0.3)
        let r13 = falls.watch(postureDegrees: 5, evidence: swung, t: 5, configuration: configuration)
        #expect(!r13 && !falls.fellSinceUpright)

        var still = Evidence()
        still.start(at: 0)
        still.record(IMUSample(t: 0.1, accel: Vector3(0, 0, standardGravity), gyro: Vector3(0.5, 0, 0)), t: 0.1, configuration: configuration)
        var lowered = FallWatch()
        _ = lowered.watch(postureDegrees: 5, evidence: still, t: 0, configuration: configuration)
        var fell = false
        for i in 1...40 { fell = lowered.watch(postureDegrees: 5 + Double(i) * 2, evidence: still, t: Double(i) * 0.1, configuration: configuration) || fell }
        #expect(!fell && !lowered.fellSinceUpright && lowered.fastTiltTime == -.infinity)
    }

    @Test func aBikeIsParkedAfterAQuietStillnessAndUnparkedByItsEngine() {
        var parking = Parking()
        var t = 0.0
        while t < configuration.parkedAfterSeconds + 1 {
            parking.update(still: true, shaking: false, gpsMoving: false, lying: false, riding: false, t: t, configuration: configuration)
            t += 1
        }
        #expect(parking.context == .parked && parking.nobodyRiding)
        let parkedAt = t
        while t < parkedAt + configuration.unparkSeconds + 1 {
            parking.update(still: true, shaking: true, gpsMoving: false, lying: false, riding: false, t: t, configuration: configuration)
            t += 1
        }
        #expect(parking.context == .stopped)
        parking.setIgnition(false)
        #expect(parking.context == .parked)
        parking.setIgnition(true)
        #expect(parking.context == .stopped)
        parking.update(still: false, shaking: true, gpsMoving: false, lying: false, riding: true, t: t, configuration: configuration)
        #expect(parking.context == .riding)
    }
}
