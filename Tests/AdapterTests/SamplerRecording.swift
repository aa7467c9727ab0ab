// SPDX-License-Identifier: Apache-2.0
import IIOSensor
import RideGuardCore
import Synchronization

/// What a sampler delivered: its samples and its events, in order.
final class SamplerRecording: Sendable {
    let samples = Mutex<[IMUSample]>([])
    let events = Mutex<[SamplerEvent]>([])
    var count: Int { samples.withLock { $0.count } }
    func has(_ match: (SamplerEvent) -> Bool) -> Bool { events.withLock { $0.contains(where: match) } }
    /// The first opening. Not always the first event: on a loaded machine an opening can take longer
    /// than the stall time, and the watchdog rightly says so first.
    var opened: SamplerEvent? { events.withLock { $0.first { if case .opened = $0 { true } else { false } } } }
}
