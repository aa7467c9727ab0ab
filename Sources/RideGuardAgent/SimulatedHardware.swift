// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import SystemCalls
import Logging
import RideGuardCore
import SerialModem
import Storage
import Synchronization
import SystemTime

/// The modem's twin: says what it would send, and accepts it; says whom it would ring, and lets
/// the call ring out on the agent's clock (nobody answers a simulation).
package final class SimulatedTransport: SMSTransport, VoiceCaller {
    let clock: any ServiceClock
    let logger: Logger
    let reference = Atomic<Int>(0)

    package init(clock: any ServiceClock, logger: Logger) {
        self.clock = clock
        self.logger = logger
    }

    package func send(_ text: String, to number: String) async throws(SendError) -> [Int] {
        let body = text.split(separator: "\n").map { "    │ " + $0 }.joined(separator: "\n")
        logger.info("SMS to \(PhoneNumber.mask(number)) (simulated modem):\n\(body)")
        return SMSText(text).parts.map { _ in reference.add(1, ordering: .relaxed).newValue }
    }

    package var canCall: Bool? { true }

    package func call(_ number: String, ringSeconds: Double) async -> CallReport {
        logger.info("calling \(PhoneNumber.mask(number)) (simulated modem): ringing for \(DecimalFormat.string(ringSeconds, decimals: 0)) s")
        do { try await clock.sleep(until: clock.now() + ringSeconds) } catch { return CallReport(.stopped) }
        return CallReport(.notAnswered("no answer in \(DecimalFormat.string(ringSeconds, decimals: 0)) s (simulated)"))
    }
}

/// The IMU's twin: plays a trace file at the agent's clock × `speed` on a dedicated thread, in
/// batches like the real sampler's buffer refills (a wake-up every 20 ms, not one per sample).
/// `heartbeat` is called from that thread while it lives: at every batch, then every second once
/// the trace is over, until `stop()` (the sensor is still there, measuring nothing more).
final class TracePlayer: Sendable {
    private let running = Atomic<Bool>(true)
    /// Signalled by `stop()`: ends a wait on the system clock.
    private let stopped = DispatchSemaphore(value: 0)
    /// The sleep a wait on another clock (the tests' manual one) is, cancelled by `stop()`.
    private let sleeping = Mutex<Task<Void, Never>?>(nil)

    init(path: String, speed: Double, clock: any ServiceClock, onSample: @escaping @Sendable (IMUSample) -> Void,
         heartbeat: @escaping @Sendable () -> Void = {}, onEnd: @escaping @Sendable (String?) -> Void) {
        startThread("rg-trace-player") { [self] in
            let start = clock.now()
            var first: Double?
            do {
                try TraceFile.stream(path: path) { sample in
                    if first == nil { first = sample.t }
                    let due = start + (sample.t - first!) / speed
                    if due - clock.now() > 0.02 {
                        heartbeat()
                        wait(until: due, on: clock)
                    }
                    guard running.load(ordering: .acquiring) else { throw CancellationError() }
                    onSample(sample)
                }
                onEnd(nil)
            } catch is CancellationError {
                onEnd(nil)
                return
            } catch {
                onEnd("\(error)")
            }
            while running.load(ordering: .acquiring) {
                heartbeat()
                wait(until: clock.now() + 1, on: clock)
            }
        }
    }

    /// Blocks the player's thread until `deadline` on `clock`, or until `stop()`. On the system
    /// clock, a timed wait on the thread itself: a task per batch would wake two of the pool's
    /// threads every 20 ms.
    private func wait(until deadline: Double, on clock: any ServiceClock) {
        if clock is SystemServiceClock {
            if stopped.wait(timeout: .now() + max(0, deadline - clock.now())) == .success { stopped.signal() }
            return
        }
        let woken = DispatchSemaphore(value: 0)
        sleeping.withLock { task in
            guard running.load(ordering: .acquiring) else {
                woken.signal()
                return
            }
            task = Task {
                try? await clock.sleep(until: deadline)
                woken.signal()
            }
        }
        woken.wait()
    }

    func stop() {
        running.store(false, ordering: .releasing)
        stopped.signal()
        sleeping.withLock { $0?.cancel() }
    }
}
