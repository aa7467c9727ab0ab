#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RideGuardCore
import SystemPackage

/// Writes whole lines to standard output or standard error without Foundation.
enum Output {
    static func line(_ text: String) {
        print(text)
    }

    /// One message on standard error, after whatever standard output already holds.
    static func error(_ text: String) {
        fflush(nil)
        let message = Array(("rideguard: " + text + "\n").utf8)
        message.withUnsafeBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    static func flush() {
        fflush(nil)
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
