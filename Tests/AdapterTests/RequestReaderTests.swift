// SPDX-License-Identifier: Apache-2.0
import HTTPRequests
import RideGuardTestSupport
import Testing

/// The page's request reader on its own: what a phone (or anyone on the Wi-Fi) sends, however the
/// network splits it.
@Suite struct RequestReaderTests {
    func read(_ text: String, chunk: Int? = nil, limits: RequestLimits = RequestLimits()) -> RequestReader.Progress {
        var reader = RequestReader(address: "192.0.2.7", limits: limits)
        let bytes = Array(text.utf8)
        var progress = RequestReader.Progress.more, offset = 0
        while offset < bytes.count && progress == .more {
            let end = min(bytes.count, offset + (chunk ?? bytes.count))
            progress = reader.feed(bytes[offset..<end])
            offset = end
        }
        return progress
    }

    @Test func aFormArrivesWholeWhateverTheSplit() throws {
        let body = "name=S%C3%A9b+M&number=%2B3"
        let text = "POST /contacts?x=1 HTTP/1.1\r\nHost: pi\r\nCookie: a=1; rideguard_session=s%20t\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        guard case .request(let request) = read(text) else { Issue.record("\(read(text))"); return }
        #expect(request.method == "POST" && request.path == "/contacts" && request.query == ["x": "1"] && request.remote == "192.0.2.7")
        #expect(request.form == ["name": "Séb M", "number": "+3"])
        #expect(request.cookies == ["a": "1", "rideguard_session": "s%20t"])
        for chunk in 1...9 { #expect(read(text, chunk: chunk) == .request(request), "chunks of \(chunk)") }
        // Bytes after the body are not the body.
        #expect(read(text + "GET / HTTP/1.1\r\n\r\n") == .request(request))
    }

    @Test func aRefusalIsFinal() {
        var reader = RequestReader(address: "192.0.2.7", limits: RequestLimits())
        #expect(reader.feed(Array("POST /x HTTP/1.1\r\nHost: pi\r\n\r\n".utf8)) == .refused(411, "a form must say its Content-Length"))
        #expect(reader.feed(Array("GET / HTTP/1.1\r\nHost: pi\r\n\r\n".utf8)) == .refused(411, "a form must say its Content-Length"))
    }

    /// The limits hold at their edge, however the bytes come: a request line of exactly the limit
    /// is read, one byte more is refused (414); the same for the head (431) and the body (413).
    @Test func theLimitsHoldAtTheirEdge() {
        var limits = RequestLimits()
        limits.requestLine = 32
        limits.head = 64
        limits.body = 10
        let line = "GET /" + String(repeating: "a", count: 32 - "GET / HTTP/1.1".utf8.count) + " HTTP/1.1"
        #expect(line.utf8.count == 32)
        for chunk in [1, 2, 3, 100] {
            guard case .request = read(line + "\r\n\r\n", chunk: chunk, limits: limits) else { Issue.record("a line of 32 bytes, chunks of \(chunk)"); continue }
            #expect(read("GET /a" + line.dropFirst(5) + "\r\n\r\n", chunk: chunk, limits: limits) == .refused(414, "the request line is longer than 32 bytes"))
            let head = "GET / HTTP/1.1\r\nX: " + String(repeating: "b", count: 64 - "GET / HTTP/1.1\r\nX: ".utf8.count)
            #expect(head.utf8.count == 64)
            guard case .request = read(head + "\r\n\r\n", chunk: chunk, limits: limits) else { Issue.record("a head of 64 bytes, chunks of \(chunk)"); continue }
            #expect(read(head + "b\r\n\r\n", chunk: chunk, limits: limits) == .refused(431, "the request's headers are longer than 64 bytes"))
            #expect(read("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n", chunk: chunk, limits: limits) == .refused(413, "a body over 10 bytes is not read"))
        }
    }
}
