// SPDX-License-Identifier: Apache-2.0
import Foundation
import AgentTestSupport
import RideGuardTestSupport
import Testing

/// Reports rendered to HTML and opened in headless Chromium (Debian's package). The screenshots
/// stay in .build/report-screenshots for a person to look at after the run.
@Suite(.serialized) struct ReportTests {
    static let screenshots = Rideguard.packageRoot.appendingPathComponent(".build/report-screenshots")

    /// Screenshots `html`; returns the PNG's size and what Chromium logged.
    func screenshot(_ html: URL, name: String, height: Int = 1600) throws -> (bytes: Int, log: String) {
        try FileManager.default.createDirectory(at: Self.screenshots, withIntermediateDirectories: true)
        let png = Self.screenshots.appendingPathComponent(name + ".png")
        try? FileManager.default.removeItem(at: png)
        let log = Scratch.path("chromium.log")
        let profile = Scratch.path("chromium-profile")
        defer {
            try? FileManager.default.removeItem(at: profile)
            try? FileManager.default.removeItem(at: log)
        }
        let chromium = try Spawned(["/usr/bin/chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                    "--user-data-dir=\(profile.path)", "--enable-logging=stderr", "--v=0",
                                    "--window-size=1250,\(height)", "--screenshot=\(png.path)", html.absoluteString],
                                   stdout: log.path, stderr: log.path)
        #expect(chromium.wait(90) == 0)
        let bytes = (try? Data(contentsOf: png))?.count ?? 0
        return (bytes, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    func expectRendered(_ result: (bytes: Int, log: String), _ name: String) {
        // A blank page of this size compresses to a few KB; charts and tables take far more.
        #expect(result.bytes > 40_000, "\(name): screenshot of \(result.bytes) bytes looks blank")
        #expect(!result.log.contains("CONSOLE"), "\(name): console output: \(result.log)")
        #expect(!result.log.contains("Uncaught"), "\(name): \(result.log)")
    }

    @Test(.enabled(if: Rideguard.hasPTWFalls, Rideguard.ptwFallsMissing), arguments: ["fall_in_a_curve", "fall_on_a_slippery_straight_road_section"])
    func realFallReports(file: String) throws {
        let trace = Rideguard.ptwFalls.appendingPathComponent("\(file).csv")
        let html = Scratch.path("report-\(file).html")
        let result = Rideguard.inProcess(["replay", trace.path, "--report", html.path])
        #expect(result.status == 0, "\(result.stderr)")
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains("CRASH DETECTED at"))
        #expect(page.contains("Around the crash at"))
        #expect(!page.contains("<script"))                  // self-contained, nothing to fetch
        #expect(!page.contains("http://") && !page.contains("https://"))
        expectRendered(try screenshot(html, name: file), file)
    }

    @Test func syntheticRideReport() throws {
        let folder = Scratch.path("report-ride")
        let synth = Rideguard.inProcess(["synth", "--out", folder.path, "--seed", "21", "--scenario", "hard_ride",
                                       "--count", "1", "--riding-scale", "0.2", "--rate", "200"])
        #expect(synth.status == 0)
        let trace = folder.appendingPathComponent("0001-hard_ride.csv")
        let html = folder.appendingPathComponent("report.html")
        let result = Rideguard.inProcess(["replay", trace.path, "--report", html.path])
        #expect(result.status == 0, "\(result.stderr)")
        let page = try String(contentsOf: html, encoding: .utf8)
        #expect(page.contains("No crash detected"))
        expectRendered(try screenshot(html, name: "synthetic-hard-ride", height: 1000), "synthetic ride")

        let evaluation = folder.appendingPathComponent("eval.html")
        let eval = Rideguard.inProcess(["eval", folder.path, "--report", evaluation.path])
        #expect(eval.status == 0, "\(eval.stdout)")
        let table = try String(contentsOf: evaluation, encoding: .utf8)
        #expect(table.contains("0001-hard_ride.csv") && table.contains("Passed"))
        let shot = try screenshot(evaluation, name: "evaluation", height: 500)
        #expect(shot.bytes > 10_000)
        #expect(!shot.log.contains("CONSOLE"))
    }

    @Test func reportOfACorruptTraceIsAClearError() throws {
        let file = try Rideguard.temporaryFile("corrupt-report.csv", contents: Data("time_s,ax,ay,az\n0,1,x,3\n".utf8))
        let result = Rideguard.inProcess(["replay", file.path, "--report", "/tmp/never-written.html"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("corrupt-report.csv:2: bad number 'x' in column 'ay'"))
    }
}
