// SPDX-License-Identifier: Apache-2.0
import Foundation
import AgentTestSupport
import RideGuardTestSupport
import Testing

/// Parses JSON Lines output and checks the contract: an object with a string "event" and a number "t".
func events(_ result: Rideguard.Result) throws -> [[String: Any]] {
    try result.lines.map { line in
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
        #expect(object["event"] is String, "no event in \(line)")
        #expect(object["t"] is NSNumber, "no t in \(line)")
        return object
    }
}

@Suite struct ReplayCommandTests {
    /// The two real falls (IFSTTAR, first release: the lateral channel lost in the publishers' conversion,
    /// so a dead-axis case): detected after the bike came to rest and before it was lifted.
    @Test(.enabled(if: Rideguard.hasPTWFalls, Rideguard.ptwFallsMissing), arguments: [
        ("fall_in_a_curve.csv", 43.0, 61.5),                           // falls ~43 s, rests ~56 s, lifted ~62 s
        ("fall_on_a_slippery_straight_road_section.csv", 39.0, 53.5),  // falls ~39 s, rests ~45.5 s
    ])
    func realFallsAreDetectedBeforeTheBikeIsLifted(file: String, earliest: Double, latest: Double) throws {
        let trace = Rideguard.ptwFalls.appendingPathComponent(file)
        let result = Rideguard.inProcess(["replay", trace.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try events(result)
        let crashes = lines.filter { $0["event"] as? String == "crash_detected" }
        #expect(crashes.count == 1)
        let t = try #require(crashes.first?["t"] as? Double)
        #expect(t > earliest && t < latest, "detected at \(t)")
        #expect((crashes.first?["posture_deg"] as? Double ?? 0) > 62)
        #expect(lines.last?["event"] as? String == "trace_end")
        #expect(lines.first?["event"] as? String == "trace_start")
    }

    /// A spreadsheet's export (a UTF-8 byte-order mark first) replays; time that runs backwards or
    /// repeats is named for what it is, and the duration is never negative.
    @Test func spreadsheetExportsAndTimeThatRunsBackwards() throws {
        let text = "\u{FEFF}time_s,ax,ay,az\n10,0,0,1\n10,0,0,1\n9.5,0,0,1\n4,0,0,1\n"
        let trace = try Rideguard.temporaryFile("backwards-\(UUID().uuidString).csv", contents: Data(text.utf8))
        let result = Rideguard.inProcess(["replay", trace.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try events(result)
        let faults = lines.filter { $0["event"] as? String == "sensor_fault" }
        #expect(faults.map { $0["fault"] as? String } == ["duplicate_time", "time_went_backwards", "time_went_backwards"], "\(faults)")
        #expect((faults.first?["summary"] as? String)?.hasPrefix("duplicate time") == true)
        #expect(!result.stdout.contains("went back by 0.000000"))
        let end = try #require(lines.last)
        #expect(end["event"] as? String == "trace_end" && end["samples"] as? Int == 4)
        #expect(end["duration_s"] as? Double == 6, "earliest 4 s, latest 10 s: \(end)")
        let human = Rideguard.inProcess(["replay", trace.path])
        #expect(human.stdout.contains("end of trace after 6.0 s and 4 samples"), "\(human.stdout)")
    }

    @Test func humanOutputOfTheExampleTrace() throws {
        let result = Rideguard.inProcess(["replay", Rideguard.fixtures.appendingPathComponent("example-lowside.csv").path])
        #expect(result.status == 0)
        #expect(result.stdout.contains("CRASH DETECTED: bike down"))
        #expect(result.stdout.contains("1 crash detected"))
    }

    @Test func readsStandardInput() throws {
        let data = try Data(contentsOf: Rideguard.fixtures.appendingPathComponent("example-lowside.csv"))
        let result = try Rideguard.run(["replay", "-", "--json"], stdin: data)
        #expect(result.status == 0)
        let lines = try events(result)
        #expect(lines.first?["source"] as? String == "stdin")
        #expect(lines.contains { $0["event"] as? String == "crash_detected" })
    }

    @Test func stateLinesFollowTheContractToo() throws {
        let trace = Rideguard.fixtures.appendingPathComponent("example-lowside.csv").path
        let result = Rideguard.inProcess(["replay", trace, "--json", "--state-every", "5"])
        let lines = try events(result)
        #expect(lines.filter { $0["event"] as? String == "state" }.count >= 10)
    }

    @Test(arguments: [
        ("bad-number.csv", "# rideguard-trace v1\ntime_s,ax,ay,az\n0.00,0,0,9.8\n0.01,0,0,9.8\n0.02,0,zz,9.8\n", "bad-number.csv:5: bad number 'zz' in column 'ay'"),
        ("missing-column.csv", "time_s,ax,az\n0,0,9.8\n", "missing-column.csv:1: header has no 'ay' column"),
        ("short-row.csv", "time_s,ax,ay,az\n0,0,9.8\n", "short-row.csv:2: expected 4 fields as in the header, found 3"),
        ("empty.csv", "", "empty.csv: empty file: no trace header"),
        ("header-only.csv", "# rideguard-trace v1\ntime_s,ax,ay,az\n", "header-only.csv: the trace has a header but no samples"),
    ])
    func corruptTracesGiveOneClearError(name: String, contents: String, message: String) throws {
        let file = try Rideguard.temporaryFile(name, contents: Data(contents.utf8))
        let result = Rideguard.inProcess(["replay", file.path, "--json"])
        #expect(result.status == 2)
        let errorLines = result.stderr.split(separator: "\n")
        #expect(errorLines.count == 1)
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test func binaryGarbageIsRefused() throws {
        var bytes = [UInt8]()
        var state: UInt32 = 12345
        for _ in 0..<20_000 {
            state = state &* 1_103_515_245 &+ 12345
            bytes.append(UInt8(truncatingIfNeeded: state >> 16))
        }
        let file = try Rideguard.temporaryFile("garbage.bin", contents: Data(bytes))
        let result = Rideguard.inProcess(["replay", file.path])
        #expect(result.status == 2)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("garbage.bin:"))
        #expect(result.stderr.contains("binary data") || result.stderr.contains("not a CSV trace"), "\(result.stderr)")
    }

    @Test func missingFileIsNamed() throws {
        let result = Rideguard.inProcess(["replay", "/nonexistent/trace.csv"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("/nonexistent/trace.csv: cannot open: No such file or directory"))
    }
}

@Suite struct SynthAndEvalCommandTests {
    @Test func writesACorpusThatEvalScores() throws {
        let folder = Scratch.root.appendingPathComponent("corpus")
        try? FileManager.default.removeItem(at: folder)
        let synth = Rideguard.inProcess(["synth", "--out", folder.path, "--seed", "99", "--count", "10", "--riding-scale", "0.05", "--rate", "100"])
        #expect(synth.status == 0, "\(synth.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names.contains("manifest.json"))
        #expect(names.filter { $0.hasSuffix(".csv") }.count == 10)
        let eval = Rideguard.inProcess(["eval", folder.path, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(eval.stdout.utf8)) as? [String: Any])
        let total = try #require(report["total"] as? [String: Any])
        #expect(total["traces"] as? Int == 10)
        #expect(total["crashes"] as? Int == 8)        // the first 10 scenarios: 8 crashes, 2 rides
        #expect(eval.status == ((report["passed"] as? Bool) == true ? 0 : 1))
    }

    @Test func evalRejectsAMissingManifest() throws {
        let result = Rideguard.inProcess(["eval", "/nonexistent"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("/nonexistent"))
        #expect(result.stderr.contains("cannot read manifest"))
    }
}
