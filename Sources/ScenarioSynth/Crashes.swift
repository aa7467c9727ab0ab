// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// The ways a bike goes down. Each returns when the bike has come to rest.
extension BikeSimulator {
    /// Leaned into a turn at speed, then the front tucks; returns when control was lost.
    mutating func leanInAndLowside() -> Double {
        let side = rng.sign()
        setUp(speed: rng.uniform(10...25), lean: side * rng.uniform(25...45) * .pi / 180, seconds: 3)
        let start = t
        lowside()
        return start
    }

    /// Stopped for a few seconds, then the rider loses the bike; returns when it began to fall.
    mutating func stopAndTipOver() -> Double {
        stop()
        run(rng.uniform(2...15)) { _, _ in .zero }
        let start = t
        tipOver()
        return start
    }

    /// Front tucks in a turn: the bike falls to the inside, hits the ground, slides and spins.
    mutating func lowside() {
        let side: Double = roll >= 0 ? 1 : -1
        let restRoll = side * rng.uniform(70...100) * .pi / 180
        let fallTime = rng.uniform(0.25...0.5)
        let fromRoll = roll
        let impact = rng.uniform(1...8) * Self.g
        // Falling: the tyres let go, the bike drops onto its side.
        run(fallTime) { sim, x in
            sim.roll = fromRoll + (restRoll - fromRoll) * smoothstep(x)
            sim.speed = max(0, sim.speed - 0.3 * BikeSimulator.g * sim.dt)
            let lateral = tan(fromRoll) * BikeSimulator.g * (1 - x)
            return sim.forward * (-0.3 * BikeSimulator.g) + sim.right * lateral + Vector3(0, 0, -0.4 * BikeSimulator.g * x)
        }
        run(0.08) { _, x in Vector3(0, 0, impact * pulse(x)) }
        slide(friction: rng.uniform(0.35...0.6), spin: rng.uniform(0.3...2) * rng.sign(), restRoll: restRoll)
    }

    /// The rear grips again mid-slide: the bike snaps over, throws itself in the air, lands hard and tumbles.
    mutating func highside() {
        let side: Double = roll >= 0 ? 1 : -1
        let rate = rng.uniform(300...700) * .pi / 180 * -side
        let snap = rng.uniform(0.12...0.2)
        run(snap) { sim, _ in
            sim.roll += rate * sim.dt
            return Vector3(0, 0, 2.5 * BikeSimulator.g)
        }
        let air = rng.uniform(0.3...0.7)
        let pitchRate = rng.uniform(50...150) * .pi / 180 * rng.sign()
        run(air) { sim, _ in
            sim.roll += rate * sim.dt
            sim.pitch += pitchRate * sim.dt
            return Vector3(0, 0, -BikeSimulator.g)
        }
        let peak = rng.uniform(10...25) * Self.g
        let direction = (Vector3(0, 0, 1) + Vector3(rng.gaussian(), rng.gaussian(), 0) * 0.4).normalized!
        run(0.04) { sim, x in
            sim.roll += rate * 0.3 * sim.dt
            return direction * (peak * pulse(x))
        }
        // Tumbling to a stop, with a few more knocks; ends on its side or upside down.
        let upsideDown = rng.chance(0.3)
        let finalRoll = upsideDown ? Double.pi * (roll >= 0 ? 1 : -1) : nearestSide(of: roll) * rng.uniform(70...100) * .pi / 180
        let fromRoll = roll, fromPitch = pitch
        let finalPitch = rng.uniform(-10...10) * .pi / 180
        let tumble = rng.uniform(1...3)
        let friction = rng.uniform(0.5...0.8) * Self.g
        var knocks = (0..<Int(rng.next() % 3 + 2)).map { _ in (rng.uniform(0.05...0.85), rng.uniform(3...8) * Self.g) }
        knocks.sort { $0.0 < $1.0 }
        scrape = 1.0
        run(tumble) { sim, x in
            sim.roll = fromRoll + (finalRoll - fromRoll) * smoothstep(x)
            sim.pitch = fromPitch + (finalPitch - fromPitch) * smoothstep(x)
            sim.yaw += 1.5 * (1 - x) * sim.dt
            sim.speed = max(0, sim.speed - friction * sim.dt)
            var a = sim.forward * (sim.speed > 0 ? -friction : 0)
            for (at, size) in knocks where abs(x - at) < 0.03 / tumble {
                a += Vector3(0, 0, size * pulse((x - at) * tumble / 0.06 + 0.5))
            }
            sim.scrape = 0.8 * (1 - x)
            return a
        }
        if speed > 0 { slide(friction: 0.6, spin: 0.5, restRoll: roll) }
        scrape = 0
        speed = 0
    }

    /// A hard stop against an obstacle: a short, strong longitudinal pulse.
    /// Then the bike either falls over or stays pinned upright.
    mutating func collision(pinned: Bool) {
        let deltaV = speed * rng.uniform(0.75...1)
        let peak = rng.uniform(10...40) * Self.g
        let duration = max(0.04, min(0.2, Double.pi * deltaV / (2 * peak)))
        let actualPeak = Double.pi * deltaV / (2 * duration)
        let dive = rng.uniform(5...15) * .pi / 180
        let start = speed
        run(duration) { sim, x in
            sim.speed = start - deltaV * (1 - cos(.pi * x)) / 2
            sim.pitch = -dive * sin(.pi * x)
            return sim.forward * (-actualPeak * pulse(x)) + Vector3(0, 0, 0.3 * actualPeak * pulse(x))
        }
        pitch = 0
        if pinned {
            speed = 0
            let lean = rng.uniform(-12...12) * .pi / 180
            let settle = rng.uniform(0.3...0.8)
            run(settle) { sim, x in
                sim.roll = lean * smoothstep(x) + 0.03 * sin(2 * .pi * 3 * x) * (1 - x)
                return Vector3(0, 0, 0.5 * BikeSimulator.g * sin(2 * .pi * 2 * x) * (1 - x))
            }
        } else {
            let side = rng.sign()
            fallOver(from: side * rng.uniform(2...8) * .pi / 180, toward: side, impact: rng.uniform(2...5))
        }
    }

    /// Stopped, the rider loses the bike: it falls over like a pendulum and lands on its side.
    mutating func tipOver(rest: ClosedRange<Double> = 72...95) {
        let side: Double = roll >= 0 ? 1 : -1
        fallOver(from: roll == 0 ? side * 0.05 : roll, toward: side, impact: rng.uniform(1.5...4), rest: rest)
    }

    /// The engine off, the rider walks the bike (parking, manoeuvring): at walking pace, leaned 6–20°
    /// toward the rider, each step a small bump. Unlike a lean in a turn, nothing balances this
    /// lean: gravity really tilts in the bike's frame, for as long as it is pushed.
    mutating func push(for seconds: Double) {
        engine = .off
        let lean = rng.sign() * rng.uniform(6...20) * .pi / 180
        let pace = rng.uniform(0.6...1.4)
        let cadence = rng.uniform(1.6...2.1)
        let from = roll
        run(seconds) { sim, x in
            let elapsed = x * seconds
            sim.speed = pace * smoothstep(min(1, elapsed / 2))
            sim.roll = from + (lean - from) * smoothstep(min(1, elapsed / 3))
            let phase = 2 * .pi * cadence * elapsed
            return Vector3(0, 0, 0.1 * BikeSimulator.g * sin(phase)) + sim.right * (0.04 * BikeSimulator.g * sin(phase / 2))
        }
    }

    /// A slow U-turn, then the bike drops to the inside.
    mutating func slowTurnDrop(seconds: Double? = nil) {
        let side = rng.sign()
        let turning = seconds ?? rng.uniform(2...4)
        setUp(speed: rng.uniform(2...4), lean: side * rng.uniform(10...25) * .pi / 180, seconds: turning)
        fallOver(from: roll, toward: side, impact: rng.uniform(1.5...3))
    }

    // MARK: - Pieces

    /// An inverted pendulum about the tyres' contact line, from `start` roll to the ground.
    /// `rest`: the roll it comes to rest at, degrees (on the handlebar and a footpeg, or crash bars).
    mutating func fallOver(from start: Double, toward side: Double, impact: Double, rest: ClosedRange<Double> = 72...95) {
        let height = rng.uniform(0.5...0.8)
        let restRoll = side * rng.uniform(rest) * .pi / 180
        var angle = abs(start), rate = 0.02
        let decel = speed > 0 ? 0.4 * Self.g : 0
        while angle < abs(restRoll) {
            let angular = Self.g / height * sin(angle)
            rate += angular * dt
            angle += rate * dt
            roll = side * angle
            speed = max(0, speed - decel * dt)
            // The sensor swings about the contact line: tangential and centripetal acceleration.
            let sideways = right * side
            let tangential = height * angular
            let centripetal = height * rate * rate
            let a = sideways * (tangential * cos(angle) - centripetal * sin(angle))
                + Vector3(0, 0, -tangential * sin(angle) - centripetal * cos(angle))
                + forward * (speed > 0 ? -decel : 0)
            step(accel: a)
        }
        speed = 0
        roll = restRoll
        let peak = impact * Self.g
        run(0.06) { _, x in Vector3(0, 0, peak * pulse(x)) }
        run(rng.uniform(0.2...0.5)) { sim, x in
            sim.roll = restRoll + 0.04 * side * sin(2 * .pi * 2 * x) * (1 - x)
            return .zero
        }
    }

    /// On its side, scraping along until friction stops it, spinning as it goes.
    mutating func slide(friction: Double, spin: Double, restRoll: Double) {
        let decel = friction * Self.g
        let start = max(speed, 0.1)
        let wobble = rng.uniform(0...6.28)
        var elapsed = 0.0
        while speed > 0 {
            speed = max(0, speed - decel * dt)
            yaw += spin * exp(-elapsed / 1.5) * dt
            roll = restRoll + 0.05 * sin(2 * .pi * 1.1 * elapsed + wobble) * speed / start
            scrape = rng.uniform(0.3...1.5) * speed / start
            // Friction opposes the travel, whatever way the body points.
            step(accel: forward * -decel)
            elapsed += dt
        }
        scrape = 0
        run(rng.uniform(0.2...0.6)) { sim, x in
            sim.roll = restRoll + 0.03 * sin(2 * .pi * 1.5 * x) * (1 - x)
            return .zero
        }
    }
}

private func nearestSide(of roll: Double) -> Double {
    let wrapped = atan2(sin(roll), cos(roll))
    return wrapped >= 0 ? 1 : -1
}
