// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

/// Parses `text` fed in chunks of `chunk` bytes (to cross every line boundary).
func parse(_ text: String, chunk: Int = 1 << 20, source: String = "test.csv") throws -> (TraceParser, [IMUSample]) {
    var parser = TraceParser(source: source)
    var samples: [IMUSample] = []
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + chunk)
        try bytes[offset..<end].withUnsafeBytes { try parser.feed($0) { samples.append($0) } }
        offset = end
    }
    try parser.finish { samples.append($0) }
    return (parser, samples)
}

func parseError(_ text: String) -> TraceError? {
    do {
        _ = try parse(text)
        return nil
    } catch let error as TraceError {
        return error
    } catch {
        return nil
    }
}

@Suite struct TraceParserTests {
    let full = """
        # rideguard-trace v1
        # rate_hz: 400
        # source: hand-written test
        time_s,ax,ay,az,gx,gy,gz,speed_mps
        0.000000,0.1200,-0.0300,9.7900,0.00100,-0.00200,0.00000,
        0.002500,0.1300,-0.0400,9.8000,0.00200,-0.00100,0.00000,12.5

        """

    @Test func readsEveryColumnAndMetadata() throws {
        let (parser, samples) = try parse(full)
        #expect(samples.count == 2)
        #expect(parser.header?.rateHz == 400)
        #expect(parser.header?.hasGyro == true)
        #expect(parser.header?.hasSpeed == true)
        #expect(parser.header?.metadata.last?.value == "hand-written test")
        #expect(samples[0] == IMUSample(t: 0, accel: Vector3(0.12, -0.03, 9.79), gyro: Vector3(0.001, -0.002, 0), speed: nil))
        #expect(samples[1].speed == 12.5)
        #expect(samples[1].t == 0.0025)
    }

    @Test(arguments: [1, 2, 3, 7, 64])
    func chunkBoundariesDoNotMatter(chunk: Int) throws {
        let (_, whole) = try parse(full)
        let (_, pieces) = try parse(full, chunk: chunk)
        #expect(whole == pieces)
    }

    @Test func acceptsCRLFBlankLinesAndNoFinalNewline() throws {
        let text = "# rideguard-trace v1\r\n\r\ntime_s,ax,ay,az\r\n  \r\n1.0,0,0,9.81\r\n\r\n2.0,0,0,9.81"
        let (parser, samples) = try parse(text)
        #expect(samples.map(\.t) == [1.0, 2.0])
        #expect(samples[0].gyro == nil)
        #expect(parser.header?.hasGyro == false)
    }

    /// Spreadsheets start a CSV export with a UTF-8 byte-order mark: it is skipped, whatever the
    /// chunks; elsewhere it is not a mark but bad data.
    @Test(arguments: [1, 2, 64])
    func skipsAByteOrderMark(chunk: Int) throws {
        let (_, samples) = try parse("\u{FEFF}time_s,ax,ay,az\n0,0,0,1\n", chunk: chunk)
        #expect(samples.count == 1)
        let (_, commented) = try parse("\u{FEFF}# rideguard-trace v1\ntime_s,ax,ay,az\n0,0,0,1\n", chunk: chunk)
        #expect(commented.count == 1)
        #expect(parseError("time_s,ax,ay,az\n\u{FEFF}0,0,0,1\n")?.description.contains("test.csv:2: bad number") == true)
    }

    @Test func columnsAreFoundByNameAndUnknownOnesIgnored() throws {
        let (_, samples) = try parse("az,temp_c,ay,time_s,ax\n9.8,21.5,0.5,3.25,-1\n")
        #expect(samples == [IMUSample(t: 3.25, accel: Vector3(-1, 0.5, 9.8))])
    }

    @Test func readsExponentsAndSigns() throws {
        let (_, samples) = try parse("time_s,ax,ay,az\n1e-3,+2.5E1,-0.0,  7 \n")
        #expect(samples[0].t == 0.001)
        #expect(samples[0].accel == Vector3(25, 0, 7))
    }

    @Test func badNumberNamesFileLineAndColumn() {
        let error = parseError("# rideguard-trace v1\ntime_s,ax,ay,az\n0.0,1,2,3\n0.1,1,x2,3\n")
        #expect(error == TraceError(source: "test.csv", line: 4, reason: "bad number 'x2' in column 'ay'"))
    }

    @Test func missingColumnIsNamed() {
        let error = parseError("time_s,ax,az\n0,1,2\n")
        #expect(error?.line == 1)
        #expect(error?.reason.contains("no 'ay' column") == true)
    }

    @Test func partialGyroIsRejected() {
        #expect(parseError("time_s,ax,ay,az,gx,gy\n")?.reason.contains("gx,gy,gz together") == true)
    }

    @Test func wrongFieldCountIsReported() {
        #expect(parseError("time_s,ax,ay,az\n0,1,2\n") == TraceError(source: "test.csv", line: 2, reason: "expected 4 fields as in the header, found 3"))
        #expect(parseError("time_s,ax,ay,az\n0,1,2,3,4\n")?.reason.contains("found more") == true)
    }

    @Test func emptyRequiredFieldIsReported() {
        #expect(parseError("time_s,ax,ay,az\n0,,2,3\n")?.reason == "column 'ax' is empty")
    }

    @Test func nanAndInfinityAreNotNumbers() {
        #expect(parseError("time_s,ax,ay,az\n0,nan,2,3\n")?.reason == "bad number 'nan' in column 'ax'")
        #expect(parseError("time_s,ax,ay,az\n0,1,inf,3\n") != nil)
        #expect(parseError("time_s,ax,ay,az\n0,1,1e999,3\n") != nil)
    }

    @Test func emptyFileAndHeaderOnlyAreErrors() {
        #expect(parseError("")?.reason == "empty file: no trace header")
        #expect(parseError("# rideguard-trace v1\n# rate_hz: 100\n")?.reason.contains("no header row") == true)
        #expect(parseError("time_s,ax,ay,az\n")?.reason == "the trace has a header but no samples")
    }

    @Test func binaryGarbageIsRecognised() {
        var garbage = "time_s,ax,ay,az\n0,1,2,3\n"
        garbage += String(decoding: [0x00, 0x01, 0xff, 0x2c, 0x10, 0x2c, 0x2c, 0x0a], as: UTF8.self)
        #expect(parseError(garbage)?.reason.contains("binary data") == true)
        let noNewlines = String(repeating: "\u{01}", count: 5000)
        #expect(parseError(noNewlines)?.reason.contains("longer than 4096 bytes") == true)
        #expect(parseError("\u{00}\u{01}\u{02}\n")?.reason.contains("binary data") == true)
    }

    @Test func otherVersionsAreRefused() {
        #expect(parseError("# rideguard-trace v2\ntime_s,ax,ay,az\n0,1,2,3\n")?.reason.contains("unsupported trace version 'v2'") == true)
    }

    @Test func duplicateColumnsAreRefused() {
        #expect(parseError("time_s,ax,ay,az,ax\n")?.reason == "column 'ax' appears twice in the header")
    }

    /// Each field is read in one pass, the number where it starts: what follows it before the
    /// comma must be spaces, and a column no role reads may hold anything.
    @Test func aNumberEndsAtItsComma() throws {
        let (_, samples) = try parse("time_s,note,ax,ay,az\n 1.5 ,any text: 1e,\t-2 ,+3e1,  4\t\n")
        #expect(samples == [IMUSample(t: 1.5, accel: Vector3(-2, 30, 4))])
        for field in ["1.5x", "1.5 2", "--1", "1e", "1e+", ".", "-", "1.2.3", "0x10"] {
            #expect(parseError("time_s,ax,ay,az\n0,\(field),0,1\n")?.reason == "bad number '\(field)' in column 'ax'", "\(field)")
        }
        #expect(parseError("time_s,ax,ay,az\n0,1,0,1x\n")?.reason == "bad number '1x' in column 'az'")
    }

    /// Lines of every length from 0 to 40 bytes, fed in chunks that split them anywhere: the
    /// newline search, eight bytes at a time, finds each one.
    @Test(arguments: [1, 5, 8, 13, 4096])
    func everyLineLengthIsSplitRight(chunk: Int) throws {
        var text = "time_s,ax,ay,az,pad\n"
        for n in 0...40 { text += "\(n),0,0,1,\(String(repeating: "x", count: n))\n" + String(repeating: " ", count: n % 3) + "\n" }
        let (_, samples) = try parse(text, chunk: chunk)
        #expect(samples.map(\.t) == (0...40).map(Double.init))
    }

    /// More than 19 digits (no trace writes them, a spreadsheet may): the first 19 significant
    /// ones count, leading zeros do not.
    @Test func longNumbersKeepTheirFirstNineteenDigits() throws {
        for text in ["0.000000000000000000001234567890123456789012", "1234567890123456789012345.5", "-00000000000000000000012.25",
                     "3.14159265358979323846264338327950288", "98765432109876543210e-5", "0.1000000000000000000000000001"] {
            let parsed = try #require(Array(text.utf8).withUnsafeBufferPointer { NumberParser.parse($0, from: 0, to: $0.count) }, "\(text)")
            let expected = try #require(Double(text))
            #expect(abs(parsed - expected) <= abs(expected) * 1e-15, "\(text): \(parsed) vs \(expected)")
        }
    }

    /// The plain columns RideGuard writes are read by a faster path; the same rows with spaces, a
    /// '+' or an exponent take the general one: both give the same samples.
    @Test func plainAndGeneralRowsAgree() throws {
        let (_, plain) = try parse("time_s,ax,ay,az,gx,gy,gz\n0.001,-9.8123,0.5,1e1,0.01234,-0.5,3\n")
        let (_, spaced) = try parse("time_s,ax,ay,az,gx,gy,gz\n 0.001 , -9.8123,+0.5,10.0,0.01234 ,-5e-1,3\n")
        #expect(plain == spaced && plain.count == 1)
        #expect(plain[0] == IMUSample(t: 0.001, accel: Vector3(-9.8123, 0.5, 10), gyro: Vector3(0.01234, -0.5, 3)))
        #expect(parseError("time_s,ax,ay,az\n0,1,2,3,4\n")?.reason == "expected 4 fields as in the header, found more")
        #expect(parseError("time_s,ax,ay,az\n0,1,2\n")?.reason == "expected 4 fields as in the header, found 3")
    }

    @Test func numberParserAgreesWithTheStandardLibrary() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            let exponent = Int(rng.next() % 12) - 6
            var value = Double(Int64(bitPattern: rng.next()) % 100_000_000) / 1000
            for _ in 0..<abs(exponent) { value = exponent < 0 ? value / 10 : value * 10 }
            let text = rng.next() % 2 == 0 ? "\(value)" : DecimalFormat.string(value, decimals: Int(rng.next() % 8))
            let expected = try #require(Double(text))
            let parsed = Array(text.utf8).withUnsafeBufferPointer { NumberParser.parse($0, from: 0, to: $0.count) }
            let got = try #require(parsed, "failed on \(text)")
            #expect(abs(got - expected) <= abs(expected) * 4e-16, "\(text): \(got) vs \(expected)")
        }
    }
}

@Suite struct TraceWriterTests {
    @Test func roundTripsThroughTheParser() throws {
        let writer = TraceWriter(hasGyro: true, hasSpeed: true)
        var bytes = Array(writer.header(metadata: [("rate_hz", "200"), ("scenario", "round trip")]).utf8)
        var samples: [IMUSample] = []
        for i in 0..<500 {
            let x = Double(i)
            let accel = Vector3(x * 0.01 - 2, -9.8 + Double(i % 7), 0.25)
            let gyro = Vector3(0.1, -x / 1000, 3)
            let speed: Double? = i % 3 == 0 ? nil : x / 10
            samples.append(IMUSample(t: x * 0.005, accel: accel, gyro: gyro, speed: speed))
        }
        for sample in samples { writer.appendRow(sample, to: &bytes) }
        let (parser, read) = try parse(String(decoding: bytes, as: UTF8.self))
        #expect(parser.header?.rateHz == 200)
        #expect(read.count == samples.count)
        for (a, b) in zip(read, samples) {
            #expect(abs(a.t - b.t) < 1e-6)
            #expect((a.accel - b.accel).magnitude < 1e-4)
            #expect((a.gyro! - b.gyro!).magnitude < 1e-5)
            #expect(a.speed.map { ($0 * 100).rounded() } == b.speed.map { ($0 * 100).rounded() })
        }
    }

    @Test func accelerometerOnlyHeader() {
        let header = TraceWriter(hasGyro: false, hasSpeed: false).header(metadata: [])
        #expect(header == "# rideguard-trace v1\ntime_s,ax,ay,az\n")
    }

    @Test(arguments: [
        (0.0, 3, "0.000"), (-0.0004, 3, "0.000"), (-1.5, 1, "-1.5"), (2.05, 1, "2.1"), (123456.789, 2, "123456.79"),
        (9.99996, 4, "10.0000"), (-0.25, 0, "0"), (7, 0, "7"),
    ])
    func decimalFormatting(value: Double, decimals: Int, expected: String) {
        #expect(DecimalFormat.string(value, decimals: decimals) == expected)
    }
}

@Suite struct JSONLineTests {
    @Test func escapesAndOrdersKeys() {
        var line = JSONLine(event: "x", t: 1.5)
        line.add("s", "a\"b\\c\nd\u{01}")
        line.add("n", 2)
        line.add("f", Double.nan, decimals: 2)
        #expect(line.text == #"{"event":"x","t":1.500,"s":"a\"b\\c\nd\u0001","n":2,"f":null}"#)
    }
}

/// A small deterministic generator for tests and synthesis.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
