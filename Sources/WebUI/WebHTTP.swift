// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// A request as the pages see it, whatever server carried it.
package struct WebRequest: Sendable {
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

    static func percentDecoded(_ text: Substring) -> String {
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

package struct WebResponse: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]
    /// A file sent as the body instead, read as it goes out (a recording can be hundreds of MB).
    package var file: String?

    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = [], file: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.file = file
    }

    /// What every page says to the browser: no caching, no framing, nothing from elsewhere.
    static let pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    static func html(_ text: String, status: Int = 200, policy: String = pagePolicy, extra: [(String, String)] = []) -> WebResponse {
        WebResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", policy)] + common + extra,
                    body: Array(text.utf8))
    }

    static func file(_ bytes: [UInt8], type: String, name: String? = nil, path: String? = nil) -> WebResponse {
        WebResponse(status: 200, headers: [("Content-Type", type), ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")] + common
                        + (name.map { [("Content-Disposition", contentDisposition($0))] } ?? []),
                    body: bytes, file: path)
    }

    /// `attachment` with the file's name as RFC 6266 gives it: `filename` in plain ASCII (anything
    /// else, a quote or a line break above all, becomes `_`), `filename*` the name itself, UTF-8
    /// percent-encoded. A name can never end the header or start another.
    static func contentDisposition(_ name: String) -> String {
        let plain = String(name.unicodeScalars.map { scalar -> Character in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "-", "_": Character(scalar)
            default: "_"
            }
        })
        return "attachment; filename=\"\(plain)\"; filename*=UTF-8''\(urlEncoded(name))"
    }

    static func redirect(_ location: String, extra: [(String, String)] = []) -> WebResponse {
        WebResponse(status: 303, headers: [("Location", location)] + common + extra)
    }

    static let common = [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin"),
                         ("X-Frame-Options", "DENY")]
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

/// Text made safe to stand in HTML (the pages quote every attribute with ").
func esc(_ text: some StringProtocol) -> String { Markup.escaped(String(text)) }

/// Text for a URL's query.
func urlEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
            out.append(Character(UnicodeScalar(byte)))
        default:
            out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
    }
    return out
}
