// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CGPS
import RideGuardCore

/// A failed connection to gpsd: on which gpsd, what for, and why.
package struct GPSDError: Error, CustomStringConvertible, Sendable {
    package var operation: String
    package var server: String
    package var reason: String

    package var description: String { "\(operation) gpsd at \(server): \(reason)" }
}

/// A session with gpsd (gpsd_json(5)): the socket is ours, and libgps (3.22 or 3.25; the shim hides
/// the differences) parses one report line at a time. Reading the socket ourselves means a line
/// libgps cannot parse is dropped here instead of hanging its reader: libgps 3.22 loops forever
/// inside `gps_read` on `{"devices":[],"class":"SKY"}`. gpsd writes every report as `{"class":"…`.
package final class GPSDConnection {
    let data: UnsafeMutablePointer<gps_data_t>
    let socket: Int32
    package let host: String
    package let port: String
    private var pending: [UInt8] = []
    private var received = [UInt8](repeating: 0, count: 4096)
    /// Lines dropped because they are not reports as gpsd writes them.
    package private(set) var dropped = 0

    /// The libgps API this binary was compiled against (11 for gpsd 3.22, 14 for 3.25).
    package static var apiMajor: Int { Int(rg_gps_api_major()) }
    /// Longer than any report gpsd writes (its own limit is 10 KB): a stream that runs past it
    /// without a newline is not gpsd's.
    static let longestLine = 16_384

    /// Connects (5 s at most) and asks for JSON reports: `?WATCH={"enable":true,"json":true};`.
    package init(host: String = "127.0.0.1", port: String = "2947") throws(GPSDError) {
        let server = "\(host):\(port)"
        func failed(_ operation: String, _ code: Int32) -> GPSDError {
            GPSDError(operation: operation, server: server, reason: code == 0 ? "no answer" : String(cString: strerror(code)))
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(host, port, &hints, &found)
        guard lookup == 0, let first = found else {
            throw GPSDError(operation: "connecting to", server: server, reason: String(cString: gai_strerror(lookup)))
        }
        defer { freeaddrinfo(found) }
        var fd: Int32 = -1
        var lastError: Int32 = ECONNREFUSED
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate, fd < 0 {
            candidate = address.pointee.ai_next
            let s = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.ai_protocol)
            guard s >= 0 else { lastError = errno; continue }
            if Self.connect(s, address.pointee.ai_addr, address.pointee.ai_addrlen, seconds: 5) {
                fd = s
            } else {
                lastError = errno
                close(s)
            }
        }
        guard fd >= 0 else { throw failed("connecting to", lastError) }
        let watch = Array(#"?WATCH={"enable":true,"json":true};"#.utf8) + [0x0A]
        guard watch.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == watch.count else {
            let code = errno
            close(fd)
            throw failed("watching", code)
        }
        let session = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        session.initialize(to: gps_data_t())
        data = session
        socket = fd
        self.host = host
        self.port = port
    }

    deinit {
        close(socket)
        data.deallocate()
    }

    /// What waiting for the next report gave.
    enum Next {
        case report(isFix: Bool)
        case quiet
        case closed(String)
    }

    /// Waits up to `seconds` for the next report line and parses it into `data`.
    func next(seconds: Double) -> Next {
        while true {
            if let line = takeLine() {
                guard line.starts(with: Array(#"{"class":""#.utf8)) else {
                    dropped += 1
                    continue
                }
                var text = line.map { CChar(bitPattern: $0) } + [0]
                let parsed = rg_gps_unpack(&text, data)
                guard parsed >= 0 else {
                    dropped += 1
                    continue
                }
                return .report(isFix: line.starts(with: Array(#"{"class":"TPV""#.utf8)))
            }
            if pending.count > Self.longestLine { return .closed("gpsd sent a line longer than \(Self.longestLine) bytes") }
            var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&fds, 1, Int32(seconds * 1000))
            if ready == 0 { return .quiet }
            if ready < 0 {
                if errno == EINTR { continue }
                return .closed("gpsd connection lost: \(String(cString: strerror(errno)))")
            }
            let n = recv(socket, &received, received.count, 0)
            if n == 0 { return .closed("gpsd closed the connection") }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .closed("gpsd connection lost: \(String(cString: strerror(errno)))")
            }
            pending += received[0..<n]
        }
    }

    /// The next complete line (without its CR LF), if one has arrived.
    private func takeLine() -> [UInt8]? {
        guard let end = pending.firstIndex(of: 0x0A) else { return nil }
        var line = Array(pending[..<end])
        pending.removeSubrange(...end)
        if line.last == 0x0D { line.removeLast() }
        return line
    }

    /// A connect that gives up after `seconds` (a remote gpsd that does not answer).
    private static func connect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, seconds: Double) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        if Glibc.connect(fd, address, length) == 0 { return true }
        guard errno == EINPROGRESS else { return false }
        var fds = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&fds, 1, Int32(seconds * 1000)) == 1 else { errno = ETIMEDOUT; return false }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
        errno = error
        return error == 0
    }
}
