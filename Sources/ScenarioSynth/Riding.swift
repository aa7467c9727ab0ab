// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// How a rider rides: speeds, lean, road and the odd stunt.
enum RideStyle {
    case normal, hard, rough, offRoad

    var speeds: ClosedRange<Double> {
        switch self {
        case .normal: 8...25
        case .hard: 15...42
        case .rough: 5...15
        case .offRoad: 4...14
        }
    }
    var maximumLean: Double {   // degrees
        switch self {
        case .normal: 32
        case .hard: 55
        case .rough: 22
        case .offRoad: 30
        }
    }
    var roughness: Double {     // g
        switch self {
        case .normal, .hard: 0.05
        case .rough: 0.2
        case .offRoad: 0.3
        }
    }
    var potholesPerMinute: Double {
        switch self {
        case .normal: 1
        case .hard: 0.5
        case .rough: 6
        case .offRoad: 4
        }
    }
}

private struct Shock {
    var start: Double
    var peak: Double           // m/s² at the crest
    var direction: Vector3     // world
}

extension BikeSimulator {
    /// Bike on its side stand, the rider climbs on, lifts it upright, starts the engine.
    /// `lifted`: the bike already stands on its side stand (it was just lifted onto it).
    mutating func climbOnAndStart(lifted: Bool = false) {
        if !lifted {
            let side = -1.0  // side stands are on the left: the bike leans left (negative roll)
            roll = side * rng.uniform(8...16) * .pi / 180
            run(rng.uniform(1...4)) { _, _ in .zero }
        }
        let standRoll = roll
        let rock = rng.uniform(1.5...3)
        run(rock) { sim, x in
            sim.roll = standRoll + 0.04 * sin(2 * .pi * 1.7 * x * rock) * (1 - x)
            return Vector3(0, 0, 0.3 * BikeSimulator.g * sin(2 * .pi * 2.3 * x * rock) * (1 - x))
        }
        let hold = rng.uniform(-4...4) * .pi / 180
        run(1.0) { sim, x in
            sim.roll = standRoll + (hold - standRoll) * smoothstep(x)
            return .zero
        }
        engine = .idle
        run(rng.uniform(2...6)) { _, _ in .zero }
    }

    /// Rides for `duration` seconds: speed changes, stops, turns, road shocks and the style's stunts.
    mutating func ride(for duration: Double, style: RideStyle) {
        let rough = (rng.uniform(0...6.28), rng.uniform(0...6.28), rng.uniform(0...6.28))
        var target = rng.uniform(style.speeds)
        var nextChange = rng.uniform(8...40)
        var brakeLimit = 0.3 * Self.g
        var smoothedLongitudinal = 0.0
        var turn = (start: rng.uniform(2...8), length: 5.0, lean: 0.0)
        var shocks: [Shock] = []
        var nextShock = -log(max(rng.uniform(0...1), 1e-9)) * 60 / style.potholesPerMinute
        var nextStunt = rng.uniform(10...40)
        var stunt: (kind: Int, start: Double, length: Double, size: Double)? = nil
        var footLean = 0.0
        let wheelieBalance = rng.uniform(45...55) * .pi / 180  // the centre of mass seen from the rear contact
        let steps = Int(duration / dt)
        engine = .running
        for i in 0..<steps {
            let now = Double(i) * dt
            // Speed plan: cruise, change, sometimes stop at a junction or brake hard.
            if now >= nextChange {
                if rng.chance(0.15) && i < steps - Int(30 / dt) {
                    target = 0
                    nextChange = now + rng.uniform(6...35)
                    footLean = rng.uniform(-6...6) * .pi / 180
                } else {
                    let next = rng.uniform(style.speeds)
                    let hardStop = style == .hard && next < speed - 8
                    brakeLimit = (hardStop ? rng.uniform(0.85...1.1) : rng.uniform(0.15...0.4)) * Self.g
                    target = next
                    nextChange = now + rng.uniform(8...45)
                }
            }
            let accelerationLimit = (style == .hard ? 0.5 : 0.25) * Self.g
            let wanted = max(-brakeLimit, min(accelerationLimit, 0.8 * (target - speed)))
            smoothedLongitudinal += (wanted - smoothedLongitudinal) * dt / 0.3
            var longitudinal = smoothedLongitudinal
            var vertical = 0.0

            // Turns: a raised-cosine lean, as deep as the speed allows.
            if now >= turn.start + turn.length {
                turn = (now + rng.uniform(1...20), rng.uniform(3...12), rng.uniform(5...style.maximumLean) * rng.sign())
            }
            var lean = 0.0
            if now >= turn.start {
                let x = (now - turn.start) / turn.length
                lean = turn.lean * .pi / 180 * (1 - cos(2 * .pi * x)) / 2 * max(0, min(1, (speed - 4) / 6))
            }
            lean += 0.01 * sin(2 * .pi * 0.4 * now)

            // Road: undulation, potholes, kerbs and speed bumps.
            let roadFactor = min(1, speed / 8)
            vertical += style.roughness * Self.g * roadFactor
                * (sin(2 * .pi * 1.3 * now + rough.0) + 0.7 * sin(2 * .pi * 2.9 * now + rough.1) + 0.5 * sin(2 * .pi * 4.3 * now + rough.2))
            if now >= nextShock {
                if speed > 3 {
                    let peak = rng.uniform(2...8) * Self.g
                    let kerb = rng.chance(0.3) ? rng.uniform(0.1...0.35) : 0
                    shocks.append(Shock(start: now, peak: peak, direction: (Vector3(0, 0, 1) - forward * kerb).normalized!))
                }
                nextShock = now + -log(max(rng.uniform(0...1), 1e-9)) * 60 / style.potholesPerMinute
            }
            shocks.removeAll { now - $0.start > 0.25 }
            var shockAcceleration = Vector3.zero
            for shock in shocks {
                let tau = now - shock.start
                shockAcceleration += shock.direction * (shock.peak / 0.55 * sin(2 * .pi * 12 * tau) * exp(-tau / 0.03))
            }

            // Stunts: wheelies on hard rides, jumps off road.
            pitch = -0.05 * longitudinal / Self.g
            if stunt == nil && now >= nextStunt && speed > 8 {
                if style == .hard {
                    stunt = (0, now, rng.uniform(2...4.5), rng.uniform(20...60) * .pi / 180)
                } else if style == .offRoad {
                    let airtime = rng.uniform(0.3...1.2)
                    stunt = (1, now, 0.25 + airtime + 0.3, airtime)
                }
                nextStunt = now + rng.uniform(20...90)
            }
            var airborne = false
            if let s = stunt {
                let tau = now - s.start
                if tau > s.length {
                    stunt = nil
                } else if s.kind == 0 {
                    // Held up, the front wheel off the ground: no net torque about the rear contact,
                    // so the force points through the centre of mass. That takes g·tan(balance − pitch)
                    // of acceleration below the balance point, and the rear brake beyond it.
                    let up = smoothstep(tau / 0.6) * (1 - smoothstep((tau - (s.length - 0.5)) / 0.5))
                    pitch += s.size * up
                    longitudinal = up > 0.05 ? Self.g * tan(wheelieBalance - s.size * up) : longitudinal
                    if tau > s.length - 0.1 { vertical += 2 * Self.g * pulse((tau - (s.length - 0.1)) / 0.1) }
                } else {
                    let airtime = s.size
                    let launch = Self.g * airtime / 2
                    if tau < 0.25 {
                        vertical += launch / 0.25
                        pitch += 0.15 * smoothstep(tau / 0.25)
                    } else if tau < 0.25 + airtime {
                        airborne = true
                        pitch += 0.15 - 0.25 * (tau - 0.25) / airtime
                    } else {
                        let landing = 0.3
                        let peak = Double.pi * launch / (2 * landing)
                        vertical += peak * pulse((tau - 0.25 - airtime) / landing)
                        pitch += -0.1 * (1 - (tau - 0.25 - airtime) / landing)
                    }
                }
            }

            speed = max(0, speed + longitudinal * dt)
            if speed < 0.5 && target == 0 {
                speed = 0
                longitudinal = 0
                roll += (footLean - roll) * dt / 0.5
            } else {
                roll = lean
            }
            let lateral = speed > 1 ? tan(roll) * Self.g : 0
            if speed > 1 { travel -= tan(roll) * Self.g / speed * dt }
            yaw = travel
            let accel: Vector3
            if airborne {
                accel = Vector3(0, 0, -Self.g)
            } else {
                accel = forward * longitudinal + right * lateral + Vector3(0, 0, vertical) + shockAcceleration
            }
            step(accel: accel)
        }
    }

    /// Brakes gently to a stop and puts a foot down.
    mutating func stop() {
        let decel = rng.uniform(0.15...0.35) * Self.g
        while speed > 0 {
            speed = max(0, speed - decel * dt)
            roll *= 0.98
            pitch = 0.05 * decel / Self.g
            step(accel: forward * (speed > 0 ? -decel : 0))
        }
        pitch = 0
        let foot = rng.uniform(-5...5) * .pi / 180
        run(0.8) { sim, x in
            sim.roll += (foot - sim.roll) * smoothstep(x) * 0.1
            return .zero
        }
    }

    /// Stops, leans onto the side stand, switches off, climbs off, and leaves the bike be.
    mutating func parkOnSideStand() {
        stop()
        run(rng.uniform(1...4)) { _, _ in .zero }
        let stand = -rng.uniform(8...16) * .pi / 180
        let from = roll
        run(rng.uniform(0.8...1.5)) { sim, x in
            sim.roll = from + (stand - from) * smoothstep(x)
            return .zero
        }
        engine = .off
        let rock = rng.uniform(1.5...3)
        run(rock) { sim, x in
            sim.roll = stand + 0.05 * sin(2 * .pi * 1.9 * x * rock) * (1 - x)
            return Vector3(0.1 * BikeSimulator.g * sin(2 * .pi * 3.1 * x * rock), 0, 0.3 * BikeSimulator.g * sin(2 * .pi * 2.2 * x * rock)) * (1 - x)
        }
        run(rng.uniform(15...60)) { _, _ in .zero }
    }

    /// Gets to `speed` with the bike leaned `lean` radians (positive to the right) over `seconds`.
    mutating func setUp(speed wanted: Double, lean: Double, seconds: Double) {
        let fromSpeed = speed, fromRoll = roll
        engine = .running
        run(seconds) { sim, x in
            let s = smoothstep(x)
            let previous = sim.speed
            sim.speed = fromSpeed + (wanted - fromSpeed) * s
            sim.roll = fromRoll + (lean - fromRoll) * s
            sim.pitch = 0
            let lateral = sim.speed > 1 ? tan(sim.roll) * BikeSimulator.g : 0
            if sim.speed > 1 { sim.travel -= tan(sim.roll) * BikeSimulator.g / sim.speed * sim.dt }
            sim.yaw = sim.travel
            return sim.forward * ((sim.speed - previous) / sim.dt) + sim.right * lateral
        }
    }

    /// The bike lies where it came to rest; maybe the engine idles; maybe someone lifts it at the end.
    mutating func lieStill(_ seconds: Double, idling: Bool, liftAtEnd: Bool) {
        speed = 0
        scrape = 0
        engine = idling ? .idle : .off
        run(seconds) { _, _ in .zero }
        guard liftAtEnd else { return }
        engine = .off
        let fromRoll = roll, fromPitch = pitch
        let target: Double = fromRoll > 2 ? 2 * Double.pi : (fromRoll < -2 ? -2 * Double.pi : 0)
        run(rng.uniform(1.5...3)) { sim, x in
            sim.roll = fromRoll + (target - fromRoll) * smoothstep(x)
            sim.pitch = fromPitch * (1 - smoothstep(x))
            return Vector3(0, 0, 0.5 * BikeSimulator.g * sin(2 * .pi * x))
        }
        roll = 0
        run(rng.uniform(3...10)) { _, _ in .zero }
    }
}
