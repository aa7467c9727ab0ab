// SPDX-License-Identifier: Apache-2.0
/// How large a request may be. Anything larger is refused with its status, never read further.
package struct RequestLimits: Sendable, Equatable {
    /// "GET /path?query HTTP/1.1", bytes.
    package var requestLine = 8 << 10
    /// The request line and every header, bytes.
    package var head = 16 << 10
    package var headerLines = 64
    /// A form's body, bytes (the page's largest, a medical note, is a few hundred).
    package var body = 64 << 10

    package init() {}
}

/// One HTTP/1.1 request read from the bytes a connection delivers, however they are split: the
/// head (RFC 9112: the request line, then NAME: VALUE lines, then an empty line) and a body of
/// exactly its Content-Length. No I/O: the server feeds it what each read gave. What is not plainly
/// HTTP/1.x is refused, never guessed, and a refusal is final: nothing fed after it (a body that
/// holds a request of its own, say) is ever read as a request.
package struct RequestReader {
    package enum Progress: Equatable, Sendable {
        /// The request is not whole yet.
        case more
        /// Refused with this status and reason: the connection is answered and closed.
        case refused(Int, String)
        /// The request, with its body.
        case request(WebRequest)
    }

    /// Refusal statuses, as the reasons below give them.
    package static let refusals: Set<Int> = [400, 411, 413, 414, 431, 501]

    let address: String
    let limits: RequestLimits
    private var bytes: [UInt8] = []
    /// Once the head is read: the request without its body, and where the body starts.
    private var head: (request: WebRequest, bodyStart: Int, length: Int)?
    private var outcome: Progress = .more

    /// `address`: the peer's, carried into the request.
    package init(address: String, limits: RequestLimits) {
        self.address = address
        self.limits = limits
    }

    /// Takes the next bytes of the connection; says how far the request is.
    package mutating func feed(_ chunk: some Collection<UInt8>) -> Progress {
        guard outcome == .more else { return outcome }
        outcome = advance(chunk)
        return outcome
    }

    private mutating func advance(_ chunk: some Collection<UInt8>) -> Progress {
        let searchFrom = max(0, bytes.count - 3)
        bytes += chunk
        if head == nil {
            guard let end = Self.find([13, 10, 13, 10], in: bytes, from: searchFrom) else {
                // Refused as soon as no end can come within the limits: the line's CR may be the
                // last byte so far, the head's CR LF CR the last three.
                let lineEnd = Self.find([13, 10], in: bytes, from: 0)
                if lineEnd.map({ $0 > limits.requestLine }) ?? (bytes.count > limits.requestLine + 1) { return lineTooLong }
                if bytes.count > limits.head + 3 { return headTooLong }
                return .more
            }
            if (Self.find([13, 10], in: bytes, from: 0) ?? end) > limits.requestLine { return lineTooLong }
            if end > limits.head { return headTooLong }
            switch Self.parseHead(bytes[0..<end], address: address, limits: limits) {
            case .failure(let refusal): return .refused(refusal.status, refusal.reason)
            case .success(let parsed): head = (parsed.request, end + 4, parsed.length)
            }
        }
        guard let head, bytes.count >= head.bodyStart + head.length else { return .more }
        var request = head.request
        request.body = Array(bytes[head.bodyStart..<(head.bodyStart + head.length)])
        return .request(request)
    }

    private var lineTooLong: Progress { .refused(414, "the request line is longer than \(limits.requestLine) bytes") }
    private var headTooLong: Progress { .refused(431, "the request's headers are longer than \(limits.head) bytes") }

    struct Refusal: Error {
        var status: Int
        var reason: String
    }

    /// The request line and headers, without the empty line that ends them.
    static func parseHead(_ head: ArraySlice<UInt8>, address: String, limits: RequestLimits) -> Result<(request: WebRequest, length: Int), Refusal> {
        let text = String(decoding: head, as: UTF8.self)
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines[0].split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0", parts[1].hasPrefix("/"),
              !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && $0.isUppercase }) else {
            return .failure(Refusal(status: 400, reason: "not an HTTP/1.1 request line"))
        }
        guard lines.count - 1 <= limits.headerLines else { return .failure(Refusal(status: 431, reason: "more than \(limits.headerLines) header lines")) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex, !line.first!.isWhitespace,
                  !line[..<colon].contains(where: { $0.isWhitespace }) else {
                return .failure(Refusal(status: 400, reason: "a header line that is not NAME: VALUE"))
            }
            let name = line[..<colon].lowercased(), value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            if let earlier = headers[name] {
                // Two lengths, or two hosts, could be read two ways: refused.
                if name == "content-length" || name == "host" { return .failure(Refusal(status: 400, reason: "the \(name) header given twice")) }
                headers[name] = earlier + ", " + value
            } else {
                headers[name] = value
            }
        }
        if headers["transfer-encoding"] != nil { return .failure(Refusal(status: 501, reason: "a body must say its Content-Length")) }
        var length = 0
        if let given = headers["content-length"] {
            guard !given.isEmpty, given.count <= 10, given.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(given) else {
                return .failure(Refusal(status: 400, reason: "Content-Length is not a number"))
            }
            length = value
        } else if parts[0] == "POST" {
            return .failure(Refusal(status: 411, reason: "a form must say its Content-Length"))
        }
        if length > limits.body { return .failure(Refusal(status: 413, reason: "a body over \(limits.body) bytes is not read")) }
        let target = parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let request = WebRequest(method: String(parts[0]), path: String(target[0]), query: target.count > 1 ? WebRequest.fields(String(target[1])) : [:],
                                 headers: headers, remote: address)
        return .success((request, length))
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        var i = start
        while i <= bytes.count - needle.count {
            if bytes[i] == needle[0] && bytes[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
