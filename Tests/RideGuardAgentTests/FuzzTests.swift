import Fuzzing
import RideGuardCore
import Testing

/// A short seeded run of the fuzz harness (scripts/fuzz.sh runs libFuzzer for a million inputs a
/// parser): mutated AT transcripts, traces and configurations never trap, read the same in any
/// chunks, and either parse to something valid or fail naming a line that exists.
@Suite struct FuzzTests {
    @Test(arguments: FuzzTarget.allCases)
    func mutatedInputsKeepEveryProperty(target: FuzzTarget) {
        var mutator = FuzzMutator(target: target, seed: 20261123)
        var broken: [String] = []
        for _ in 0..<20_000 {
            let input = mutator.next()
            if let problem = target.check(input) {
                broken.append("\(problem) — input \(String(decoding: input.prefix(120), as: UTF8.self).debugDescription)")
            }
        }
        #expect(broken.isEmpty, "\(broken.count) broken, first: \(broken.prefix(3))")
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
