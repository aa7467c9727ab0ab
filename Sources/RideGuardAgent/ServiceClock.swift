import FoundationEssentials
import Glibc
import RideGuardCore
import Synchronization
import SystemCalls

/// Whether what was done last at `last` (nil: never) is due again at `now`, every `interval`
/// seconds. A clock set back (a Pi without a real-time clock, then NTP or GPS) makes it due at once,
/// never silent until the clock has caught up.
func isDue(since last: Double?, now: Double, every interval: Double) -> Bool {
    guard let last else { return true }
    return now - last >= interval || now < last
}

/// Runs `body` on a thread of its own (work that blocks: a libcurl request, a libmosquitto stop
/// that may sit in a TCP connect for minutes) and returns what it returned; nil when `seconds`
/// passed first, or the task was cancelled (the agent stopping never waits on it: it goes on,
/// alone). Never blocks Swift's concurrency pool.
package func onOwnThread<T: Sendable>(_ name: String, atMost seconds: Double? = nil, _ body: @escaping @Sendable () -> T) async -> T? {
    let answer = FirstAnswer<T?>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            answer.wait(continuation)
            startThread(name) { answer.give(body()) }
            if let seconds {
                Task {
                    try? await Task.sleep(for: .seconds(seconds))
                    answer.give(nil)
                }
            }
        }
    } onCancel: {
        answer.give(nil)
    }
}

/// The first value given resumes the waiter; later ones are dropped.
private final class FirstAnswer<T: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<T, Never>?)
        /// Given before anybody waited (a task cancelled already).
        case early(T)
        case done
    }
    private let state = Mutex(State.waiting(nil))

    func wait(_ continuation: CheckedContinuation<T, Never>) {
        let early = state.withLock { s -> [T] in
            if case .early(let value) = s {
                s = .done
                return [value]
            }
            s = .waiting(continuation)
            return []
        }
        for value in early { continuation.resume(returning: value) }
    }

    func give(_ value: T) {
        let waiter = state.withLock { s -> CheckedContinuation<T, Never>? in
            guard case .waiting(let waiter) = s else { return nil }
            s = waiter == nil ? .early(value) : .done
            return waiter
        }
        waiter?.resume(returning: value)
    }
}

/// The system clock. Sleeps are measured on the monotonic clock, so a wall-clock step (NTP after
/// boot on a Pi without a real-time clock) does not stretch or cut a countdown already running.
package struct SystemServiceClock: ServiceClock {
    package init() {}

    package func now() -> Double { Date().timeIntervalSince1970 }

    package func sleep(until deadline: Double) async throws {
        let seconds = deadline - now()
        if seconds > 0 { try await Task.sleep(for: .seconds(seconds)) }
        try Task.checkCancellation()
    }
}
