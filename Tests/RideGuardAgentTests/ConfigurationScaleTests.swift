// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardTestSupport
import Testing
import RideGuardConfig

/// `config check` on a file with very many problems: every one reported, in time that grows with
/// the file, not with its square (40 000 unknown keys took 36 s: the last line was counted again for
/// each problem).
@Suite struct ConfigurationScaleTests {
    func problems(_ count: Int) -> (seconds: Double, reported: Int) {
        let text = "gpio:\n" + (0..<count).map { "  unknown_key_\($0): 1\n" }.joined()
        let start = ContinuousClock.now
        var reported = 0
        do { _ = try ConfigurationFile.parse(text, source: "big.yaml") } catch { reported = error.problems.count }
        let elapsed = ContinuousClock.now - start
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, reported)
    }

    @Test func manyProblemsTakeTimeInProportion() {
        let small = problems(2_000), large = problems(16_000)
        #expect(small.reported == 2_000 && large.reported == 16_000)
        // Eight times the problems: about eight times the time when linear, sixty-four when quadratic.
        #expect(large.seconds < 24 * max(small.seconds, 0.01), "2 000 problems: \(small.seconds) s, 16 000: \(large.seconds) s")
    }
}
