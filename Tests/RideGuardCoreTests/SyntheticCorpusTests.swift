import Dispatch
import Synchronization
import Testing
@testable import RideGuardCore
import ScenarioSynth

/// A seeded corpus generated in the test run: every scenario twice, short rides, every rate.
@Suite struct SyntheticCorpusTests {
    struct Outcome: Sendable {
        var label: TraceLabel
        var detections: [Double]
    }

    /// Each trace generated and replayed on its own: the machine's cores share the corpus.
    static let outcomes: [Outcome] = {
        let count = Scenario.allCases.count * 2
        let results = Mutex([Outcome?](repeating: nil, count: count))
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let (scenario, seed) = TraceSynthesizer.plan(seed: 4242, index: index)
            var detector = CrashDetector()
            var detections: [Double] = []
            let label = TraceSynthesizer.generate(scenario, seed: seed, ridingScale: 0.1) { sample in
                detector.process(sample) { event in
                    if case .crashDetected(let t, _) = event { detections.append(t) }
                }
            }
            let outcome = Outcome(label: label, detections: detections)
            results.withLock { $0[index] = outcome }
        }
        return results.withLock { $0.map { $0! } }
    }()

    @Test func ridesRaiseNoAlarm() {
        for outcome in Self.outcomes where !outcome.label.crash {
            #expect(outcome.detections.isEmpty, "\(outcome.label.scenario) seed \(outcome.label.seed): \(outcome.detections)")
        }
    }

    @Test func crashesAreDetectedSoonAfterRest() throws {
        for outcome in Self.outcomes where outcome.label.crash {
            let start = try #require(outcome.label.crashStart), rest = try #require(outcome.label.rest)
            #expect(outcome.detections.allSatisfy { $0 >= start }, "alarm before the crash: \(outcome.label.seed)")
            // A dead axis can hide part of gravity; everything else must be found.
            guard outcome.label.deadAxis == nil else { continue }
            let detection = try #require(outcome.detections.first, "\(outcome.label.scenario) seed \(outcome.label.seed) missed")
            #expect(detection - rest <= 6, "\(outcome.label.scenario): \(detection - rest) s after rest")
        }
    }

    /// Pushed at walking pace, leaned 6–20° toward the rider, then dropped onto crash bars (66–85°):
    /// the upright reference must not follow the push's lean (it did: these two were missed, lying
    /// at 57° from a reference that had leaned with the bike). One trace has GPS speed, one has not.
    @Test(arguments: [UInt64(17322176838642444209), 10142586107325357260])
    func aBikePushedAtALeanThenDroppedIsACrash(seed: UInt64) throws {
        var detector = CrashDetector()
        var detections: [Double] = []
        let label = TraceSynthesizer.generate(.pushedThenDropped, seed: seed) { sample in
            detector.process(sample) { event in
                if case .crashDetected(let t, _) = event { detections.append(t) }
            }
        }
        let rest = try #require(label.rest)
        let detection = try #require(detections.first, "missed; posture at the end \(detector.state.postureDegrees)°")
        #expect(detection >= label.crashStart! && detection - rest <= 6)
    }

    @Test func generatorIsDeterministicAndLabelsAreConsistent() {
        var first: [IMUSample] = []
        var second: [IMUSample] = []
        let a = TraceSynthesizer.generate(.tipOverAtStop, seed: 3, ridingScale: 0.05) { first.append($0) }
        let b = TraceSynthesizer.generate(.tipOverAtStop, seed: 3, ridingScale: 0.05) { second.append($0) }
        #expect(first == second)
        #expect(a == b)
        #expect(zip(first, first.dropFirst()).allSatisfy { $0.t < $1.t })
        #expect(a.crashStart! < a.rest! && a.rest! < a.duration)
        #expect(abs(first.last!.t - a.duration) < 1)
    }

    /// At rest the sensor must read gravity: the generator's physics, checked on its own output.
    @Test func restingBikeReadsOneG() {
        var samples: [IMUSample] = []
        let label = TraceSynthesizer.generate(.normalRide, seed: 8, ridingScale: 0.05) { samples.append($0) }
        let tail = samples.suffix(Int(label.rateHz * 5))
        let mean = tail.reduce(Vector3.zero) { $0 + $1.accel } / Double(tail.count)
        if label.deadAxis == nil {
            #expect(abs(mean.magnitude - standardGravity) < 0.5)
        }
    }
}
