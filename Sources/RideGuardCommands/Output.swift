// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RideGuardCore
import Synchronization
import SystemPackage

/// Writes whole lines to standard output or standard error without Foundation; or, where a test
/// runs a command in its own process, into that test's `OutputCapture`.
enum Output {
    /// Where the lines go instead of the standard streams (the tests' in-process commands).
    @TaskLocal static var capture: OutputCapture?

    static func line(_ text: String, terminator: String = "\n") {
        if let capture { return capture.add(text + terminator, error: false) }
        print(text, terminator: terminator)
    }

    /// One message on standard error, after whatever standard output already holds.
    static func error(_ text: String) {
        let message = "rideguard: " + text + "\n"
        if let capture { return capture.add(message, error: true) }
        fflush(nil)
        let bytes = Array(message.utf8)
        bytes.withUnsafeBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    static func flush() {
        fflush(nil)
    }
}

/// What a command wrote, kept (a test runs it in-process: `RideGuard.run(arguments:)`).
package final class OutputCapture: Sendable {
    private let written = Mutex<(out: String, error: String)>(("", ""))

    package init() {}

    package var standardOutput: String { written.withLock { $0.out } }
    package var standardError: String { written.withLock { $0.error } }

    func add(_ text: String, error: Bool) {
        written.withLock { if error { $0.error += text } else { $0.out += text } }
    }
}

/// Writes a whole file, or throws a TraceError naming it.
func writeFile(_ path: String, _ bytes: UnsafeRawBufferPointer) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw TraceError(source: path, line: nil, reason: "cannot create: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    do { try FileDescriptor(rawValue: fd).writeAll(bytes) } catch {
        throw TraceError(source: path, line: nil, reason: "write failed: \(error)")
    }
}
