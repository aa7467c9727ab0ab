#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
