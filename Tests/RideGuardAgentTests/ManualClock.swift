import Foundation
import RideGuardAgent
import RideGuardCore
import Synchronization

/// A clock the test moves by hand: `advance` wakes sleepers in deadline order and lets each react
/// (schedule its next sleep) before moving on.
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
    /// woken task gets up to 10 ms of real time to react (most schedule their next sleep at once:
    /// the buzzer's next step, the trace player's next batch) before time moves on.
    func advance(by seconds: Double) async {
        // Tasks started just before (a buzzer pattern, a timer) register their first sleep first.
        await pause()
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
            let sleepsBefore = state.withLock { $0.nextID }
            next.continuation.resume()
            for _ in 0..<100 {
                await pause()
                if state.withLock({ $0.nextID }) != sleepsBefore { break }
            }
        }
        state.withLock { $0.now = target }
        await pause()
    }

    /// Waits in real time, this clock stopped, until `done` holds (at most `seconds`): for what the
    /// woken parts and the peers do without time passing (an input a timer posted, handled by its
    /// service; an SMS just delivered, read by the modem code). Returns at once when it holds already.
    func settle(until done: () async throws -> Bool, seconds: Double = 5) async rethrows {
        let deadline = Date().addingTimeInterval(seconds)
        while try await !done(), Date() < deadline { try? await Task.sleep(for: .milliseconds(1)) }
    }

    /// A tenth of a millisecond of real time, for other tasks and threads to run.
    private func pause() async {
        try? await Task.sleep(for: .microseconds(100))
    }
}
