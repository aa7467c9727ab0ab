// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// Writes labelled, physically consistent IMU traces of crashes and of rides that are not crashes.
package enum TraceSynthesizer {
    /// Generates one trace of `scenario` from `seed`, calling `emit` per sample, and returns its label.
    /// `ridingScale` shortens (below 1) or lengthens the riding before the event, for quick tests.
    package static func generate(_ scenario: Scenario, seed: UInt64, file: String = "", ridingScale: Double = 1,
                                rate: Double? = nil, emit: @escaping (IMUSample) -> Void) -> TraceLabel {
        var sim = BikeSimulator(seed: seed, rate: rate, range: range(of: scenario, seed: seed), emit: emit)
        var crashStart: Double?
        var rest: Double?
        var idling = false
        var parkedFall: Double?
        if scenario == .startedLying || scenario == .startedLyingThenCrash {
            sim.startLyingThenLift()
            sim.climbOnAndStart(lifted: true)
        } else if scenario == .centreStandEngine {
            sim.startOnCentreStand()
        } else if scenario == .trailer {
            sim.standStrapped()
        } else if scenario == .movingOffFall || scenario == .fallenShaken {
            // Starts in its own case: on the stand, pushed off it by hand, or climbed on and ridden.
        } else {
            sim.climbOnAndStart()
        }
        let crashRiding = sim.rng.uniform(60...300) * ridingScale
        let rideLength = sim.rng.uniform(300...900) * ridingScale
        switch scenario {
        case .normalRide, .hardRide, .roughRoad, .offRoad:
            let style: RideStyle = switch scenario {
            case .hardRide: .hard
            case .roughRoad: .rough
            case .offRoad: .offRoad
            default: .normal
            }
            sim.ride(for: rideLength, style: style)
            sim.parkOnSideStand()
        case .lowside:
            sim.ride(for: crashRiding, style: sim.rng.chance(0.5) ? .normal : .hard)
            crashStart = sim.leanInAndLowside()
        case .highside:
            sim.ride(for: crashRiding, style: sim.rng.chance(0.5) ? .normal : .hard)
            let side = sim.rng.sign()
            sim.setUp(speed: sim.rng.uniform(12...30), lean: side * sim.rng.uniform(15...35) * .pi / 180, seconds: 3)
            crashStart = sim.t
            sim.highside()
        case .collision, .pinnedCollision:
            sim.ride(for: crashRiding, style: .normal)
            sim.setUp(speed: sim.rng.uniform(6...20), lean: 0, seconds: 4)
            crashStart = sim.t
            sim.collision(pinned: scenario == .pinnedCollision)
        case .tipOverAtStop:
            sim.ride(for: crashRiding, style: .normal)
            crashStart = sim.stopAndTipOver()
        case .slowTurnDrop:
            sim.ride(for: crashRiding, style: .normal)
            sim.stop()
            crashStart = sim.t
            sim.slowTurnDrop()
        case .pushedThenDropped:
            sim.ride(for: crashRiding, style: .normal)
            sim.stop()
            sim.push(for: sim.rng.uniform(20...120))
            crashStart = sim.t
            sim.tipOver(rest: 66...85)          // real dropped bikes lay at 66–71° (crash bars, panniers)
        case .startedLyingThenCrash:
            sim.ride(for: crashRiding, style: .normal)
            crashStart = sim.rng.chance(0.5) ? sim.leanInAndLowside() : sim.stopAndTipOver()
        case .movingOffFall:
            crashStart = sim.moveOffAndFall()
        case .fallenShaken:
            if sim.rng.chance(0.5) {
                crashStart = sim.moveOffAndFall()
            } else {
                sim.climbOnAndStart()
                sim.ride(for: crashRiding, style: .normal)
                crashStart = sim.rng.chance(0.5) ? sim.leanInAndLowside() : sim.stopAndTipOver()
            }
            sim.shakeWhileLying()
        case .startedLying:
            sim.ride(for: rideLength, style: .normal)
            sim.parkOnSideStand()
        case .parkedKnockedOver, .parkedLaidDown, .parkedBumped:
            sim.ride(for: crashRiding, style: .normal)
            sim.parkOnSideStand()
            sim.run(sim.rng.uniform(300...1200)) { _, _ in .zero }
            switch scenario {
            case .parkedKnockedOver:
                parkedFall = sim.t
                sim.knockOverParked()
                sim.lieStill(sim.rng.uniform(20...120), idling: false, liftAtEnd: sim.rng.chance(0.5))
            case .parkedLaidDown:
                sim.layDown()
                sim.lieStill(sim.rng.uniform(30...180), idling: false, liftAtEnd: sim.rng.chance(0.5))
            default:
                sim.bumpParked()
                sim.run(sim.rng.uniform(30...120)) { _, _ in .zero }
            }
        case .trailer:
            sim.tow(for: rideLength)
            sim.run(sim.rng.uniform(30...120)) { _, _ in .zero }
        case .centreStandEngine:
            sim.runOnCentreStand(for: sim.rng.uniform(60...600))
        case .hardHitRiddenOn, .hardHitThenStop, .hardHitThenOff:
            let hit = sim.rng.pick(HardHit.allCases)
            let style: RideStyle = hit.offRoad ? .offRoad : .normal
            sim.ride(for: crashRiding, style: style)
            sim.take(hit)
            switch scenario {
            case .hardHitRiddenOn:
                sim.ride(for: sim.rng.uniform(30...120), style: style)
            case .hardHitThenStop:
                sim.stopToLook()
                sim.sitOnStoppedBike(sim.rng.uniform(10...90))
                sim.ride(for: sim.rng.uniform(30...90), style: style)
            default:
                sim.stopToLook()
            }
            sim.parkOnSideStand()
        }
        if scenario.isCrash {
            rest = sim.t
            idling = sim.rng.chance(0.4)
            let lift = sim.rng.chance(0.3)
            sim.lieStill(lift ? sim.rng.uniform(15...25) : sim.rng.uniform(15...40), idling: idling, liftAtEnd: lift)
        }
        return TraceLabel(
            file: file, scenario: scenario, crash: scenario.isCrash, crashStart: crashStart, rest: rest,
            ridingSeconds: sim.ridingSeconds, duration: sim.t, rateHz: sim.sensor.rate, gyro: sim.sensor.hasGyro,
            rangeG: sim.sensor.rangeG, speedColumn: sim.speedColumn, deadAxis: sim.sensor.deadAxis,
            engineIdlingAfter: idling, parkedFall: parkedFall, seed: seed
        )
    }

    /// The hard hits are also taken by sensors of ±2 g and ±4 g, which clip their pulses (the
    /// range drawn with a generator of its own: the rest of the trace stays as the seed gives it).
    static func range(of scenario: Scenario, seed: UInt64) -> Double? {
        guard scenario == .hardHitRiddenOn || scenario == .hardHitThenStop || scenario == .hardHitThenOff else { return nil }
        var draw = SeededRandom(seed: seed ^ 0x5EED_4A4D_4817_0002)
        return draw.pick([2.0, 4, 8, 16])
    }

    /// The scenario and seed of trace `index` in a corpus: every scenario in turn, seeds derived from the corpus seed.
    package static func plan(seed: UInt64, index: Int) -> (Scenario, UInt64) {
        let scenario = Scenario.allCases[index % Scenario.allCases.count]
        var mixer = SeededRandom(seed: seed &+ UInt64(index) &* 0x9E37_79B9)
        return (scenario, mixer.next())
    }
}

/// What a trace's header needs to know before the first sample: fixed by the seed.
package struct SensorFacts: Sendable {
    package var rateHz: Double
    package var gyro: Bool
    package var speedColumn: Bool
    package var rangeG: Double

    package init(seed: UInt64, scenario: Scenario, rate: Double? = nil) {
        let sim = BikeSimulator(seed: seed, rate: rate, range: TraceSynthesizer.range(of: scenario, seed: seed)) { _ in }
        rateHz = sim.sensor.rate
        gyro = sim.sensor.hasGyro
        speedColumn = sim.speedColumn
        rangeG = sim.sensor.rangeG
    }
}
