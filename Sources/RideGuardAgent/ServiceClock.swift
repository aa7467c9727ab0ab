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
/// passed first (it goes on, alone). Never blocks Swift's concurrency pool.
package func onOwnThread<T: Sendable>(_ name: String, atMost seconds: Double? = nil, _ body: @escaping @Sendable () -> T) async -> T? {
    let answer = FirstAnswer<T?>()
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        answer.wait(continuation)
        startThread(name) { answer.give(body()) }
        if let seconds {
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                answer.give(nil)
            }
        }
    }
}

/// The first value given resumes the waiter; later ones are dropped.
private final class FirstAnswer<T: Sendable>: Sendable {
    private let waiter = Mutex<CheckedContinuation<T, Never>?>(nil)
    func wait(_ continuation: CheckedContinuation<T, Never>) { waiter.withLock { $0 = continuation } }
    func give(_ value: T) { waiter.withLock { $0.take() }?.resume(returning: value) }
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
