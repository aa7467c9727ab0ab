// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// Hard hits a bike rides through: a pothole's far edge and a kerb at road speed, and off road a
/// jump, a drop off a ledge and a row of whoops. Each is physics, not a template: a wheel striking an
/// edge is pushed along the line from the edge to the axle, and the frame keeps what the wheel
/// passes on through the suspension; a flight is free fall (the sensor reads about nothing) and its
/// landing takes away the vertical speed the fall gave, in the suspension's stroke, whatever the
/// frame's pitch at touchdown.
enum HardHit: CaseIterable {
    case pothole, kerb, jump, drop, whoops

    /// Ridden off road (the bike gets there on a track), or on the road.
    var offRoad: Bool { self == .jump || self == .drop || self == .whoops }
}

extension BikeSimulator {
    /// Rides up to the hit and takes it; the bike rides on after it, at the speed it kept.
    mutating func take(_ hit: HardHit) {
        switch hit {
        case .pothole, .kerb:
            setUp(speed: rng.uniform(20...110) / 3.6, lean: rng.uniform(-5...5) * .pi / 180, seconds: 3)
            strikeEdge(kerb: hit == .kerb)
            setUp(speed: speed, lean: 0, seconds: 0.3)
            // The rear wheel meets the same edge a wheelbase later, weaker (the rider's weight unloads it).
            strikeEdge(kerb: hit == .kerb, share: rng.uniform(0.4...0.7))
        case .jump:
            setUp(speed: rng.uniform(5...14), lean: 0, seconds: 3)
            fly(launch: rng.uniform(1...4), drop: rng.uniform(0.3...2))
        case .drop:
            setUp(speed: rng.uniform(2...10), lean: 0, seconds: 3)
            fly(launch: 0, drop: rng.uniform(0.3...2))
        case .whoops:
            setUp(speed: rng.uniform(8...14), lean: 0, seconds: 3)
            for _ in 0..<Int(rng.next() % 5 + 4) {
                fly(launch: rng.uniform(0.5...1.5), drop: rng.uniform(0...0.3))
                setUp(speed: speed, lean: 0, seconds: rng.uniform(0.1...0.3))
            }
        }
    }

    /// A wheel strikes an edge: a pothole's far side (3–10 cm deep: the push is 48–64° above the
    /// horizontal) or a kerb (8–15 cm high: 30–48°). The frame's peak and stroke give its delta-v.
    /// The edge turns the wheel's path up (by 40–55° for a kerb): the wheel (15–25 kg) loses up to
    /// 40 % of its forward speed, and the whole bike with its rider (250–330 kg) only what the fork
    /// passes on of that: 2–8 % of its speed, whatever the peak. The vertical speed it gains, the
    /// frame gives back as the suspension extends.
    mutating func strikeEdge(kerb: Bool, share: Double = 1) {
        let angle = (kerb ? rng.uniform(30...48) : rng.uniform(48...64)) * .pi / 180
        let duration = rng.uniform(0.02...0.06)
        var peak = share * (kerb ? rng.uniform(5...15) : rng.uniform(3...12)) * Self.g
        let horizontalLoss = 2 * peak * duration / .pi * cos(angle)
        let largestLoss = rng.uniform(0.02...0.08) * speed
        if horizontalLoss > largestLoss { peak *= largestLoss / horizontalLoss }
        let deltaV = 2 * peak * duration / .pi
        let direction = Vector3(0, 0, sin(angle)) - forward * cos(angle)
        let from = speed
        let nose = (kerb ? 1.0 : -1.0) * rng.uniform(2...5) * .pi / 180
        run(duration) { sim, x in
            sim.speed = from - deltaV * cos(angle) * (1 - cos(.pi * x)) / 2
            sim.pitch = nose * sin(.pi * x)
            return direction * (peak * pulse(x))
        }
        pitch = 0
        let rebound = rng.uniform(0.15...0.3)
        let settle = deltaV * sin(angle) / rebound
        run(rebound) { _, _ in Vector3(0, 0, -settle) }
    }

    /// Off the ground with `launch` m/s upward, landing `drop` metres lower: free fall, then a landing
    /// in 0.08–0.2 s (the suspension's stroke) that takes away the vertical speed, 5–20 g for a 2 m
    /// drop. The frame pitches in the air and lands anywhere from nose-down to nose-up; a little of
    /// the forward speed goes as the rear tyre spins up.
    mutating func fly(launch: Double, drop: Double) {
        if launch > 0 {
            let ramp = rng.uniform(0.15...0.3)
            let lift = rng.uniform(5...20) * .pi / 180
            run(ramp) { sim, x in
                sim.pitch = lift * smoothstep(x)
                return Vector3(0, 0, launch / ramp)
            }
        }
        let airtime = (launch + (launch * launch + 2 * Self.g * drop).squareRoot()) / Self.g
        let landingSpeed = (launch * launch + 2 * Self.g * drop).squareRoot()
        let takeoffPitch = pitch
        let touchdownPitch = rng.uniform(-15...20) * .pi / 180
        run(airtime) { sim, x in
            sim.pitch = takeoffPitch + (touchdownPitch - takeoffPitch) * smoothstep(x)
            return Vector3(0, 0, -BikeSimulator.g)
        }
        let stroke = rng.uniform(0.08...0.2)
        let peak = Double.pi * landingSpeed / (2 * stroke)
        let spinUp = rng.uniform(0...0.15)
        let from = speed
        run(stroke) { sim, x in
            sim.speed = max(0, from - spinUp * landingSpeed * (1 - cos(.pi * x)) / 2)
            sim.pitch = touchdownPitch * (1 - smoothstep(x))
            return (Vector3(0, 0, 1) - sim.forward * spinUp) * (peak * pulse(x))
        }
        pitch = 0
    }

    /// After the hit the rider stops to look: a reaction of 0.8–3 s at the speed kept, then braking
    /// at 0.3–0.8 g to a stop, a foot down.
    mutating func stopToLook() {
        setUp(speed: speed, lean: 0, seconds: rng.uniform(0.8...3))
        let decel = rng.uniform(0.3...0.8) * Self.g
        while speed > 0 {
            speed = max(0, speed - decel * dt)
            pitch = -0.05 * decel / Self.g
            step(accel: forward * (speed > 0 ? -decel : 0))
        }
        pitch = 0
        let foot = rng.uniform(-6...6) * .pi / 180
        let from = roll
        run(0.8) { sim, x in
            sim.roll = from + (foot - from) * smoothstep(x)
            return .zero
        }
    }

    /// Sits on the stopped bike, feet down, for `seconds`: the engine idling or stalled, the bike
    /// swaying with the rider's balance (0.3–1.5° at 0.2–0.8 Hz) and their shifts of weight.
    mutating func sitOnStoppedBike(_ seconds: Double) {
        engine = rng.chance(0.6) ? .idle : .off
        let foot = roll
        let sway = rng.uniform(0.3...1.5) * .pi / 180
        let frequency = rng.uniform(0.2...0.8)
        let phase = rng.uniform(0...6.28)
        var shifts = (0..<Int(rng.next() % 4)).map { _ in rng.uniform(0...1) }
        shifts.sort()
        run(seconds) { sim, x in
            let elapsed = x * seconds
            sim.roll = foot + sway * sin(2 * .pi * frequency * elapsed + phase) + 0.3 * sway * sin(2 * .pi * 2.3 * frequency * elapsed)
            var lift = 0.0
            for at in shifts where abs(x - at) * seconds < 0.4 {
                lift += 0.08 * BikeSimulator.g * sin(2 * .pi * (x - at) * seconds / 0.4)
            }
            return Vector3(0, 0, lift)
        }
    }
}
