// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Fuzzing
import RideGuardCore
import Synchronization
import RideGuardTestSupport
import Testing

/// A short seeded run of the fuzz harness (scripts/fuzz.sh runs libFuzzer for a million inputs a
/// parser): mutated AT transcripts, traces and configurations never trap, read the same in any
/// chunks, and either parse to something valid or fail naming a line that exists.
@Suite struct FuzzTests {
    @Test(arguments: FuzzTarget.allCases)
    func mutatedInputsKeepEveryProperty(target: FuzzTarget) {
        // Two seeded streams of 10 000, one per core.
        let broken = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { stream in
            var mutator = FuzzMutator(target: target, seed: 20261123 + UInt64(stream))
            for _ in 0..<10_000 {
                let input = mutator.next()
                if let problem = target.check(input) {
                    broken.withLock { $0.append("\(problem) — input \(String(decoding: input.prefix(120), as: UTF8.self).debugDescription)") }
                }
            }
        }
        let found = broken.withLock { $0 }
        #expect(found.isEmpty, "\(found.count) broken, first: \(found.prefix(3))")
    }

    /// The seeds themselves are valid inputs, so the mutations start from the formats' real shape.
    @Test(arguments: FuzzTarget.allCases)
    func seedsAreValid(target: FuzzTarget) {
        for seed in target.seeds { #expect(target.check(seed) == nil) }
    }

    @Test func pduSeedsDecode() {
        for seed in FuzzTarget.pdu.seeds { #expect(SMSPDU.decode(String(decoding: seed, as: UTF8.self)) != nil) }
    }
}
