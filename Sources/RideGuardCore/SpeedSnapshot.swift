// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// The latest GPS speed, for the sampler's thread: written when a fix arrives, read for every sample
/// without a lock or I/O. The speed (as a Float) and its arrival time (tenths of a second, wrapping)
/// share one atomic word, so a reader never pairs one fix's speed with another's time.
package final class SpeedSnapshot: Sendable {
    private static let none = UInt64(Float.nan.bitPattern) << 32
    private let word = Atomic<UInt64>(SpeedSnapshot.none)

    package init() {}

    /// A fix's ground speed (m/s), arrived at `time` (seconds).
    package func store(_ speed: Double, at time: Double) {
        guard speed.isFinite else { return }
        word.store(UInt64(Float(speed).bitPattern) << 32 | UInt64(Self.tick(time)), ordering: .releasing)
    }

    /// The last speed, when it arrived less than `maxAge` seconds before `time`.
    package func fresh(at time: Double, maxAge: Double = 3) -> Double? {
        let value = word.load(ordering: .acquiring)
        let speed = Float(bitPattern: UInt32(truncatingIfNeeded: value >> 32))
        guard speed.isFinite else { return nil }
        let age = Double(Self.tick(time) &- UInt32(truncatingIfNeeded: value)) / 10
        return age < maxAge ? Double(speed) : nil
    }

    private static func tick(_ time: Double) -> UInt32 {
        UInt32(truncatingIfNeeded: Int64((time * 10).rounded(.down)))
    }
}
