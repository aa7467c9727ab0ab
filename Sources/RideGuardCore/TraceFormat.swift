// SPDX-License-Identifier: Apache-2.0
/// Trace CSV v1: the format of recorded and synthetic IMU traces (docs/field-testing.md, "Trace CSV v1").
///
/// ```
/// # rideguard-trace v1
/// # rate_hz: 400
/// time_s,ax,ay,az,gx,gy,gz,speed_mps
/// 0.000000,0.1200,-0.0300,9.7900,0.00100,-0.00200,0.00000,
/// ```
package enum TraceFormat {
    package static let magic = "rideguard-trace"
    package static let version = 1
    /// A line longer than this is not a trace row: the file is probably binary.
    package static let maximumLineLength = 4096
}

/// Why a trace could not be read: the file, the line and the reason.
package struct TraceError: Error, Equatable, CustomStringConvertible, Sendable {
    package var source: String
    package var line: Int?
    package var reason: String

    package init(source: String, line: Int?, reason: String) {
        self.source = source
        self.line = line
        self.reason = reason
    }

    package var description: String {
        if let line { return "\(source):\(line): \(reason)" }
        return "\(source): \(reason)"
    }
}

/// The header of a trace: its metadata lines and which columns it has.
package struct TraceHeader: Equatable, Sendable {
    /// `# key: value` lines, in order (the magic line excluded).
    package var metadata: [(key: String, value: String)]
    /// Column names as written in the header row.
    package var columns: [String]

    package var hasGyro: Bool { columns.contains("gx") }
    package var hasSpeed: Bool { columns.contains("speed_mps") }

    /// The nominal rate from `# rate_hz:`, when present and valid.
    package var rateHz: Double? {
        guard let raw = metadata.last(where: { $0.key == "rate_hz" })?.value,
              let rate = Double(raw), rate > 0, rate.isFinite else { return nil }
        return rate
    }

    package static func == (a: TraceHeader, b: TraceHeader) -> Bool {
        a.columns == b.columns && a.metadata.map { "\($0.key)=\($0.value)" } == b.metadata.map { "\($0.key)=\($0.value)" }
    }
}

/// A streaming parser for trace CSV v1. Feed it chunks of bytes as they are read; it calls back once
/// per sample and keeps only the current partial line, so memory does not grow with the trace.
package struct TraceParser {
    @usableFromInline enum Role: UInt8 { case time, ax, ay, az, gx, gy, gz, speed, ignored }

    /// The name errors use for the input: a file path or "stdin".
    package let source: String
    package private(set) var header: TraceHeader?
    package private(set) var sampleCount = 0
    @usableFromInline var roles: [Role] = []
    /// The header names the gyro's columns (read once, not per row).
    @usableFromInline var hasGyro = false
    /// The header is exactly time_s,ax,ay,az[,gx,gy,gz] (what RideGuard writes): rows are read
    /// without looking up each column's role.
    @usableFromInline var plainColumns = 0
    @usableFromInline var lineNumber = 0
    @usableFromInline var partialLine: [UInt8] = []
    @usableFromInline var sawAnyByte = false
    @usableFromInline var pendingMetadata: [(key: String, value: String)] = []

    package init(source: String) {
        self.source = source
    }

    /// Parses the complete lines in `chunk`; a trailing partial line is kept for the next call.
    /// `onHeader` is called once, when the header row has been read, before the first sample.
    package mutating func feed(_ chunk: UnsafeRawBufferPointer, onHeader: (TraceHeader) throws -> Void = { _ in },
                              onSample: (IMUSample) throws -> Void) throws {
        guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), chunk.count > 0 else { return }
        sawAnyByte = true
        let end = chunk.count
        var start = 0
        while let i = Self.newline(base, from: start, to: end) {
            if partialLine.isEmpty {
                try parseLine(UnsafeBufferPointer(start: base + start, count: i - start), onHeader: onHeader, onSample: onSample)
            } else {
                partialLine.append(contentsOf: UnsafeBufferPointer(start: base + start, count: i - start))
                let line = partialLine
                partialLine.removeAll(keepingCapacity: true)
                try line.withUnsafeBufferPointer { try parseLine($0, onHeader: onHeader, onSample: onSample) }
            }
            start = i + 1
        }
        if start < end {
            partialLine.append(contentsOf: UnsafeBufferPointer(start: base + start, count: end - start))
            if partialLine.count > TraceFormat.maximumLineLength {
                throw error(line: lineNumber + 1, "line is longer than \(TraceFormat.maximumLineLength) bytes: not a CSV trace (binary data?)")
            }
        }
    }

    /// The first newline in `base[from..<to]`, eight bytes at a time: xor with eight newlines
    /// turns each newline into a zero byte, which the classic has-zero-byte test finds (its lowest
    /// flag is always a true zero; the first in the text, bytes being little-endian).
    @usableFromInline static func newline(_ base: UnsafePointer<UInt8>, from: Int, to end: Int) -> Int? {
        var i = from
        while end - i >= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) ^ 0x0A0A_0A0A_0A0A_0A0A
            let zeros = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
            if zeros != 0 { return i + zeros.trailingZeroBitCount / 8 }
            i += 8
        }
        while i < end {
            if base[i] == UInt8(ascii: "\n") { return i }
            i += 1
        }
        return nil
    }

    /// Parses a last line without a newline and checks that the trace had a header and samples.
    package mutating func finish(onHeader: (TraceHeader) throws -> Void = { _ in },
                                onSample: (IMUSample) throws -> Void) throws {
        if !partialLine.isEmpty {
            let line = partialLine
            partialLine.removeAll()
            try line.withUnsafeBufferPointer { try parseLine($0, onHeader: onHeader, onSample: onSample) }
        }
        guard sawAnyByte else { throw error(line: nil, "empty file: no trace header") }
        guard header != nil else { throw error(line: nil, "no header row (expected a line naming the columns, e.g. time_s,ax,ay,az)") }
        guard sampleCount > 0 else { throw error(line: nil, "the trace has a header but no samples") }
    }

    @usableFromInline func error(line: Int?, _ reason: String) -> TraceError {
        TraceError(source: source, line: line, reason: reason)
    }

    @usableFromInline mutating func parseLine(_ raw: UnsafeBufferPointer<UInt8>, onHeader: (TraceHeader) throws -> Void,
                                              onSample: (IMUSample) throws -> Void) throws {
        lineNumber += 1
        var count = raw.count
        if count > TraceFormat.maximumLineLength {
            throw error(line: lineNumber, "line is longer than \(TraceFormat.maximumLineLength) bytes: not a CSV trace (binary data?)")
        }
        if count > 0 && raw[count - 1] == UInt8(ascii: "\r") { count -= 1 }
        var first = 0
        // A UTF-8 byte-order mark, as spreadsheets write at the start of a CSV export.
        if lineNumber == 1 && count >= 3 && raw[0] == 0xEF && raw[1] == 0xBB && raw[2] == 0xBF { first = 3 }
        while first < count && (raw[first] == UInt8(ascii: " ") || raw[first] == UInt8(ascii: "\t")) { first += 1 }
        if first == count { return }  // blank line
        let line = UnsafeBufferPointer(rebasing: raw[first..<count])
        if line[0] == UInt8(ascii: "#") {
            try parseComment(line)
        } else if roles.isEmpty {
            try parseHeader(line)
            if let header { try onHeader(header) }
        } else {
            try parseRow(line, onSample: onSample)
        }
    }

    mutating func parseComment(_ line: UnsafeBufferPointer<UInt8>) throws {
        guard let text = String(validatingUTF8Bytes: line) else {
            throw error(line: lineNumber, "comment line is not UTF-8 text (binary data?)")
        }
        let body = text.dropFirst().trimmingSpaces()
        if body.hasPrefix(TraceFormat.magic) {
            let version = body.dropFirst(TraceFormat.magic.count).trimmingSpaces()
            guard version == "v\(TraceFormat.version)" else {
                throw error(line: lineNumber, "unsupported trace version '\(version)' (this build reads v\(TraceFormat.version))")
            }
            return
        }
        guard let colon = body.firstIndex(of: ":") else { return }  // a free comment
        let key = body[..<colon].trimmingSpaces()
        let value = body[body.index(after: colon)...].trimmingSpaces()
        guard !key.isEmpty, !key.contains(" ") else { return }
        if header == nil {
            pendingMetadata.append((String(key), String(value)))
        } else {
            header?.metadata.append((String(key), String(value)))
        }
    }

    mutating func parseHeader(_ line: UnsafeBufferPointer<UInt8>) throws {
        guard let text = String(validatingUTF8Bytes: line), text.utf8.allSatisfy({ $0 >= 0x20 || $0 == 0x09 }) else {
            throw error(line: lineNumber, "expected the header row but found binary data: not a CSV trace")
        }
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingSpaces()) }
        var seen = Set<String>()
        var roles: [Role] = []
        for name in names {
            guard seen.insert(name).inserted else { throw error(line: lineNumber, "column '\(name)' appears twice in the header") }
            switch name {
            case "time_s": roles.append(.time)
            case "ax": roles.append(.ax)
            case "ay": roles.append(.ay)
            case "az": roles.append(.az)
            case "gx": roles.append(.gx)
            case "gy": roles.append(.gy)
            case "gz": roles.append(.gz)
            case "speed_mps": roles.append(.speed)
            default: roles.append(.ignored)
            }
        }
        let found = names.joined(separator: ",")
        for required in ["time_s", "ax", "ay", "az"] where !seen.contains(required) {
            throw error(line: lineNumber, "header has no '\(required)' column (found: \(found)); required: time_s,ax,ay,az")
        }
        let gyro = ["gx", "gy", "gz"].filter { seen.contains($0) }
        if !gyro.isEmpty && gyro.count != 3 {
            throw error(line: lineNumber, "gyro columns come as gx,gy,gz together (found only \(gyro.joined(separator: ",")))")
        }
        self.roles = roles
        hasGyro = gyro.count == 3
        plainColumns = roles == [.time, .ax, .ay, .az] ? 4 : roles == [.time, .ax, .ay, .az, .gx, .gy, .gz] ? 7 : 0
        header = TraceHeader(metadata: pendingMetadata, columns: names)
        pendingMetadata = []
    }

    /// One pass over the row: each field's number is read where it starts, and must end at a comma
    /// (spaces around it allowed). A column no role reads is skipped unread.
    @usableFromInline mutating func parseRow(_ line: UnsafeBufferPointer<UInt8>, onSample: (IMUSample) throws -> Void) throws {
        if plainColumns > 0, let sample = plainRow(line) {
            sampleCount += 1
            try onSample(sample)
            return
        }
        var t = 0.0, ax = 0.0, ay = 0.0, az = 0.0, gx = 0.0, gy = 0.0, gz = 0.0
        var speed: Double? = nil
        let count = line.count
        var i = 0
        var field = 0
        while true {
            guard field < roles.count else {
                throw error(line: lineNumber, "expected \(roles.count) fields as in the header, found more")
            }
            let role = roles[field]
            let start = i
            if role == .ignored {
                while i < count && line[i] != UInt8(ascii: ",") { i += 1 }
            } else {
                while i < count && (line[i] == UInt8(ascii: " ") || line[i] == UInt8(ascii: "\t")) { i += 1 }
                var value = NumberParser.scan(line, &i, count)
                while i < count && (line[i] == UInt8(ascii: " ") || line[i] == UInt8(ascii: "\t")) { i += 1 }
                if i < count && line[i] != UInt8(ascii: ",") {
                    value = nil
                    while i < count && line[i] != UInt8(ascii: ",") { i += 1 }
                }
                switch role {
                case .speed:
                    if let value {
                        speed = value
                    } else if !NumberParser.isBlank(line, from: start, to: i) {
                        throw fieldError(line, from: start, to: i, field: field)
                    }
                default:
                    guard let value else { throw fieldError(line, from: start, to: i, field: field) }
                    switch role {
                    case .time: t = value
                    case .ax: ax = value
                    case .ay: ay = value
                    case .az: az = value
                    case .gx: gx = value
                    case .gy: gy = value
                    case .gz: gz = value
                    case .speed, .ignored: break
                    }
                }
            }
            field += 1
            if i == count { break }
            i += 1  // the comma
        }
        guard field == roles.count else {
            throw error(line: lineNumber, "expected \(roles.count) fields as in the header, found \(field)")
        }
        sampleCount += 1
        try onSample(IMUSample(t: t, accel: Vector3(ax, ay, az), gyro: hasGyro ? Vector3(gx, gy, gz) : nil, speed: speed))
    }

    /// A row of plain columns, each a number followed by a comma (the last by the end), without
    /// spaces; nil for anything else, which the general path then reads (and reports).
    @inline(__always) func plainRow(_ line: UnsafeBufferPointer<UInt8>) -> IMUSample? {
        let count = line.count
        var i = 0
        func next(last: Bool) -> Double? {
            guard let value = NumberParser.scan(line, &i, count) else { return nil }
            if last { return i == count ? value : nil }
            guard i < count && line[i] == UInt8(ascii: ",") else { return nil }
            i += 1
            return value
        }
        let gyro = plainColumns == 7
        guard let t = next(last: false), let ax = next(last: false), let ay = next(last: false),
              let az = next(last: !gyro) else { return nil }
        guard gyro else { return IMUSample(t: t, accel: Vector3(ax, ay, az)) }
        guard let gx = next(last: false), let gy = next(last: false), let gz = next(last: true) else { return nil }
        return IMUSample(t: t, accel: Vector3(ax, ay, az), gyro: Vector3(gx, gy, gz))
    }

    func fieldError(_ line: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, field: Int) -> TraceError {
        let name = header?.columns[field] ?? "field \(field + 1)"
        if line.contains(where: { $0 < 0x09 || ($0 > 0x0d && $0 < 0x20) }) {
            return error(line: lineNumber, "binary data in a row: not a CSV trace")
        }
        if NumberParser.isBlank(line, from: start, to: end) {
            return error(line: lineNumber, "column '\(name)' is empty")
        }
        var shown = ""
        for byte in line[start..<min(end, start + 24)] {
            if byte >= 0x20 && byte < 0x7f { shown.append(Character(Unicode.Scalar(byte))) } else { shown += "\\x" + String(byte, radix: 16) }
        }
        if end - start > 24 { shown += "…" }
        return error(line: lineNumber, "bad number '\(shown)' in column '\(name)'")
    }
}

/// Decimal numbers as written in traces: `-12.5`, `0.001`, `3e-4`. No `nan`, `inf` or hex.
@usableFromInline enum NumberParser {
    /// 10^0 … 10^22, each exact in a Double (a literal: initialised at load, no lazy global).
    /// 10^0 … 10^22, each exact in a Double (a literal: no lazy initialisation on each access).
    @usableFromInline static let exactPowers: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    @usableFromInline static func isBlank(_ s: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Bool {
        var i = from
        while i < to {
            if s[i] != UInt8(ascii: " ") && s[i] != UInt8(ascii: "\t") { return false }
            i += 1
        }
        return true
    }

    /// The finite number in `s[from..<to]` (spaces around it allowed), or nil.
    @inlinable static func parse(_ s: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Double? {
        var i = from
        while i < to && (s[i] == UInt8(ascii: " ") || s[i] == UInt8(ascii: "\t")) { i += 1 }
        guard let value = scan(s, &i, to) else { return nil }
        return isBlank(s, from: i, to: to) ? value : nil
    }

    /// Reads the number starting at `s[i]`, leaving `i` on the first byte after it; nil when no
    /// number starts there or it is not finite.
    @inlinable static func scan(_ s: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ end: Int) -> Double? {
        var negative = false
        if i < end && (s[i] == UInt8(ascii: "-") || s[i] == UInt8(ascii: "+")) {
            negative = s[i] == UInt8(ascii: "-")
            i += 1
        }
        // Digits go onto the mantissa as they come; more than 19 in all (no trace writes that many)
        // overflow it, and are read again keeping the first 19 significant ones.
        let digitsStart = i
        var mantissa: UInt64 = 0
        while i < end, s[i] &- UInt8(ascii: "0") < 10 {
            mantissa = mantissa &* 10 &+ UInt64(s[i] &- UInt8(ascii: "0"))
            i += 1
        }
        var digits = i - digitsStart
        var exponent = 0
        if i < end && s[i] == UInt8(ascii: ".") {
            i += 1
            let fractionStart = i
            while i < end, s[i] &- UInt8(ascii: "0") < 10 {
                mantissa = mantissa &* 10 &+ UInt64(s[i] &- UInt8(ascii: "0"))
                i += 1
            }
            exponent = fractionStart - i
            digits -= exponent
        }
        let sawDigit = digits > 0
        if digits > 19 { (mantissa, exponent) = significand(s, from: digitsStart, to: i) }
        guard sawDigit else { return nil }
        if i < end && (s[i] == UInt8(ascii: "e") || s[i] == UInt8(ascii: "E")) {
            i += 1
            var expNegative = false
            if i < end && (s[i] == UInt8(ascii: "-") || s[i] == UInt8(ascii: "+")) {
                expNegative = s[i] == UInt8(ascii: "-")
                i += 1
            }
            var e = 0
            var sawExpDigit = false
            while i < end, s[i] &- UInt8(ascii: "0") < 10 {
                sawExpDigit = true
                if e < 10_000 { e = e * 10 + Int(s[i] &- UInt8(ascii: "0")) }
                i += 1
            }
            guard sawExpDigit else { return nil }
            exponent += expNegative ? -e : e
        }
        var value = Double(mantissa)
        if exponent < 0 {
            var e = -exponent
            while e > 22 { value /= 1e22; e -= 22 }
            value /= exactPowers[e]
        } else if exponent > 0 {
            var e = exponent
            while e > 22 { value *= 1e22; e -= 22 }
            value *= exactPowers[e]
        }
        guard value.isFinite else { return nil }
        return negative ? -value : value
    }

    /// The first 19 significant digits of `s[from..<to]` (digits and at most one point) and the
    /// power of ten that scales them.
    @usableFromInline static func significand(_ s: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> (UInt64, Int) {
        var mantissa: UInt64 = 0, digits = 0, exponent = 0, afterPoint = false
        for i in from..<to {
            guard s[i] != UInt8(ascii: ".") else {
                afterPoint = true
                continue
            }
            if digits < 19 {
                mantissa = mantissa * 10 + UInt64(s[i] &- UInt8(ascii: "0"))
                if mantissa != 0 { digits += 1 }
                if afterPoint { exponent -= 1 }
            } else if !afterPoint {
                exponent += 1
            }
        }
        return (mantissa, exponent)
    }
}

/// Writes trace CSV v1 rows into a byte buffer; the caller decides when to flush it.
package struct TraceWriter: Sendable {
    package let hasGyro: Bool
    package let hasSpeed: Bool

    package init(hasGyro: Bool, hasSpeed: Bool) {
        self.hasGyro = hasGyro
        self.hasSpeed = hasSpeed
    }

    /// The magic line, `# key: value` metadata lines and the header row.
    package func header(metadata: [(key: String, value: String)]) -> String {
        var text = "# \(TraceFormat.magic) v\(TraceFormat.version)\n"
        for (key, value) in metadata {
            text += "# \(key): \(value.replacingNewlines())\n"
        }
        text += "time_s,ax,ay,az"
        if hasGyro { text += ",gx,gy,gz" }
        if hasSpeed { text += ",speed_mps" }
        return text + "\n"
    }

    /// Appends one row: time to the microsecond, acceleration to 0.1 mm/s², rotation to 10 µrad/s.
    @inlinable package func appendRow(_ sample: IMUSample, to out: inout [UInt8]) {
        DecimalFormat.append(sample.t, decimals: 6, to: &out)
        appendField(sample.accel.x, decimals: 4, to: &out)
        appendField(sample.accel.y, decimals: 4, to: &out)
        appendField(sample.accel.z, decimals: 4, to: &out)
        if hasGyro {
            let gyro = sample.gyro ?? .zero
            appendField(gyro.x, decimals: 5, to: &out)
            appendField(gyro.y, decimals: 5, to: &out)
            appendField(gyro.z, decimals: 5, to: &out)
        }
        if hasSpeed {
            out.append(UInt8(ascii: ","))
            if let speed = sample.speed { DecimalFormat.append(speed, decimals: 2, to: &out) }
        }
        out.append(UInt8(ascii: "\n"))
    }

    @inlinable func appendField(_ value: Double, decimals: Int, to out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        DecimalFormat.append(value, decimals: decimals, to: &out)
    }
}

extension String {
    init?(validatingUTF8Bytes bytes: UnsafeBufferPointer<UInt8>) {
        guard let s = String(validating: bytes, as: UTF8.self) else { return nil }
        self = s
    }

    func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}

extension StringProtocol {
    /// Without the whitespace (spaces, tabs, line ends, any Unicode space) at either end.
    /// What a peer sent, fit for a journal line, `status` or a terminal: control characters (an
    /// escape sequence, a newline) dropped, trimmed, at most `limit` characters.
    package func printable(limit: Int) -> String {
        String(String(String.UnicodeScalarView(unicodeScalars.filter { $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) })).prefix(limit)).trimmed()
    }

    package func trimmed() -> String {
        let s = Substring(self)
        guard let first = s.firstIndex(where: { !$0.isWhitespace }), let last = s.lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(s[first...last])
    }

    package func trimmingSpaces() -> Substring {
        let s = Substring(self)
        guard let first = s.firstIndex(where: { $0 != " " && $0 != "\t" }),
              let last = s.lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        return s[first...last]
    }
}
