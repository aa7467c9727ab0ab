// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// Samples of a buffer: each one's time and its three channels, converted. Kept from one refill
/// to the next, so that reading allocates nothing once it has run a while.
package struct SampleBatch: Equatable {
    package var times: [Double] = []
    package var values: [Vector3] = []

    package init(times: [Double] = [], values: [Vector3] = []) {
        self.times = times
        self.values = values
    }

    package mutating func removeAll() {
        times.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }

    /// Keeps the newest `count` at most.
    package mutating func keepLast(_ count: Int) {
        let excess = times.count - count
        guard excess > 0 else { return }
        times.removeFirst(excess)
        values.removeFirst(excess)
    }
}

/// The gyro of a chip split in two IIO devices (the LSM6DSx's `_accel` and `_gyro`), paired with
/// the accelerometer sample by sample.
package enum GyroPairing {
    /// The rotation of the same instant as `t` (nearest to it, less than half a period away) among
    /// those pending, which are dropped up to it; without timestamps on both halves, the next one in
    /// order. A rotation a whole period away is the next or the last instant's, never this one's.
    package static func nearest(_ t: Double, in pending: inout SampleBatch, timed: Bool, period: Double) -> Vector3? {
        guard !pending.times.isEmpty else { return nil }
        var i = 0
        if timed {
            while i + 1 < pending.times.count && abs(pending.times[i + 1] - t) <= abs(pending.times[i] - t) { i += 1 }
            guard abs(pending.times[i] - t) < period / 2 else {
                // All ahead of `t` (kept for the samples to come), or all behind it (dropped).
                if pending.times[i] < t { pending.removeAll() }
                return nil
            }
        }
        let found = pending.values[i]
        pending.times.removeFirst(i + 1)
        pending.values.removeFirst(i + 1)
        return found
    }
}
