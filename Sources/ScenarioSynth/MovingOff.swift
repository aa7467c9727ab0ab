// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// The first seconds of moving. The agent starts with the ignition, so the upright it learns at
/// start is seconds old when the bike moves off; a bike can go down in those seconds too.
extension BikeSimulator {
    /// From the side stand, the bike goes down 1–5 s after it began to move: pulled out into the
    /// road and the front washes out, pushed out of a parking space by hand and dropped, or dropped
    /// in a slow U-turn while leaving. Returns when it began to fall.
    mutating func moveOffAndFall() -> Double {
        let moving = rng.uniform(1...5)
        switch rng.next() % 3 {
        case 0:
            // Pulling out: away from the stand, turning into the road, the front tucks on gravel.
            climbOnAndStart()
            setUp(speed: rng.uniform(2...6), lean: rng.sign() * rng.uniform(5...20) * .pi / 180, seconds: moving)
            let start = t
            lowside()
            return start
        case 1:
            // Pushed off the stand by hand, engine off, and dropped while walking it.
            engine = .off
            let stand = -rng.uniform(8...16) * .pi / 180
            roll = stand
            run(rng.uniform(1...6)) { _, _ in .zero }
            run(rng.uniform(0.8...1.5)) { sim, x in
                sim.roll = stand * (1 - smoothstep(x))
                return .zero
            }
            push(for: moving)
            let start = t
            tipOver(rest: 66...85)
            return start
        default:
            // A U-turn to leave: too slow, the bike drops to the inside.
            climbOnAndStart()
            let start = t + moving
            slowTurnDrop(seconds: moving)
            return start
        }
    }

    /// The fallen bike shakes before anyone lifts it: a wheel turning (its imbalance shakes the
    /// frame at the wheel's rate, dying away), someone taking hold of it and tugging it a few
    /// degrees, or both. Ends with the bike lying where it fell.
    mutating func shakeWhileLying() {
        let seconds = rng.uniform(4...20)
        let wheel = rng.chance(0.6)
        let hands = !wheel || rng.chance(0.5)
        let wheelHz = rng.uniform(3...12)
        let wheelG = rng.uniform(0.05...0.4)
        let fadeSeconds = rng.uniform(3...15)
        let wheelDirection = Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian()).normalized ?? Vector3(0, 0, 1)
        let lying = roll
        let towardUp: Double = lying >= 0 ? -1 : 1
        // Tugs: each lifts the bike a few degrees and lets it back down.
        var tugs: [(start: Double, length: Double, degrees: Double)] = []
        if hands {
            var at = rng.uniform(0.2...2)
            while at < seconds - 1 {
                let length = rng.uniform(0.8...3)
                tugs.append((at, length, rng.uniform(3...15)))
                at += length + rng.uniform(0.3...3)
            }
        }
        run(seconds) { sim, x in
            let elapsed = x * seconds
            var a = Vector3.zero
            if wheel {
                a += wheelDirection * (wheelG * BikeSimulator.g * exp(-elapsed / fadeSeconds) * sin(2 * .pi * wheelHz * elapsed))
            }
            var lift = 0.0
            for tug in tugs where elapsed >= tug.start && elapsed < tug.start + tug.length {
                lift = tug.degrees * .pi / 180 * sin(.pi * (elapsed - tug.start) / tug.length)
            }
            sim.roll = lying + towardUp * lift
            return a
        }
        roll = lying
    }
}
