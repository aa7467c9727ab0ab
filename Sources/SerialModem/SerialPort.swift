// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import Glibc
import RideGuardCore
import Synchronization
import SystemCalls
import SystemPackage

/// A failed serial-port call: which device, what for, and the errno.
package struct SerialError: Error, CustomStringConvertible, Sendable {
    package var operation: String
    package var device: String
    package var errno: Errno

    package var description: String { "\(operation) \(device): \(errno) (errno \(errno.rawValue))" }
}

/// A serial port in raw mode (8N1, no flow control), opened exclusively, read on a dedicated
/// thread. When the device disappears (a USB modem re-enumerating: EIO, ENXIO, end of file), the
/// reader reports it once and stops; the owner reopens with backoff. Nothing here sleeps: the
/// reader waits in `poll` on the port and on a pipe that `close()` writes to.
package final class SerialPort: Sendable {
    package let device: String
    private let fd: Int32
    private final class Flags: Sendable {
        let running = Atomic<Bool>(true)
        /// The port is closed once: by the reader when it ends after `close()`, or by `close()`
        /// when no reader runs (never while one might still use it).
        struct Ownership {
            var readerAlive = false
            var closeRequested = false
            var portClosed = false
        }
        let ownership = Mutex(Ownership())
        /// `close()` wakes the reader's poll.
        let wake = WakePipe()
    }
    private let flags = Flags()

    /// Opens and configures `device` (wraps open, TIOCEXCL, tcgetattr/cfmakeraw/tcsetattr).
    package init(device: String, baud: Int = 115_200) throws(SerialError) {
        self.device = device
        let fd = open(device, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SerialError(operation: "opening", device: device, errno: Errno(rawValue: errno)) }
        if ioctl(fd, UInt(TIOCEXCL)) != 0 && errno != ENOTTY {
            let code = errno
            Glibc.close(fd)
            throw SerialError(operation: "locking", device: device, errno: Errno(rawValue: code))
        }
        var options = termios()
        guard tcgetattr(fd, &options) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw SerialError(operation: "reading the settings of", device: device, errno: Errno(rawValue: code))
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
            throw SerialError(operation: "configuring", device: device, errno: Errno(rawValue: code))
        }
        tcflush(fd, TCIOFLUSH)
        self.fd = fd
    }

    /// Starts the reader thread: `onBytes` for what arrives, `onGone` once when the device goes away.
    package func startReading(onBytes: @escaping @Sendable ([UInt8]) -> Void, onGone: @escaping @Sendable (String) -> Void) {
        let fd = self.fd, flags = self.flags, device = self.device
        flags.ownership.withLock { $0.readerAlive = true }
        startThread("rg-serial") {
            defer {
                flags.ownership.withLock { o in
                    o.readerAlive = false
                    if o.closeRequested && !o.portClosed {
                        o.portClosed = true
                        Glibc.close(fd)
                    }
                }
            }
            let port = FileDescriptor(rawValue: fd)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while flags.running.load(ordering: .acquiring) {
                var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: flags.wake.readEnd, events: Int16(POLLIN), revents: 0)]
                do { _ = try poll(&descriptors, milliseconds: -1) } catch {
                    onGone("\(device): \(error)")
                    return
                }
                if descriptors[1].revents != 0 { return }      // close()
                let descriptor = descriptors[0]
                if descriptor.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 && descriptor.revents & Int16(POLLIN) == 0 {
                    onGone("\(device): the device hung up")
                    return
                }
                do {
                    let n = try buffer.withUnsafeMutableBytes { try port.read(into: $0) }
                    guard n > 0 else {
                        onGone("\(device): end of file (device unplugged?)")
                        return
                    }
                    onBytes(Array(buffer[0..<n]))
                } catch Errno.resourceTemporarilyUnavailable {
                    continue
                } catch {
                    onGone("\(device): \(error)")
                    return
                }
            }
        }
    }

    /// Writes everything: short writes are continued, and a full output buffer (EAGAIN) is waited
    /// out in `poll` for up to 2 s (a modem that takes nothing for that long is stuck: an error).
    package func write(_ bytes: [UInt8]) throws(SerialError) {
        let port = FileDescriptor(rawValue: fd)
        var offset = 0
        while offset < bytes.count {
            do {
                offset += try bytes.withUnsafeBytes { try port.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            } catch Errno.resourceTemporarilyUnavailable {
                var descriptor = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
                if (try? poll(&descriptor, milliseconds: 2000)) == 0 { throw SerialError(operation: "writing to", device: device, errno: Errno(rawValue: ETIMEDOUT)) }
            } catch {
                throw SerialError(operation: "writing to", device: device, errno: (error as? Errno) ?? .ioError)
            }
        }
    }

    /// Stops the reader, which then closes the port (at once: it is woken, not polled).
    package func close() {
        flags.running.store(false, ordering: .releasing)
        let fd = self.fd
        let wakeReader = flags.ownership.withLock { o -> Bool in
            o.closeRequested = true
            if o.readerAlive { return true }
            if !o.portClosed {
                o.portClosed = true
                Glibc.close(fd)
            }
            return false
        }
        if wakeReader { flags.wake.wake() }
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
    package static var supportedBauds: [Int] { AgentConfiguration.Modem.supportedBauds }
}
