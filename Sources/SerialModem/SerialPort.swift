#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RideGuardCore
import Synchronization

/// A failed serial-port call: which device, what for, and the errno.
public struct SerialError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var device: String
    public var errno: Int32

    public var description: String { "\(operation) \(device): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// A serial port in raw mode (8N1, no flow control), opened exclusively, read on a dedicated
/// thread. When the device disappears (a USB modem re-enumerating: EIO, ENXIO, end of file), the
/// reader reports it once and stops; the owner reopens with backoff.
public final class SerialPort: Sendable {
    public let device: String
    private let fd: Int32
    private final class Flags: Sendable {
        let running = Atomic<Bool>(true)
        let closed = Atomic<Bool>(false)
    }
    private let flags = Flags()

    /// Opens and configures `device` (wraps open, TIOCEXCL, tcgetattr/cfmakeraw/tcsetattr).
    public init(device: String, baud: Int = 115_200) throws(SerialError) {
        self.device = device
        let fd = open(device, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SerialError(operation: "opening", device: device, errno: errno) }
        if ioctl(fd, UInt(TIOCEXCL)) != 0 && errno != ENOTTY {
            let code = errno
            Glibc.close(fd)
            throw SerialError(operation: "locking", device: device, errno: code)
        }
        var options = termios()
        guard tcgetattr(fd, &options) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw SerialError(operation: "reading the settings of", device: device, errno: code)
        }
        cfmakeraw(&options)
        options.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CS8)
        options.c_cflag &= ~(tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CRTSCTS))
        options.c_iflag &= ~(tcflag_t(IXON) | tcflag_t(IXOFF) | tcflag_t(IXANY))
        let speed = SerialPort.speed(baud)
        cfsetispeed(&options, speed)
        cfsetospeed(&options, speed)
        guard tcsetattr(fd, TCSANOW, &options) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw SerialError(operation: "configuring", device: device, errno: code)
        }
        tcflush(fd, TCIOFLUSH)
        self.fd = fd
    }

    /// Starts the reader thread: `onBytes` for what arrives, `onGone` once when the device goes away.
    public func startReading(onBytes: @escaping @Sendable ([UInt8]) -> Void, onGone: @escaping @Sendable (String) -> Void) {
        let fd = self.fd, flags = self.flags, device = self.device
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while flags.running.load(ordering: .acquiring) {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, 200)
                if ready < 0 {
                    if errno == EINTR { continue }
                    onGone("\(device): \(String(cString: strerror(errno)))")
                    return
                }
                if ready == 0 { continue }
                if descriptor.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 && descriptor.revents & Int16(POLLIN) == 0 {
                    onGone("\(device): the device hung up")
                    return
                }
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    onBytes(Array(buffer[0..<n]))
                } else if n == 0 {
                    onGone("\(device): end of file (device unplugged?)")
                    return
                } else if errno != EAGAIN && errno != EINTR {
                    onGone("\(device): \(String(cString: strerror(errno)))")
                    return
                }
            }
        }
        thread.name = "rideguard-serial"
        thread.start()
    }

    /// Writes everything (retrying short writes and EINTR/EAGAIN).
    public func write(_ bytes: [UInt8]) throws(SerialError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { usleep(1000); continue }
                throw SerialError(operation: "writing to", device: device, errno: errno)
            }
            offset += n
        }
    }

    public func close() {
        flags.running.store(false, ordering: .releasing)
        if !flags.closed.exchange(true, ordering: .acquiringAndReleasing) {
            usleep(250_000)   // the reader notices within one poll interval
            Glibc.close(fd)
        }
    }

    static func speed(_ baud: Int) -> speed_t {
        switch baud {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 921_600: speed_t(B921600)
        default: speed_t(B115200)
        }
    }

    /// The speeds `speed(_:)` maps; the configuration accepts exactly these.
    public static var supportedBauds: [Int] { AgentConfiguration.Modem.supportedBauds }
}
