// SPDX-License-Identifier: Apache-2.0
/// A request as the pages see it, whatever server carried it.
package struct WebRequest: Sendable, Equatable {
    package var method: String
    /// The path without its query: "/contacts".
    package var path: String
    package var query: [String: String]
    /// Header names in lower case.
    package var headers: [String: String]
    package var body: [UInt8]
    /// The peer's address, for the pairing rate limit.
    package var remote: String

    package init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = [], remote: String) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
        self.remote = remote
    }

    /// The fields of a form (application/x-www-form-urlencoded).
    package var form: [String: String] { Self.fields(String(decoding: body, as: UTF8.self)) }

    package var cookies: [String: String] {
        var cookies: [String: String] = [:]
        for pair in (headers["cookie"] ?? "").split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].trimmingCharacters(in: " ")
            if cookies[name] == nil { cookies[name] = String(parts[1]) }
        }
        return cookies
    }

    /// `a=1&b=x+y%21` → ["a": "1", "b": "x y!"]; the first of a repeated name counts.
    package static func fields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = percentDecoded(parts[0]), value = parts.count == 2 ? percentDecoded(parts[1]) : ""
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }

    package static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), utf8.count >= 2,
                      let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension StringProtocol {
    /// Without the characters of `set` at either end.
    package func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
