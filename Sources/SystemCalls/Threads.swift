// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Runs `body` on a thread of its own, for work that blocks (a device read, poll, a socket's
/// accept): never on Swift's concurrency pool, which has a thread per core. `name` is what `top -H`
/// and `/proc/<pid>/task/*/comm` show (the kernel keeps 15 bytes).
package func startThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
    final class Work {
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let work = Unmanaged.passRetained(Work(name, body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { argument in
        let work = Unmanaged<Work>.fromOpaque(argument!).takeRetainedValue()
        nameThisThread(work.name)
        work.body()
        return nil
    }, work)
    // Only a process out of memory or past its thread limit gets here: nothing can go on without it.
    precondition(result == 0, "cannot start the thread \(name): \(String(cString: strerror(result)))")
    pthread_detach(thread)
}

/// pthread_setname_np needs _GNU_SOURCE, which Swift's Glibc module does not define; the kernel's
/// own file for it does the same.
private func nameThisThread(_ name: String) {
    let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard file >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = write(file, bytes, bytes.count)
    close(file)
}

/// Runs a program (`arguments[0]`, a path or a name looked up in PATH) and waits for it on a
/// thread of its own: its exit status, or nil when it could not be started.
package func runProgram(_ arguments: [String]) async -> Int32? {
    await withCheckedContinuation { (done: CheckedContinuation<Int32?, Never>) in
        startThread("rg-run") {
            var pid = pid_t()
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            guard !arguments.isEmpty, posix_spawnp(&pid, arguments[0], nil, nil, &argv, environ) == 0 else {
                return done.resume(returning: nil)
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS, which Swift does not import (macros)
            done.resume(returning: status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f))
        }
    }
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
