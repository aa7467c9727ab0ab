// SPDX-License-Identifier: Apache-2.0
import CIIO
import RideGuardCore
import Synchronization
import SystemCalls

/// What the sampler's thread shares with the watchdog's and with `stop()`: whether to go on, when
/// the last sample came, and the buffers a blocked refill may be cancelled on.
final class SamplerLiveness: Sendable {
    /// A libiio buffer being refilled, shared only so that `stop()` and the watchdog can call
    /// iio_buffer_cancel, which libiio documents as the way to unblock a refill from another thread.
    struct BufferHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    let running = Atomic<Bool>(true)
    let buffers = Mutex<[BufferHandle]>([])
    /// Monotonic time of the last sample (or of opening), as bits of a Double.
    private let lastSample = Atomic<UInt64>(monotonicSeconds().bitPattern)
    let stallReported = Atomic<Bool>(false)
    /// Whether a sample came since the sampler last asked (`takeDelivered`): the opening was healthy.
    private let delivered = Atomic<Bool>(false)

    var isRunning: Bool { running.load(ordering: .acquiring) }

    func cancelRefills() {
        buffers.withLock { for buffer in $0 { iio_buffer_cancel(buffer.pointer) } }
    }

    func touch() {
        lastSample.store(monotonicSeconds().bitPattern, ordering: .releasing)
        stallReported.store(false, ordering: .releasing)
        delivered.store(true, ordering: .releasing)
    }

    /// A buffer was just enabled: its silence counts from now (a stall already reported stays so).
    func restartClock() {
        lastSample.store(monotonicSeconds().bitPattern, ordering: .releasing)
    }

    var quiet: Double { monotonicSeconds() - Double(bitPattern: lastSample.load(ordering: .acquiring)) }

    func takeDelivered() -> Bool { delivered.exchange(false, ordering: .acquiringAndReleasing) }
}

/// Where every reader, buffered or polled, through libiio or sysfs, delivers: the callbacks, the
/// liveness the watchdog reads, the rate window and the gap count. One per opening, on the
/// sampler's thread.
struct SampleSink {
    let liveness: SamplerLiveness
    private let onSample: @Sendable (IMUSample) -> Void
    private let heartbeat: @Sendable () -> Void
    private let onEvent: @Sendable (SamplerEvent) -> Void
    private var window: RateWindow
    private let windowSeconds: Double
    private var period: Double
    private var lastT = -Double.infinity

    init(rate: Double, windowSeconds: Double, liveness: SamplerLiveness, onSample: @escaping @Sendable (IMUSample) -> Void,
         heartbeat: @escaping @Sendable () -> Void, onEvent: @escaping @Sendable (SamplerEvent) -> Void) {
        self.liveness = liveness
        self.onSample = onSample
        self.heartbeat = heartbeat
        self.onEvent = onEvent
        self.windowSeconds = windowSeconds
        window = RateWindow(nominal: rate, seconds: windowSeconds)
        period = 1 / rate
    }

    var running: Bool { liveness.isRunning }

    /// The rate the driver says it runs at, once the device is set up.
    mutating func nominal(_ rate: Double) {
        window = RateWindow(nominal: rate, seconds: windowSeconds)
        period = 1 / rate
    }

    /// The thread is alive, samples or not.
    func beat() { heartbeat() }

    func event(_ event: SamplerEvent) { onEvent(event) }

    /// A read brought samples: the stream is alive.
    func arrived() { liveness.touch() }

    /// One sample; `gaps` counts the instants missing before it (sample times from the driver's
    /// clock or its buffer, not a poll's own).
    mutating func deliver(_ sample: IMUSample, gaps: Bool) {
        if gaps && lastT.isFinite {
            let missing = Int(((sample.t - lastT) / period).rounded()) - 1
            if missing >= 1 { onEvent(.dropped(missing)) }
        }
        lastT = sample.t
        if let change = window.add(sample.t) { onEvent(window.event(change)) }
        onSample(sample)
    }
}
