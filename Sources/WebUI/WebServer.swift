// SPDX-License-Identifier: Apache-2.0
import Glibc
import HTTPRequests
import Synchronization
import SystemCalls

/// The page's HTTP/1.1 server, written for a page that someone else on the Wi-Fi may attack: every
/// size and time is bounded, and one request is answered per connection (`Connection: close`), so
/// that nothing left unread can be taken for a next request. One thread reads every connection
/// with poll(2), however many there are; a request read whole goes to the handler, and its answer
/// is written on a thread of its own (a recording's CSV can take minutes to a slow phone).
///
/// What a stranger gets: a request line, a header block or a body past its limit is refused at once
/// and the connection closed, never read further; a request not whole within `requestSeconds` is
/// closed; more than `perAddress` connections from one address, or `connections` in all, are refused.
package final class WebServer: Sendable {
    package struct Limits: Sendable {
        /// How large a request may be (its line, its head, its body).
        package var request = RequestLimits()
        /// Connections open at once, in all and from one address.
        package var connections = 128
        package var perAddress = 16
        /// The whole request must arrive within this, from the connection's start, seconds.
        package var requestSeconds = 10.0
        /// An answer whose reader takes nothing for this long is given up, seconds.
        package var writeStallSeconds = 15.0
        /// Requests answered at once, in all and for one address; the others wait their turn, read
        /// whole (each answer takes two threads: the page's work and the writing).
        package var answers = 8
        package var answersPerAddress = 4

        package init() {}
    }

    package let limits: Limits
    private let handler: @Sendable (WebRequest) async -> WebResponse
    private let listener: Int32
    private let wake = WakePipe()
    private let stopping = Atomic<Bool>(false)
    /// Connections open by address, from accept until closed (an answer being written counts).
    private let open = Mutex<[String: Int]>([:])
    private let acceptPausedUntil = Mutex(0.0)
    /// Requests read whole, waiting for their turn, and the answers under way by address.
    private let turns = Mutex<(waiting: [(request: WebRequest, fd: Int32)], answering: [String: Int])>(([], [:]))

    /// Listens on `host:port` (IPv4). Throws the reason when it cannot (the port taken, an address
    /// not on this machine).
    package init(host: String, port: Int, limits: Limits = Limits(), handler: @escaping @Sendable (WebRequest) async -> WebResponse) throws(WebServerError) {
        self.limits = limits
        self.handler = handler
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw WebServerError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw WebServerError("'\(host)' is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw WebServerError("cannot listen on \(host):\(port): \(reason)")
        }
        listener = fd
    }

    /// Serves until `stop()`, on the calling thread (one of its own).
    package func run() {
        var reading: [Int32: Incoming] = [:]
        while !stopping.load(ordering: .acquiring) {
            let now = monotonicSeconds()
            // Out of descriptors (EMFILE): the listener rests a moment instead of waking poll at once.
            let listening = now >= acceptPausedUntil.withLock { $0 }
            var descriptors = [pollfd(fd: listening ? listener : -1, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
            descriptors += reading.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let soonest = reading.values.map(\.deadline).min() ?? now + 1
            let wait = Int(max(0, min(1, soonest - now)) * 1000) + 1
            guard (try? poll(&descriptors, milliseconds: wait)) != nil else { continue }
            if descriptors[0].revents != 0 { acceptAll(into: &reading) }
            for descriptor in descriptors.dropFirst(2) where descriptor.revents != 0 {
                guard var incoming = reading[descriptor.fd] else { continue }
                switch incoming.read() {
                case .more:
                    reading[descriptor.fd] = incoming
                case nil:
                    reading[descriptor.fd] = nil
                    finish(incoming.fd, incoming.address)
                case .refused(let status, let reason):
                    reading[descriptor.fd] = nil
                    refuse(incoming, status, reason)
                case .request(let request):
                    reading[descriptor.fd] = nil
                    answer(request, on: incoming.fd)
                }
            }
            // Too slow: the whole request had its time (a slowloris holds nothing for long).
            let late = monotonicSeconds()
            for (fd, incoming) in reading where incoming.deadline <= late {
                reading[fd] = nil
                refuse(incoming, 408, "the request did not arrive within \(Int(limits.requestSeconds)) s")
            }
        }
        for incoming in reading.values { finish(incoming.fd, incoming.address) }
        close(listener)
    }

    /// Ends `run()`; answers being written go on to their end.
    package func stop() {
        stopping.store(true, ordering: .releasing)
        wake.wake()
    }

    // MARK: - Connections

    private func acceptAll(into reading: inout [Int32: Incoming]) {
        while true {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            guard fd >= 0 else {
                // EAGAIN: none left. EMFILE and the like: tried again in 100 ms, not in a busy loop.
                if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { acceptPausedUntil.withLock { $0 = monotonicSeconds() + 0.1 } }
                return
            }
            // What accept4 would do (it needs _GNU_SOURCE, which Swift's Glibc module does not define).
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            inet_ntop(AF_INET, &peer.sin_addr, &text, socklen_t(text.count))
            let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let admitted = open.withLock { open -> Bool in
                guard open.values.reduce(0, +) < limits.connections, open[address, default: 0] < limits.perAddress else { return false }
                open[address, default: 0] += 1
                return true
            }
            guard admitted else {
                // Said in one write the socket's buffer takes at once, then closed: never read.
                let refusal = Array(Self.head(503, [("Retry-After", "10")], length: 0).utf8)
                _ = send(fd, refusal, refusal.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                close(fd)
                continue
            }
            reading[fd] = Incoming(fd: fd, address: address, deadline: monotonicSeconds() + limits.requestSeconds, limits: limits.request)
        }
    }

    private func finish(_ fd: Int32, _ address: String) {
        close(fd)
        open.withLock { open in
            open[address, default: 1] -= 1
            if open[address] == 0 { open[address] = nil }
        }
    }

    /// Refused at once, the connection closed: what the client sent beyond is never read.
    private func refuse(_ incoming: Incoming, _ status: Int, _ reason: String) {
        let body = Array((reason + "\n").utf8)
        let refusal = Array(Self.head(status, [("Content-Type", "text/plain; charset=utf-8")], length: body.count).utf8) + body
        _ = send(incoming.fd, refusal, refusal.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        shutdown(incoming.fd, Int32(SHUT_WR))
        finish(incoming.fd, incoming.address)
    }

    /// Answered now if there is room, else when an answer before it ends (in the order they came,
    /// an address past its share passed over until one of its own ends).
    private func answer(_ request: WebRequest, on fd: Int32) {
        turns.withLock { $0.waiting.append((request, fd)) }
        startAnswers()
    }

    private func startAnswers() {
        let ready = turns.withLock { turns -> [(request: WebRequest, fd: Int32)] in
            var ready: [(request: WebRequest, fd: Int32)] = []
            var index = 0
            while index < turns.waiting.count && turns.answering.values.reduce(0, +) < limits.answers {
                let address = turns.waiting[index].request.remote
                if turns.answering[address, default: 0] < limits.answersPerAddress {
                    turns.answering[address, default: 0] += 1
                    ready.append(turns.waiting.remove(at: index))
                } else {
                    index += 1
                }
            }
            return ready
        }
        for (request, fd) in ready {
            Task.detached { [self] in
                let response = await handler(request)
                startThread("rg-web-write") { [self] in
                    deliver(response, to: fd)
                    finish(fd, request.remote)
                    turns.withLock { turns in
                        turns.answering[request.remote, default: 1] -= 1
                        if turns.answering[request.remote] == 0 { turns.answering[request.remote] = nil }
                    }
                    startAnswers()
                }
            }
        }
    }

    /// The answer, blocking with a stall timeout: a phone that stops reading is let go.
    private func deliver(_ response: WebResponse, to fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        var timeout = timeval(tv_sec: Int(limits.writeStallSeconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var file: Int32 = -1
        var length = response.body.count
        if let path = response.file {
            file = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            var info = stat()
            guard file >= 0, fstat(file, &info) == 0 else {
                if file >= 0 { close(file) }
                _ = sendAll(Array(Self.head(500, [], length: 0).utf8), fd)
                return
            }
            length = Int(info.st_size)
        }
        defer { if file >= 0 { close(file) } }
        guard sendAll(Array(Self.head(response.status, response.headers, length: length).utf8), fd) else { return }
        guard file >= 0 else {
            _ = sendAll(response.body, fd)
            return
        }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var left = length
        while left > 0 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, min($0.count, left)) }
            guard n > 0, sendAll(Array(chunk[0..<n]), fd) else { return }
            left -= n
        }
    }

    private func sendAll(_ bytes: [UInt8], _ fd: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    static func head(_ status: Int, _ headers: [(String, String)], length: Int) -> String {
        var text = "HTTP/1.1 \(status) \(phrases[status] ?? "Status")\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return text + "Content-Length: \(length)\r\nConnection: close\r\n\r\n"
    }

    static let phrases = [200: "OK", 303: "See Other", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
                          405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict", 411: "Length Required",
                          413: "Content Too Large", 414: "URI Too Long", 421: "Misdirected Request", 422: "Unprocessable Content",
                          429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
                          501: "Not Implemented", 503: "Service Unavailable"]
}

package struct WebServerError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}

/// A request being read from its connection.
struct Incoming {
    let fd: Int32
    let address: String
    let deadline: Double
    var reader: RequestReader

    init(fd: Int32, address: String, deadline: Double, limits: RequestLimits) {
        self.fd = fd
        self.address = address
        self.deadline = deadline
        reader = RequestReader(address: address, limits: limits)
    }

    /// Reads what the socket has, and says how far the request is; nil when the peer closed it.
    mutating func read() -> RequestReader.Progress? {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return .more }
        guard n > 0 else { return nil }
        return reader.feed(chunk[0..<n])
    }
}
