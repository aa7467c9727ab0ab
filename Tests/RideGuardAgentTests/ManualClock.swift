import Foundation
import RideGuardAgent
import RideGuardCore
import Synchronization
import Testing

/// A clock the test moves by hand: `advance` wakes sleepers in deadline order and lets each react
/// to the end (schedule its next sleep, post what it must) before moving on. Under `.onOneThread`
/// only: the reactions' end is known there, with no real sleep.
final class ManualClock: ServiceClock {
    private struct Waiter {
        var id: Int
        var deadline: Double
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Double
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private let state: Mutex<State>

    init(now: Double = 1_000_000) {
        state = Mutex(State(now: now))
    }

    func now() -> Double { state.withLock { $0.now } }

    /// Tasks sleeping on this clock now.
    var sleepers: Int { state.withLock { $0.waiters.count } }

    /// Changes whenever a sleep starts or ends: a part at work (an AT command arms a timer, a
    /// woken task sleeps again).
    var activity: Int { state.withLock { $0.nextID * 1000 + $0.waiters.count } }

    func sleep(until deadline: Double) async throws {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { s -> Bool in
                    if deadline <= s.now { return true }
                    s.waiters.append(Waiter(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s -> Waiter? in
                guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `seconds`, waking every sleeper whose deadline passes, in order. Each
    /// woken task reacts (schedules its next sleep, posts what it must) and everything that reaction
    /// starts runs to its end before time moves on: the test's jobs all run on one thread
    /// (`.onOneThread`), so "nothing left to run" is known, not waited for.
    func advance(by seconds: Double, sourceLocation: SourceLocation = #_sourceLocation) async {
        guard OneThreadExecutor.isInstalled else {
            Issue.record("a manual clock moves only under .onOneThread", sourceLocation: sourceLocation)
            return
        }
        // Tasks started just before (a buzzer pattern, a timer) register their first sleep first.
        await OneThreadExecutor.shared.idle()
        let target = now() + seconds
        while true {
            let next = state.withLock { s -> Waiter? in
                guard let index = s.waiters.indices.min(by: { s.waiters[$0].deadline < s.waiters[$1].deadline }),
                      s.waiters[index].deadline <= target else { return nil }
                let waiter = s.waiters.remove(at: index)
                s.now = max(s.now, waiter.deadline)
                return waiter
            }
            guard let next else { break }
            next.continuation.resume()
            await OneThreadExecutor.shared.idle()
        }
        state.withLock { $0.now = target }
    }

    /// Waits in real time, this clock stopped, until `done` holds (at most `seconds`): for what the
    /// peers do on threads of their own (an SMS just delivered, read by the modem code; a modem that
    /// takes a second to send). Returns at once when it holds already.
    func settle(until done: () async throws -> Bool, seconds: Double = 5) async rethrows {
        let deadline = Date().addingTimeInterval(seconds)
        while try await !done(), Date() < deadline { try? await Task.sleep(for: .milliseconds(1)) }
    }
}
