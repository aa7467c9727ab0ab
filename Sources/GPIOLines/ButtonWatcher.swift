#if canImport(Glibc)
import Glibc
#endif
import CGPIOD
import Foundation
import Synchronization

/// Watches the button's input line on a dedicated thread and reports each edge with the kernel's
/// timestamp (CLOCK_MONOTONIC, seconds). The line comes from `open`; after an error (a loose
/// connector, the chip gone) the watcher releases it and calls `open` again with backoff, 0.5 s
/// doubling to 30 s, the way the IMU is reopened. Stops within `pollInterval` of `stop()`.
public final class ButtonWatcher: Sendable {
    public typealias Edge = (pressed: Bool, monotonicSeconds: Double)

    public enum Event: Sendable {
        /// The line is requested and watched (again).
        case opened
        /// Opening or watching failed; the next attempt is in `retryIn` seconds.
        case failed(GPIOError, retryIn: Double)
    }

    /// Flags shared with the thread (atomics cannot be copied into its closure).
    private final class Flags: Sendable {
        let running = Atomic<Bool>(true)
        let finished = Atomic<Bool>(false)
    }

    private let flags = Flags()
    public let pollInterval: Double

    /// Starts watching; `onEdge` and `onEvent` run on the watcher's thread.
    public init(open: @escaping @Sendable () throws(GPIOError) -> GPIOLine, pollInterval: Double = 0.2,
                onEdge: @escaping @Sendable (Edge) -> Void, onEvent: @escaping @Sendable (Event) -> Void) {
        self.pollInterval = pollInterval
        let flags = self.flags
        let thread = Thread {
            defer { flags.finished.store(true, ordering: .releasing) }
            var backoff = 0.5
            while flags.running.load(ordering: .acquiring) {
                let failure: GPIOError
                do throws(GPIOError) {
                    let line = try open()
                    onEvent(.opened)
                    backoff = 0.5
                    guard let error = ButtonWatcher.watch(line, flags: flags, pollInterval: pollInterval, onEdge: onEdge) else { return }
                    failure = error
                } catch {
                    failure = error
                }
                guard flags.running.load(ordering: .acquiring) else { return }
                onEvent(.failed(failure, retryIn: backoff))
                var left = backoff
                while left > 0 && flags.running.load(ordering: .acquiring) {
                    usleep(100_000)
                    left -= 0.1
                }
                backoff = min(30, backoff * 2)
            }
        }
        thread.name = "rideguard-button"
        thread.start()
    }

    /// Reports the line's edges until `stop()` (nil) or an error (returned; the line is released).
    private static func watch(_ line: GPIOLine, flags: Flags, pollInterval: Double,
                              onEdge: @Sendable (Edge) -> Void) -> GPIOError? {
        while flags.running.load(ordering: .acquiring) {
            switch line.waitForEdge(timeout: pollInterval) {
            case .failure(let error): return error
            case .success(false): continue
            case .success(true):
                switch line.readEdge() {
                case .success(let edge): onEdge(edge)
                case .failure(let error): return error
                }
            }
        }
        return nil
    }

    /// Asks the thread to stop; it notices within one poll interval.
    public func stop() {
        flags.running.store(false, ordering: .releasing)
    }

    public var isFinished: Bool { flags.finished.load(ordering: .acquiring) }
}

extension GPIOLine {
    /// Waits for an edge: true when one is pending, false on timeout.
    func waitForEdge(timeout: Double) -> Result<Bool, GPIOError> {
        let result = rg_gpio_line_wait(handle, Int64(timeout * 1e9))
        if result < 0 { return .failure(GPIOError(operation: "waiting for an edge on", line: address.description, errno: errno)) }
        return .success(result > 0)
    }

    /// Reads one pending edge: whether the line is now active (pressed, with active-low applied).
    func readEdge() -> Result<ButtonWatcher.Edge, GPIOError> {
        var rising: Int32 = 0
        var timestamp: UInt64 = 0
        guard rg_gpio_line_read(handle, &rising, &timestamp) == 0 else {
            return .failure(GPIOError(operation: "reading an edge of", line: address.description, errno: errno))
        }
        return .success((pressed: rising != 0, monotonicSeconds: Double(timestamp) / 1e9))
    }
}
