// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardCore
import Synchronization
import Testing

/// A clock the test moves by hand: `advance` wakes sleepers in deadline order and lets each react
/// to the end (schedule its next sleep, post what it must) before moving on. Under `.onOneThread`
/// only: the reactions' end is known there, with no real sleep.
package final class ManualClock: ServiceClock {
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
    /// Counts that change while a peer on a thread of its own is at work (a fake modem reading a
    /// command or writing its answer): time waits while they change.
    private let peers = Mutex<[@Sendable () -> Int]>([])

    package init(now: Double = 1_000_000) {
        state = Mutex(State(now: now))
    }

    package func now() -> Double { state.withLock { $0.now } }

    /// A peer whose work time waits for (`activity` changes while it is at work).
    package func watch(_ activity: @escaping @Sendable () -> Int) {
        peers.withLock { $0.append(activity) }
    }

    private var peerActivity: Int { peers.withLock { $0 }.reduce(0) { $0 &+ $1() } }

    /// Tasks sleeping on this clock now.
    package var sleepers: Int { state.withLock { $0.waiters.count } }

    /// Changes whenever a sleep starts or ends: a part at work (an AT command arms a timer, a
    /// woken task sleeps again).
    package var activity: Int { state.withLock { $0.nextID * 1000 + $0.waiters.count } }

    package func sleep(until deadline: Double) async throws {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // A task cancelled before it first ran has had its `onCancel` already, which found
                // no waiter: it must not leave one now (an AT command's timer cancelled before it
                // started stayed asleep on the clock).
                enum Now { case wait, resume, cancelled }
                let now = state.withLock { s -> Now in
                    if Task.isCancelled { return .cancelled }
                    if deadline <= s.now { return .resume }
                    s.waiters.append(Waiter(id: id, deadline: deadline, continuation: continuation))
                    return .wait
                }
                switch now {
                case .wait: break
                case .resume: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
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
    package func advance(by seconds: Double, sourceLocation: SourceLocation = #_sourceLocation) async {
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

    /// Moves time on in steps of `step` seconds until `done` holds; fails after `limit` seconds of
    /// this clock's time. Between steps the woken tasks run and the peers answer: real peers (a pty,
    /// a socket) answer in real time, which the clock outruns, so it never gives up before a few
    /// real seconds have passed too. `activity`: a count that changes while something reacts (the
    /// agent's log lines), besides the clock's own sleepers.
    package func advance(until done: () async throws -> Bool, limit: Double, step: Double = 0.1, activity: @Sendable () -> Int = { 0 },
                 said: @Sendable () -> String = { "" }, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let end = now() + limit
        let realEnd = Date().addingTimeInterval(5)
        while try await !done() {
            guard now() < end || Date() < realEnd else {
                Issue.record("not done within \(limit) s of the clock's time\(said())", sourceLocation: sourceLocation)
                throw ClockTimeUp(seconds: limit)
            }
            await advance(by: step, sourceLocation: sourceLocation)
            await quiet(activity)
        }
    }

    /// Runs `work` while moving time on until it returns (at most `limit` seconds of this clock's time).
    package func run<T: Sendable>(limit: Double, step: Double = 0.1, sourceLocation: SourceLocation = #_sourceLocation,
                          _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await work() }
        let finished = Atomic<Bool>(false)
        let watcher = Task {
            _ = await task.result
            finished.store(true, ordering: .releasing)
        }
        do {
            try await advance(until: { finished.load(ordering: .acquiring) }, limit: limit, step: step, sourceLocation: sourceLocation)
        } catch {
            task.cancel()       // time is up: the work must not go on into the next test
            throw error
        }
        await watcher.value
        return try await task.value
    }

    /// Lets the tasks woken by a step finish what they do at this instant (AT exchanges, writes,
    /// log lines) before time moves again: up to 20 ms, until nothing changed for a millisecond.
    private func quiet(_ more: () -> Int) async {
        var last = (activity, more() &+ peerActivity)
        var still = 0
        for _ in 0..<40 where still < 2 {
            try? await Task.sleep(for: .microseconds(500))
            let now = (activity, more() &+ peerActivity)
            still = now == last ? still + 1 : 0
            last = now
        }
    }

    /// Waits in real time, this clock stopped, until `done` holds (at most `seconds`): for what the
    /// peers do on threads of their own (an SMS just delivered, read by the modem code; a modem that
    /// takes a second to send). Returns at once when it holds already.
    package func settle(until done: () async throws -> Bool, seconds: Double = 5) async rethrows {
        let deadline = Date().addingTimeInterval(seconds)
        while try await !done(), Date() < deadline { try? await Task.sleep(for: .milliseconds(1)) }
    }
}

package struct ClockTimeUp: Error, CustomStringConvertible {
    package var seconds: Double
    package var description: String { "not done within \(seconds) s of the clock's time" }
}
