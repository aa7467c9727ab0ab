// SPDX-License-Identifier: Apache-2.0
import RideGuardCore
import Synchronization

/// Wakes a waiting task when there is work: `ring()` from anywhere, `wait(until:)` in the one task
/// that does the work. A ring while nobody waits is kept for the next wait.
package final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    package init() {}

    package func ring() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            defer { s.waiter = nil }
            if s.waiter == nil { s.rung = true }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Returns once rung (now or since the last wait), at `deadline`, or when the task is cancelled.
    package func wait(until deadline: Double, clock: any ServiceClock) async {
        let alarm = Task { [self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            ring()
        }
        defer { alarm.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let already = state.withLock { s -> Bool in
                    if s.rung {
                        s.rung = false
                        return true
                    }
                    s.waiter = waiter
                    return false
                }
                if already { waiter.resume() }
            }
        } onCancel: {
            ring()
        }
    }
}
