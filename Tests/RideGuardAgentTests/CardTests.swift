// SPDX-License-Identifier: Apache-2.0
import Foundation
import AgentTestSupport
import RideGuardTestSupport
import Testing

/// `rideguard card`: its QR code read back by a real decoder (zbarimg), from the SVG as Chromium
/// draws it and from the terminal's half blocks.
@Suite(.serialized) struct CardTests {
    /// What a rescuer's phone must read: written out here, not taken from the code under test.
    static let facts = """
        RideGuard rescue card
        Rider: Zoë Martin
        Medical: Type 1 diabetic, allergic to penicillin. Blood group O+
        In an emergency call:
        Sam: +33612345678
        Jo: +4915112345678
        This motorbike carries RideGuard: after a crash it texts these contacts where it is.
        """

    func riderDatabase() throws -> String {
        let folder = Scratch.path("rideguard-card")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = folder.appendingPathComponent("rideguard.sqlite").path
        #expect(Rideguard.inProcess(["profile", "set", "--name", "Zoë Martin", "--medical", "Type 1 diabetic, allergic to penicillin. Blood group O+",
                                   "--database", database]).status == 0)
        for (name, number) in [("Sam", "+33612345678"), ("Jo", "+4915112345678")] {
            #expect(Rideguard.inProcess(["contacts", "add", name, number, "--database", database]).status == 0)
        }
        return database
    }

    /// zbarimg's reading of `image`: the text of every code found, or nil when it found none.
    func decode(_ image: URL) throws -> String? {
        let out = Scratch.path("zbar.txt")
        defer { try? FileManager.default.removeItem(at: out) }
        let zbar = try Spawned(["/usr/bin/zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", image.path], stdout: out.path)
        guard zbar.wait(60) == 0 else { return nil }
        return try String(contentsOf: out, encoding: .utf8).trimmingCharacters(in: .newlines)
    }

    @Test func theSVGCardDecodesToTheRidersFacts() throws {
        let database = try riderDatabase()
        let svg = Scratch.path("card.svg")
        let result = Rideguard.inProcess(["card", "--out", svg.path, "--database", database])
        #expect(result.status == 0, "\(result.stderr)")
        var info = stat()
        #expect(stat(svg.path, &info) == 0 && info.st_mode & 0o777 == 0o600, "the card holds medical and phone data")
        // 105 × 74 mm at 96 dpi is 397 × 280 px; Chromium draws it 4 times larger, as a printer would.
        let png = ReportTests.screenshots.appendingPathComponent("rescue-card.png")
        try FileManager.default.createDirectory(at: ReportTests.screenshots, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(at: png)
        let profile = Scratch.path("chromium-profile")
        defer { try? FileManager.default.removeItem(at: profile) }
        let chromium = try Spawned(["/usr/bin/chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                    "--user-data-dir=\(profile.path)", "--force-device-scale-factor=4",
                                    "--window-size=397,280", "--screenshot=\(png.path)", svg.absoluteString])
        #expect(chromium.wait(90) == 0)
        #expect(try decode(png) == Self.facts)
        // The printed side says the same, numbers in full.
        let text = try String(contentsOf: svg, encoding: .utf8)
        for needle in ["Zoë Martin", "+33612345678", "+4915112345678", "Blood group O+", "carries RideGuard"] {
            #expect(text.contains(needle), "\(needle) missing from the printed card")
        }
    }

    @Test func theTerminalQRDecodesToo() throws {
        let database = try riderDatabase()
        let result = Rideguard.inProcess(["card", "--terminal", "--database", database])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix(Self.facts + "\n\n"))
        // The half blocks back into pixels: a lit half is a light module (the code is drawn for a dark terminal).
        let rows = result.stdout.split(separator: "\n").filter { $0.contains("█") || $0.contains("▀") || $0.contains("▄") }
        var pixels: [[Bool]] = []                       // true: dark
        for row in rows {
            let top = row.map { $0 == " " || $0 == "▄" }
            let bottom = row.map { $0 == " " || $0 == "▀" }
            pixels += [top, bottom]
        }
        #expect(pixels.count > 40 && Set(pixels.map(\.count)).count == 1, "a square code, every row as wide")
        let scale = 6
        var pbm = "P1\n\(pixels[0].count * scale) \(pixels.count * scale)\n"
        for line in pixels {
            let scaled = line.flatMap { Array(repeating: $0 ? "1" : "0", count: scale) }.joined(separator: " ")
            pbm += String(repeating: scaled + "\n", count: scale)
        }
        let image = Scratch.path("card.pbm")
        try Data(pbm.utf8).write(to: image)
        defer { try? FileManager.default.removeItem(at: image) }
        #expect(try decode(image) == Self.facts)
    }

    @Test func aLongNoteGetsSmallerLettersAndATooLongOneAClearError() throws {
        let database = try riderDatabase()
        let note = String(repeating: "Takes insulin twice a day. ", count: 12)
        #expect(Rideguard.inProcess(["profile", "set", "--medical", note, "--database", database]).status == 0)
        let svg = Scratch.path("card.svg")
        #expect(Rideguard.inProcess(["card", "--out", svg.path, "--database", database]).status == 0)
        let sizes = try String(contentsOf: svg, encoding: .utf8).matches(of: /font-size="([0-9.]+)"/).compactMap { Double($0.1) }
        #expect(sizes.contains { $0 < 3 }, "a long note is written smaller: \(sizes)")
        #expect(try String(contentsOf: svg, encoding: .utf8).matches(of: /insulin/).count == 12, "nothing is cut")

        let tooLong = String(repeating: "Takes insulin twice a day. ", count: 40)
        #expect(Rideguard.inProcess(["profile", "set", "--medical", tooLong, "--database", database]).status == 0)
        let refused = Rideguard.inProcess(["card", "--out", svg.path, "--database", database])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("the card's text does not fit on it: shorten the medical note"))
    }

    @Test func aCardNeedsSomewhereToGo() throws {
        let result = Rideguard.inProcess(["card", "--database", try riderDatabase()])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--out card.svg, or --terminal"))
    }
}
