// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import Testing

/// While a test runs under `.onOneThread`, every job the Swift runtime hands its global executor
/// (a new task's start, an actor's turn, a resumed continuation) runs here instead: one at a time,
/// on one thread, in the order enqueued. The manual clock can then tell when everything it woke has
/// finished reacting, with no real time slept: no job is waiting (`idle()`).
///
/// Work on threads of its own (a pty's reader, a fake peer, a `Thread` a test starts) is not seen
/// here; what waits on it waits in real time (`ManualClock.settle`). Nothing run here may block
/// waiting for another task: that task would wait behind it. While the hook is in, every task of
/// the process comes here, another test's too: `.onOneThread` scopes take turns, and the suite runs
/// one test at a time (`--no-parallel`, as `scripts/test.sh` does).
package final class OneThreadExecutor: TaskExecutor, @unchecked Sendable {
    package static let shared = OneThreadExecutor()

    private let condition = NSCondition()
    private var queue: [UnownedJob] = []            // guarded by `condition`
    private var head = 0
    private var thread: Thread!                     // set once, in init

    private init() {
        thread = Thread { [unowned self] in self.runJobs() }
        thread.name = "one-thread executor"
        thread.start()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        enqueue(UnownedJob(job))
    }

    package func enqueue(_ job: UnownedJob) {
        condition.lock()
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Jobs enqueued and not yet started.
    private var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count - head
    }

    /// Returns once no other job waits: everything enqueued before, and all it enqueued in turn, has
    /// run. From a test under `.onOneThread`: its first turn may still be on a thread of the
    /// runtime's (the test began before the hook), so it yields until it runs here, where no other
    /// job can be running beside it.
    package func idle() async {
        repeat { await Task.yield() } while !isCurrent || waiting > 0
    }

    private var isCurrent: Bool { Thread.current === thread }

    private func runJobs() {
        while true {
            condition.lock()
            while head == queue.count { condition.wait() }
            let job = queue[head]
            head += 1
            // Jobs that keep the queue from ever running dry (a task yielding in a loop) must not
            // grow it without end: what has run is dropped once it is half the queue.
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 4096 && head * 2 >= queue.count {
                queue.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    // MARK: - The runtime's hook

    private typealias Original = @convention(thin) (UnownedJob) -> Void
    private typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    /// How many scopes have asked for the hook (a suite's and its tests').
    private static let scopes = Mutex(0)

    /// Whether the runtime's global jobs come here now.
    package static var isInstalled: Bool { scopes.withLock { $0 > 0 } }

    // Written only under `scopes`' lock; the runtime reads it as it enqueues.
    nonisolated(unsafe) private static let hook: UnsafeMutablePointer<Hook?> = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else {
            fatalError("the Swift runtime has no swift_task_enqueueGlobal_hook")
        }
        return symbol.assumingMemoryBound(to: Hook?.self)
    }()

    package static func withJobsHere<T>(_ body: () async throws -> T) async rethrows -> T {
        _ = shared
        scopes.withLock { count in
            if count == 0 { hook.pointee = { job, _ in OneThreadExecutor.shared.enqueue(job) } }
            count += 1
        }
        defer {
            scopes.withLock { count in
                count -= 1
                if count == 0 { hook.pointee = nil }
            }
        }
        return try await body()
    }
}

/// Runs `body` on a thread of its own and waits for it without holding a thread of the runtime's:
/// for what blocks (a spawned `rideguard` talking to the agent's socket).
package func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Runs a suite's or a test's jobs on `OneThreadExecutor`: what a manual clock needs to move time
/// deterministically. One such suite at a time, even under `swift test` run in parallel: two
/// tests waiting for the one thread to be idle would each see the other's turn waiting, for ever
/// (a plain `swift test --filter` of two such suites hung so, its queue growing by gigabytes).
package struct OnOneThread: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        if OneThreadTurn.held {                // the suite's scope holds it: its tests run inside
            try await OneThreadExecutor.withJobsHere(function)
            return
        }
        await OneThreadTurn.shared.take()
        defer { OneThreadTurn.shared.give() }
        try await OneThreadTurn.$held.withValue(true) {
            try await OneThreadExecutor.withJobsHere(function)
        }
    }
}

/// The turn of one `.onOneThread` scope: the others wait for it, suspended (no thread held).
private final class OneThreadTurn: Sendable {
    static let shared = OneThreadTurn()
    @TaskLocal static var held = false

    private let state = Mutex<(busy: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                guard s.busy else { s.busy = true; return true }
                s.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func give() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.waiting.isEmpty else { s.busy = false; return nil }
            return s.waiting.removeFirst()          // the turn passes straight to it
        }
        next?.resume()
    }
}

extension Trait where Self == OnOneThread {
    package static var onOneThread: Self { OnOneThread() }
}
