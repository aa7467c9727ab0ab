// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc

/// A small, fast, seedable generator (SplitMix64): the same seed gives the same corpus anywhere.
package struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in `range`.
    package mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * Double(next() >> 11) / Double(1 << 53)
    }

    /// Standard normal (Box–Muller).
    package mutating func gaussian() -> Double {
        let u1 = max(uniform(0...1), 1e-300)
        let u2 = uniform(0...1)
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }

    package mutating func chance(_ p: Double) -> Bool { uniform(0...1) < p }

    package mutating func sign() -> Double { chance(0.5) ? 1 : -1 }

    package mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }
}
