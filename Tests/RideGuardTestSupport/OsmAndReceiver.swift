// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// A Traccar server's OsmAnd port, written from Traccar's published protocol (traccar.org/osmand):
/// an HTTP request whose query parameters (GET) or form body (POST) hold `id` (or `deviceid`),
/// `timestamp`, `lat`, `lon`, and optionally `speed`, `bearing`, `altitude`, `accuracy`, `alarm`…;
/// Traccar answers a plain 200. `answer(_:)` sets the status it answers (503: the server is down
/// behind its proxy); only reports answered 200 are kept, as Traccar would have stored them.
package final class OsmAndReceiver: Sendable {
    package let port: Int
    private let listener: Int32
    private let state = Mutex<(reports: [[String: String]], status: Int, refused: [[String: String]])>(([], 200, []))

    package init() throws {
        (listener, port) = try loopbackListener()
        let listener = self.listener
        Thread.detachNewThread { [weak self] in
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0, let self else { return }        // closed: the receiver is gone
                serve(connection)
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    package var reports: [[String: String]] { state.withLock { $0.reports } }
    /// The reports answered otherwise than 200.
    package var refused: [[String: String]] { state.withLock { $0.refused } }

    package func answer(_ status: Int) {
        state.withLock { $0.status = status }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // The head, then a body as long as Content-Length says.
        while true {
            let n = read(connection, &buffer, buffer.count)
            guard n > 0 else { return }
            request += buffer[0..<n]
            let text = String(decoding: request, as: UTF8.self)
            guard let end = text.range(of: "\r\n\r\n") else { continue }
            let head = text[..<end.lowerBound]
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            let body = text[end.upperBound...]
            guard body.utf8.count >= length else { continue }
            let line = head.split(separator: "\r\n").first.map(String.init) ?? ""
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "GET" || parts[0] == "POST" else { return respond(connection, 400) }
            let target = String(parts[1])
            var parameters = Self.form(target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? "")
            if parts[0] == "POST" { parameters.merge(Self.form(String(body)), uniquingKeysWith: { $1 }) }
            if parameters["deviceid"] != nil && parameters["id"] == nil { parameters["id"] = parameters["deviceid"] }
            // Without a device there is nothing to store: Traccar answers 400.
            guard parameters["id"] != nil else { return respond(connection, 400) }
            let status = state.withLock { s in
                if s.status == 200 { s.reports.append(parameters) } else { s.refused.append(parameters) }
                return s.status
            }
            return respond(connection, status)
        }
    }

    private func respond(_ connection: Int32, _ status: Int) {
        let reason = status == 200 ? "OK" : status == 400 ? "Bad Request" : "Service Unavailable"
        let response = Array("HTTP/1.1 \(status) \(reason)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        _ = response.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
    }

    /// `a=1&b=x%20y` → ["a": "1", "b": "x y"] (`+` is a space, as in a form).
    package static func form(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0) }
            if let key = kv.first, !key.isEmpty { result[key] = kv.count > 1 ? kv[1] : "" }
        }
        return result
    }
}

/// A TCP socket listening on 127.0.0.1 at a port the kernel chose: the socket and the port.
package func loopbackListener() throws -> (socket: Int32, port: Int) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
    }
    guard bound, listen(listener, 16) == 0 else {
        close(listener)
        throw BrokerError("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
    }
    return (listener, Int(UInt16(bigEndian: address.sin_port)))
}
