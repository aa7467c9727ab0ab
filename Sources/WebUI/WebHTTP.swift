// SPDX-License-Identifier: Apache-2.0
import HTTPRequests
import RideGuardCore

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
