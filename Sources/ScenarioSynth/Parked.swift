// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// The hours around a ride: nobody rides the bike, and whatever happens to it is no rider's crash.
extension BikeSimulator {
    /// The agent starts while the bike lies on its side (a crash cut the power, it was stored or
    /// carried lying), engine off; then someone heaves it up onto its side stand.
    mutating func startLyingThenLift() {
        engine = .off
        let lying = rng.sign() * rng.uniform(72...95) * .pi / 180
        roll = lying
        run(rng.uniform(5...90)) { _, _ in .zero }
        let stand = -rng.uniform(8...16) * .pi / 180
        let lift = rng.uniform(2...4)
        run(lift) { sim, x in
            sim.roll = lying + (stand - lying) * smoothstep(x) + 0.02 * sin(2 * .pi * 1.3 * x * lift) * (1 - x)
            return Vector3(0, 0, 0.3 * BikeSimulator.g * sin(2 * .pi * x))
        }
        run(rng.uniform(1...3)) { _, _ in .zero }
    }

    /// Strapped near upright on a trailer (or standing on its centre stand): no rider, engine off.
    mutating func standStrapped() {
        engine = .off
        roll = rng.uniform(-3...3) * .pi / 180
        run(rng.uniform(2...10)) { _, _ in .zero }
    }

    /// Towed on a trailer: road and highway speeds, turns the bike cannot lean into (the force
    /// tilts sideways in the bike's frame), road vibration and bumps through the trailer's springs;
    /// then the trailer stops.
    mutating func tow(for duration: Double) {
        let strapped = roll
        let cruise = rng.uniform(20...33)
        var target = cruise
        var nextChange = rng.uniform(20...60)
        var turn = (start: rng.uniform(5...20), length: 8.0, rate: 0.0)
        let road = rng.uniform(0.04...0.15)
        var nextBump = rng.uniform(5...30)
        var bump = (start: -Double.infinity, peak: 0.0)
        let steps = Int(duration / dt)
        for i in 0..<steps {
            let now = Double(i) * dt
            if now >= nextChange {
                target = rng.chance(0.2) ? rng.uniform(8...15) : rng.uniform(15...cruise)
                nextChange = now + rng.uniform(20...80)
            }
            let longitudinal = max(-0.3 * Self.g, min(0.12 * Self.g, 0.3 * (target - speed)))
            speed = max(0, speed + longitudinal * dt)
            if now >= turn.start + turn.length {
                let lateral = rng.uniform(0.05...0.25) * Self.g
                turn = (now + rng.uniform(5...40), rng.uniform(4...15), lateral / max(speed, 5) * rng.sign())
            }
            var yawRate = 0.0
            if now >= turn.start { yawRate = turn.rate * (1 - cos(2 * .pi * (now - turn.start) / turn.length)) / 2 }
            travel += yawRate * dt
            yaw = travel
            scrape = road * min(1, speed / 10)
            if now >= nextBump {
                bump = (now, rng.uniform(0.5...2.5) * Self.g)
                nextBump = now + rng.uniform(5...60)
            }
            let tau = now - bump.start
            let vertical = tau < 0.3 ? bump.peak * sin(2 * .pi * 8 * tau) * exp(-tau / 0.05) : 0
            roll = strapped + 0.01 * sin(2 * .pi * 1.1 * now)
            step(accel: forward * longitudinal + left * (speed * yawRate) + Vector3(0, 0, vertical))
        }
        let decel = 0.2 * Self.g
        while speed > 0 {
            speed = max(0, speed - decel * dt)
            scrape = road * min(1, speed / 10)
            step(accel: forward * (speed > 0 ? -decel : 0))
        }
        scrape = 0
        roll = strapped
    }

    /// Upright on its centre stand in a garage; the rider starts the engine beside it.
    mutating func startOnCentreStand() {
        engine = .off
        roll = 0
        pitch = rng.uniform(-2...0) * .pi / 180
        run(rng.uniform(2...10)) { _, _ in .zero }
        engine = .idle
    }

    /// The engine idles and is revved now and then (warming up, a check, a tune), the bike on its
    /// centre stand; then it is switched off and left.
    mutating func runOnCentreStand(for seconds: Double) {
        var left = seconds
        while left > 0 {
            let spell = min(left, rng.uniform(5...40))
            engine = rng.chance(0.3) ? .running : .idle
            run(spell) { _, _ in .zero }
            left -= spell
        }
        engine = .off
        run(rng.uniform(30...120)) { _, _ in .zero }
    }

    /// Parked on its side stand, untouched: someone (or the wind) pushes it over. Pushed from the
    /// right, it goes down on the stand's side; pushed from the left, it rolls over upright and
    /// falls to the right. The fall itself is a pendulum about the tyres' contact line.
    mutating func knockOverParked() {
        let from = roll
        let shove = rng.uniform(0.3...1.2) * rng.sign()
        if rng.chance(0.5) {
            run(0.4) { sim, x in
                sim.roll = from - 0.06 * smoothstep(x)
                return sim.right * (-shove * pulse(x))
            }
            fallOver(from: roll, toward: -1, impact: rng.uniform(1.5...4))
        } else {
            let over = rng.uniform(1...4) * .pi / 180
            let push = rng.uniform(0.6...1.2)
            run(push) { sim, x in
                sim.roll = from + (over - from) * smoothstep(x)
                return sim.right * (abs(shove) * pulse(x))
            }
            fallOver(from: roll, toward: 1, impact: rng.uniform(1.5...4))
        }
    }

    /// A person lays the parked bike down on its side, slowly, holding it all the way (maintenance,
    /// a bike moved onto its side to fit a trailer): no fall, no landing.
    mutating func layDown() {
        let from = roll
        let target = -rng.uniform(75...92) * .pi / 180
        let seconds = rng.uniform(3...7)
        run(seconds) { sim, x in
            sim.roll = from + (target - from) * smoothstep(x) + 0.01 * sin(2 * .pi * 1.5 * x * seconds) * (1 - x)
            return Vector3(0, 0, 0.05 * BikeSimulator.g * sin(2 * .pi * 0.8 * x * seconds))
        }
        roll = target
    }

    /// A car's bumper hits the parked bike: a sharp horizontal knock, the bike rocks on its stand and
    /// settles where it stood.
    mutating func bumpParked() {
        let from = roll
        let peak = rng.uniform(2...6) * Self.g
        let length = rng.uniform(0.05...0.15)
        let direction = (forward * rng.sign() + right * rng.uniform(-0.5...0.5)).normalized!
        run(length) { _, x in direction * (peak * pulse(x)) }
        let rock = rng.uniform(2...5) * .pi / 180
        let settle = rng.uniform(1.5...3)
        run(settle) { sim, x in
            sim.roll = from - rock * sin(2 * .pi * 1.8 * x * settle) * exp(-3 * x)
            return .zero
        }
        roll = from
    }
}
