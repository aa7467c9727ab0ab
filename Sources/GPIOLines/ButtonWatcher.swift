#if canImport(Glibc)
import Glibc
#endif
import CGPIOD
import Foundation
import Synchronization

/// Watches an input line on a dedicated thread and reports each edge with the kernel's timestamp
/// (CLOCK_MONOTONIC, seconds). Stops within `pollInterval` of `stop()`.
public final class ButtonWatcher: Sendable {
    public typealias Edge = (pressed: Bool, monotonicSeconds: Double)

    /// Flags shared with the thread (atomics cannot be copied into its closure).
    private final class Flags: Sendable {
        let running = Atomic<Bool>(true)
        let finished = Atomic<Bool>(false)
    }

    private let line: GPIOLine
    private let flags = Flags()
    public let pollInterval: Double

    /// Starts watching; `onEdge` and `onError` run on the watcher's thread. After an error the
    /// watcher stops: the owner reopens the line (with backoff) and starts a new one.
    public init(line: GPIOLine, pollInterval: Double = 0.2,
                onEdge: @escaping @Sendable (Edge) -> Void, onError: @escaping @Sendable (GPIOError) -> Void) {
        self.line = line
        self.pollInterval = pollInterval
        let flags = self.flags
        let thread = Thread {
            defer { flags.finished.store(true, ordering: .releasing) }
            while flags.running.load(ordering: .acquiring) {
                let waited = line.waitForEdge(timeout: pollInterval)
                switch waited {
                case .failure(let error):
                    onError(error)
                    return
                case .success(false):
                    continue
                case .success(true):
                    switch line.readEdge() {
                    case .success(let edge): onEdge(edge)
                    case .failure(let error):
                        onError(error)
                        return
                    }
                }
            }
        }
        thread.name = "rideguard-button"
        thread.start()
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
