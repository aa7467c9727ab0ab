// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore
import RideGuardConfig
import HTTPRequests

/// The parsers that take outside input, each with the properties that must hold whatever the
/// bytes: it never traps, answers the same whichever way the bytes arrive in chunks, and either
/// gives a valid result or an error that says where. `check` returns the broken property, or nil.
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// What a modem says on its serial port: lines, the SMS prompt, results, answers.
    case atLines = "at"
    /// Trace CSV v1, as `replay`, `report` and the simulated IMU read it.
    case trace
    /// The YAML configuration file.
    case config
    /// An SMS PDU as the modem shows it (+CMGR, +CMT): what anyone with a phone can send us.
    case pdu
    /// A request to the page for the rider's phone, as anyone on the Pi's Wi-Fi can send it: the
    /// head, the fields, the cookies, a form, percent-decoding.
    case http

    package func check(_ input: [UInt8]) -> String? {
        switch self {
        case .atLines: Self.checkATLines(input)
        case .trace: Self.checkTrace(input)
        case .config: Self.checkConfiguration(input)
        case .pdu: Self.checkPDU(input)
        case .http: Self.checkHTTP(input)
        }
    }

    // MARK: - HTTP requests

    /// Small limits, so that mutations reach each of them.
    static let httpLimits: RequestLimits = {
        var limits = RequestLimits()
        limits.requestLine = 64
        limits.head = 256
        limits.headerLines = 8
        limits.body = 128
        return limits
    }()

    static func readRequest(_ input: [UInt8], chunk: Int) -> RequestReader.Progress {
        var reader = RequestReader(address: "192.0.2.1", limits: httpLimits)
        var offset = 0, progress = RequestReader.Progress.more
        while offset < input.count && progress == .more {
            let end = min(input.count, offset + chunk)
            progress = reader.feed(input[offset..<end])
            offset = end
        }
        return progress
    }

    static func checkHTTP(_ input: [UInt8]) -> String? {
        let whole = readRequest(input, chunk: max(1, input.count))
        // Chunk sizes from 1 to 7 bytes, chosen by the input itself: what a slow phone's reads give.
        let chunked = readRequest(input, chunk: Int(input.first ?? 0) % 7 + 1)
        guard whole == chunked else { return "the outcome depends on the chunks: \(whole) vs \(chunked)" }
        switch whole {
        case .more:
            break
        case .refused(let status, let reason):
            guard RequestReader.refusals.contains(status), !reason.isEmpty else { return "refused with \(status) '\(reason)'" }
            // A refusal is final: whatever follows (a body holding a request of its own) is never read.
            var reader = RequestReader(address: "192.0.2.1", limits: httpLimits)
            _ = reader.feed(input)
            if case .request = reader.feed(Array("GET / HTTP/1.1\r\nHost: pi\r\n\r\n".utf8)) { return "a request was read after a refusal" }
        case .request(let request):
            guard !request.method.isEmpty, request.method.allSatisfy({ $0.isASCII && $0.isUppercase }) else { return "the method \(request.method.debugDescription)" }
            guard request.path.hasPrefix("/"), !request.path.contains("?") else { return "the path \(request.path.debugDescription)" }
            guard request.headers.keys.allSatisfy({ $0 == $0.lowercased() }) else { return "a header's name not in lower case: \(request.headers.keys.sorted())" }
            let declared = request.headers["content-length"].flatMap { Int($0) } ?? 0
            guard request.body.count == declared, declared <= httpLimits.body else {
                return "a body of \(request.body.count) bytes for a Content-Length of \(declared)"
            }
            if request.method == "POST" && request.headers["content-length"] == nil { return "a POST without a Content-Length was read" }
            _ = request.form
            _ = request.cookies
        }
        // The fields of a form and percent-decoding take any text.
        _ = WebRequest.fields(String(decoding: input, as: UTF8.self))
        return nil
    }

    // MARK: - SMS PDUs

    static func checkPDU(_ input: [UInt8]) -> String? {
        let hex = String(decoding: input, as: UTF8.self)
        let decoded = SMSPDU.decode(hex)
        // Modems print hex in upper case; a lower-case one must read the same.
        guard SMSPDU.decode(hex.lowercased()) == decoded else { return "upper and lower case hex decode differently" }
        if let decoded, let c = decoded.concatenation, !(0...0xFFFF).contains(c.reference) {
            return "concatenation reference \(c.reference) out of range"
        }
        return nil
    }

    // MARK: - AT lines

    static func checkATLines(_ input: [UInt8]) -> String? {
        var whole = ATLineReader()
        let items = whole.feed(input)
        // Byte by byte, as a slow serial port delivers them: the same items.
        var slow = ATLineReader()
        var trickled: [ATLineReader.Item] = []
        for byte in input { trickled += slow.feed(CollectionOfOne(byte)) }
        guard items == trickled else { return "the line reader splits differently byte by byte: \(items) vs \(trickled)" }
        var exchanges = ["AT+CSQ", "AT+CPIN?", "AT+CMGS=23", "ATE0"].map(ATExchange.init(command:))
        for item in items {
            if case .line(let line) = item {
                if line.utf8.count > ATLineReader.maximumLine { return "a line of \(line.utf8.count) bytes passed the reader" }
                if line.contains(where: { $0 == "\r" || $0 == "\n" }) { return "a line holds a line break: \(line.debugDescription)" }
                if line.isEmpty || line.first == " " || line.last == " " { return "a line is not trimmed: \(line.debugDescription)" }
                if let dbm = ATParse.signal(line), !(-113 ... -51).contains(dbm) { return "signal \(dbm) dBm from \(line.debugDescription)" }
                _ = ATParse.registration(line)
                _ = ATParse.messageReference(line)
                _ = ATParse.simState(line)
                _ = ATParse.serviceCentre(line)
                if let final = ATFinal(line: line) { _ = SendFailure.classify(final) }
            }
            for index in exchanges.indices where exchanges[index].final == nil { _ = exchanges[index].consume(item) }
        }
        return nil
    }

    // MARK: - Trace CSV

    enum TraceOutcome: Equatable {
        case samples([IMUSample])
        case error(String)
    }

    static func parseTrace(_ input: [UInt8], chunk: Int) -> TraceOutcome {
        var parser = TraceParser(source: "fuzz.csv")
        var samples: [IMUSample] = []
        do {
            var offset = 0
            while offset < input.count {
                let end = min(input.count, offset + chunk)
                try input[offset..<end].withUnsafeBytes { try parser.feed($0) { samples.append($0) } }
                offset = end
            }
            try parser.finish { samples.append($0) }
            return .samples(samples)
        } catch {
            return .error("\(error)")
        }
    }

    static func checkTrace(_ input: [UInt8]) -> String? {
        let whole = parseTrace(input, chunk: max(1, input.count))
        // Chunk sizes from 1 to 7 bytes, chosen by the input itself.
        let chunked = parseTrace(input, chunk: Int(input.first ?? 0) % 7 + 1)
        guard whole == chunked else { return "the outcome depends on the chunks: \(whole) vs \(chunked)" }
        switch whole {
        case .samples(let samples):
            if samples.isEmpty { return "a trace without samples was accepted" }
            for s in samples {
                var values: [Double] = [s.t, s.accel.x, s.accel.y, s.accel.z]
                if let gyro = s.gyro { values += [gyro.x, gyro.y, gyro.z] }
                if let speed = s.speed { values.append(speed) }
                if !values.allSatisfy(\.isFinite) { return "a sample with a value that is not finite: \(s)" }
            }
        case .error(let text):
            let lines = 1 + input.lazy.filter { $0 == 0x0A }.count
            guard text.hasPrefix("fuzz.csv") else { return "an error that does not name its source: \(text)" }
            if let number = text.dropFirst("fuzz.csv:".count).prefix(while: \.isNumber).nonEmpty.flatMap({ Int($0) }),
               !(1...lines).contains(number) {
                return "an error names line \(number) of \(lines): \(text)"
            }
        }
        return nil
    }

    // MARK: - Configuration YAML

    static func checkConfiguration(_ input: [UInt8]) -> String? {
        let text = String(decoding: input, as: UTF8.self)
        do {
            let configuration = try ConfigurationFile.parse(text, source: "fuzz.yaml")
            let problems = configuration.validationErrors()
            if !problems.isEmpty { return "accepted a configuration with problems: \(problems)" }
        } catch {
            // Lines end at LF, CR LF or a lone CR (as YAML counts them).
            var breaks = 0
            var previous: UInt8 = 0
            for byte in input {
                if byte == 0x0D || (byte == 0x0A && previous != 0x0D) { breaks += 1 }
                previous = byte
            }
            let endsWithBreak = previous == 0x0A || previous == 0x0D
            let lines = max(1, endsWithBreak ? breaks : breaks + 1)
            if error.problems.isEmpty { return "an error without a problem" }
            for problem in error.problems {
                if problem.key.isEmpty || problem.reason.isEmpty { return "a problem without its key or reason: \(problem)" }
                if let line = problem.line, !(1...lines).contains(line) { return "a problem on line \(line) of \(lines): \(problem)" }
            }
        }
        return nil
    }
}

private extension Substring {
    var nonEmpty: Substring? { isEmpty ? nil : self }
}
