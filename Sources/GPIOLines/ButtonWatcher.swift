// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CGPIOD
import FoundationEssentials
import Glibc
import Synchronization
import SystemCalls
import SystemPackage
import RideGuardCore

/// Watches the button's input line on a dedicated thread and reports each edge with the kernel's
/// timestamp (CLOCK_MONOTONIC, seconds). The thread sleeps in `poll` on the line's descriptor (as
/// `gpiomon` does) and on a pipe that `stop()` writes to, waking once a second to notice a chip
/// that went away (`lostLineCheckSeconds`). The line
/// comes from `open`; after an error (a loose connector, the chip gone) the watcher releases it and
/// calls `open` again with backoff, 0.5 s doubling to 30 s, the way the IMU is reopened.
package final class ButtonWatcher: Sendable {
    package typealias Edge = (pressed: Bool, monotonicSeconds: Double)

    package enum Event: Sendable {
        /// The line is requested and watched (again); whether it is active now (nil: unreadable).
        case opened(active: Bool?)
        /// Opening or watching failed; the next attempt is in `retryIn` seconds.
        case failed(GPIOError, retryIn: Double)
    }

    /// Shared with the thread (atomics cannot be copied into its closure).
    private final class Flags: Sendable {
        let running = Atomic<Bool>(true)
        let finished = Atomic<Bool>(false)
        /// `stop()` wakes the thread's poll.
        let wake = WakePipe()

        enum Wake { case ready, quiet, failed(Int32) }

        /// Another edge is already waiting to be read.
        func pending(_ fd: Int32) -> Bool {
            if case .ready = wait(for: fd, seconds: 0) { return true }
            return false
        }

        /// Sleeps until `fd` is readable, or `seconds` pass or `stop()` (quiet). -1: no timeout.
        func wait(for fd: Int32, seconds: Double) -> Wake {
            var fds = [pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
            if fd >= 0 { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            let deadline = seconds < 0 ? nil : monotonicSeconds() + seconds
            while running.load(ordering: .acquiring) {
                let left = deadline.map { Int32(max(0, ($0 - monotonicSeconds()) * 1000).rounded(.up)) } ?? -1
                let ready: Int
                do throws(Errno) { ready = try poll(&fds, milliseconds: Int(left)) } catch { return .failed(error.rawValue) }
                if ready == 0 || fds[0].revents != 0 { return .quiet }      // time is up, or stop()
                if fds.count > 1, fds[1].revents & Int16(POLLIN) != 0 { return .ready }
                if fds.count > 1, fds[1].revents != 0 { return .failed(EIO) }   // POLLERR/POLLHUP: the chip is gone
            }
            return .quiet
        }
    }

    private let flags = Flags()

    /// Starts watching; `onEdge` and `onEvent` run on the watcher's thread.
    package init(open: @escaping @Sendable () throws(GPIOError) -> GPIOLine,
                onEdge: @escaping @Sendable (Edge) -> Void, onEvent: @escaping @Sendable (Event) -> Void) {
        let flags = self.flags
        startThread("rg-button") {
            defer { flags.finished.store(true, ordering: .releasing) }
            var backoff = Backoff(first: 0.5, limit: 30)
            while flags.running.load(ordering: .acquiring) {
                let failure: GPIOError
                do throws(GPIOError) {
                    let line = try open()
                    onEvent(.opened(active: try? line.isActive()))
                    backoff.reset()
                    guard let error = ButtonWatcher.watch(line, flags: flags, onEdge: onEdge) else { return }
                    failure = error
                } catch {
                    failure = error
                }
                guard flags.running.load(ordering: .acquiring) else { return }
                let wait = backoff.next()
                onEvent(.failed(failure, retryIn: wait))
                _ = flags.wait(for: -1, seconds: wait)
            }
        }
    }

    /// Reports the line's edges until `stop()` (nil) or an error (returned; the line is released).
    private static func watch(_ line: GPIOLine, flags: Flags, onEdge: @Sendable (Edge) -> Void) -> GPIOError? {
        let fd = line.eventDescriptor
        let failed = { (code: Int32) in GPIOError(operation: "waiting for an edge on", line: line.address.description, errno: Errno(rawValue: code)) }
        guard fd >= 0 else { return failed(errno) }
        while flags.running.load(ordering: .acquiring) {
            switch flags.wait(for: fd, seconds: lostLineCheckSeconds) {
            case .failed(let code): return failed(code)
            case .quiet: continue          // time to ask again, or stop() (the loop's condition)
            case .ready:
                // Every edge already pending, in the kernel's order, before sleeping again.
                repeat {
                    switch line.readEdge() {
                    case .success(let edge): onEdge(edge)
                    case .failure(let error): return error
                    }
                } while flags.pending(fd)
            }
        }
        return nil
    }

    /// Linux 6.1 does not wake a poll already waiting on a line when its chip goes away (a later
    /// poll answers POLLHUP at once): the watcher asks again this often, seconds.
    static let lostLineCheckSeconds = 1.0

    /// Wakes the thread and asks it to stop; it releases the line and ends at once.
    package func stop() {
        flags.running.store(false, ordering: .releasing)
        flags.wake.wake()
    }

    package var isFinished: Bool { flags.finished.load(ordering: .acquiring) }
}


extension GPIOLine {
    /// The descriptor that becomes readable when an edge is pending.
    var eventDescriptor: Int32 { rg_gpio_line_fd(handle) }

    /// Reads one pending edge: whether the line is now active (pressed, with active-low applied).
    func readEdge() -> Result<ButtonWatcher.Edge, GPIOError> {
        var rising: Int32 = 0
        var timestamp: UInt64 = 0
        guard rg_gpio_line_read(handle, &rising, &timestamp) == 0 else {
            return .failure(GPIOError(operation: "reading an edge of", line: address.description, errno: Errno(rawValue: errno)))
        }
        return .success((pressed: rising != 0, monotonicSeconds: Double(timestamp) / 1e9))
    }
}
