// SPDX-License-Identifier: Apache-2.0
import RideGuardCore
import Synchronization

/// What is known of where the rider is: the fixes kept, and the latest speed (it goes on every
/// sample: the detector's GPS rules). Written by the location service; read by the messages and
/// the status.
final class Whereabouts: Sendable {
    let speeds = SpeedSnapshot()
    private let store = Mutex(LocationStore())

    var lastFix: Fix? { store.withLock { $0.lastFix } }

    /// Speed and heading over the seconds before `time` (a crash), from the fixes kept.
    func motion(before time: Double) -> (speed: Double, heading: Double?)? { store.withLock { $0.motion(before: time) } }

    func update(_ fix: Fix) {
        store.withLock { $0.update(fix) }
    }
}
