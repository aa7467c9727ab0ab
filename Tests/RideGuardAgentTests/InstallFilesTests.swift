// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
import RideGuardTestSupport
import Testing
import WebUI
import RideGuardConfig

/// The files an installer copies onto the Pi: the udev rules and the systemd unit, checked against
/// udev's rule grammar, `systemd-analyze verify`, and the agent's own defaults.
@Suite struct InstallFilesTests {
    static let udev = Rideguard.packageRoot.appendingPathComponent("udev")
    static let unit = Rideguard.packageRoot.appendingPathComponent("systemd/rideguard.service")

    /// One `KEY{attr}OP"value"` of a udev rule.
    struct Token: Equatable {
        var key: String
        var op: String
        var value: String
    }

    static let matchKeys: Set<String> = [
        "ACTION", "SUBSYSTEM", "SUBSYSTEMS", "KERNEL", "KERNELS", "ATTR", "ATTRS", "ENV", "DRIVERS", "TAG",
    ]
    static let assignKeys: Set<String> = [
        "GROUP", "MODE", "OWNER", "SYMLINK", "RUN", "ENV", "GOTO", "LABEL", "TAG", "IMPORT",
    ]

    /// Splits a rule line into tokens, or says which part of it udev would reject.
    static func tokens(_ line: String) throws -> [Token] {
        var result: [Token] = []
        var rest = Substring(line)
        while !rest.isEmpty {
            rest = rest.drop(while: { $0 == " " || $0 == "," })
            if rest.isEmpty { break }
            let key = rest.prefix(while: { $0.isUppercase || $0 == "_" })
            rest = rest.dropFirst(key.count)
            if rest.first == "{" {
                guard let close = rest.firstIndex(of: "}") else { throw RuleError("unclosed { in '\(line)'") }
                rest = rest[rest.index(after: close)...]
            }
            let op = ["==", "!=", "+=", ":=", "="].first(where: { rest.hasPrefix($0) })
            guard let op, !key.isEmpty else { throw RuleError("expected KEY op \"value\" at '\(rest)'") }
            rest = rest.dropFirst(op.count)
            guard rest.first == "\"", let end = rest.dropFirst().firstIndex(of: "\"") else {
                throw RuleError("value of \(key) is not quoted in '\(line)'")
            }
            result.append(Token(key: String(key), op: op, value: String(rest[rest.index(after: rest.startIndex)..<end])))
            rest = rest[rest.index(after: end)...]
            guard rest.isEmpty || rest.first == "," else { throw RuleError("missing comma after \(key) in '\(line)'") }
        }
        return result
    }

    struct RuleError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func rules(_ name: String) throws -> [[Token]] {
        let text = try String(contentsOf: udev.appendingPathComponent(name), encoding: .utf8)
        return try text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .map(tokens)
    }

    static var ruleFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: udev.path)) ?? []).filter { $0.hasSuffix(".rules") }.sorted()
    }

    @Test func theRuleParserRejectsWhatUdevRejects() throws {
        #expect(throws: RuleError.self) { try Self.tokens(#"SUBSYSTEM=="iio" GROUP="iio""#) }
        #expect(throws: RuleError.self) { try Self.tokens(#"SUBSYSTEM==iio"#) }
        #expect(throws: RuleError.self) { try Self.tokens(#"ATTRS{idVendor"=="1e0e""#) }
        #expect(try Self.tokens(#"ATTRS{idVendor}=="1e0e", MODE="0660""#)
            == [Token(key: "ATTRS", op: "==", value: "1e0e"), Token(key: "MODE", op: "=", value: "0660")])
    }

    @Test func everyRuleIsWellFormed() throws {
        #expect(Self.ruleFiles == ["60-rideguard-iio.rules", "77-rideguard-modem.rules"])
        for file in Self.ruleFiles {
            let rules = try Self.rules(file)
            #expect(!rules.isEmpty, "\(file) has no rules")
            var labels: Set<String> = []
            var gotos: Set<String> = []
            for rule in rules {
                var matches = 0
                for token in rule {
                    if token.op == "==" || token.op == "!=" {
                        matches += 1
                        #expect(Self.matchKeys.contains(token.key), "\(file): \(token.key) cannot be matched")
                    } else {
                        #expect(Self.assignKeys.contains(token.key), "\(file): \(token.key) cannot be assigned")
                    }
                    if token.key == "MODE" { #expect(token.value == "0660", "\(file): devices are for the group only") }
                    if token.key == "LABEL" { labels.insert(token.value) }
                    if token.key == "GOTO" { gotos.insert(token.value) }
                }
                // A rule without a match would apply to every device on the system.
                #expect(matches > 0 || rule.map(\.key) == ["LABEL"], "\(file): a rule without a match: \(rule)")
            }
            #expect(gotos.isSubset(of: labels), "\(file): GOTO without its LABEL")
        }
    }

    @Test func everyModemGetsTheAgentsDefaultNameAndModemManagerLeavesItAlone() throws {
        let rules = try Self.rules("77-rideguard-modem.rules")
        func product(_ rule: [Token]) -> String? {
            // idVendor and idProduct, in that order
            let ids = rule.filter { $0.key == "ATTRS" && $0.op == "==" && $0.value != "?*" }.map(\.value)
            return ids.count == 2 ? ids.joined(separator: ":") : nil
        }
        let defaultName = URL(fileURLWithPath: AgentConfiguration().modem.device).lastPathComponent
        let products = Set(rules.compactMap(product))
        #expect(products == ["1e0e:9001", "2c7c:0125"])
        for id in products {
            let own = rules.filter { product($0) == id }
            #expect(own.contains { $0.contains(Token(key: "SYMLINK", op: "+=", value: defaultName)) }, "\(id) has no \(defaultName)")
            #expect(own.contains { $0.contains(Token(key: "ENV", op: "=", value: "1")) }, "\(id) is not hidden from ModemManager")
        }
    }

    @Test func theUnitMatchesTheAgentsDefaults() throws {
        let text = try String(contentsOf: Self.unit, encoding: .utf8)
        var settings: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            settings[String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
        let defaults = AgentConfiguration()
        // The agent speaks sd_notify (READY=1, WATCHDOG=1): the unit must listen for it.
        #expect(settings["Type"] == ["notify"])
        #expect(settings["WatchdogSec"]?.count == 1)
        #expect(settings["Restart"] == ["always"])
        #expect(settings["NoNewPrivileges"] == ["yes"])
        #expect(settings["ProtectSystem"] == ["strict"])
        #expect(settings["DevicePolicy"] == ["closed"])
        // systemd creates the folders the defaults point into, writable despite ProtectSystem=strict.
        #expect(settings["StateDirectory"] == [URL(fileURLWithPath: defaults.database).deletingLastPathComponent().lastPathComponent])
        #expect(defaults.database.hasPrefix("/var/lib/"))
        #expect(settings["RuntimeDirectory"] == [URL(fileURLWithPath: defaults.controlSocket).deletingLastPathComponent().lastPathComponent])
        #expect(defaults.controlSocket.hasPrefix("/run/"))
        // Under the real systemd (issue 49): the boot never waits on the agent's set-up; a path the
        // unit names that does not exist yet fails the start (226/NAMESPACE), so none is named
        // unless optional ("-"); no ordering on a unit nothing starts; and each device group that a
        // module registers later is loaded before the unit starts, when systemd resolves it.
        #expect(settings["TimeoutStartSec"]?.allSatisfy { $0 != "infinity" } ?? true)
        for key in ["ReadWritePaths", "ReadOnlyPaths", "InaccessiblePaths", "BindPaths", "BindReadOnlyPaths"] {
            #expect(settings[key]?.allSatisfy { $0.split(separator: " ").allSatisfy { $0.hasPrefix("-") } } ?? true, "\(key)")
        }
        let after = settings["After", default: []].joined(separator: " ")
        #expect(!after.contains("systemd-udev-settle"), "deprecated, and nothing pulls it in on a minimal Debian")
        let wants = settings["Wants", default: []].joined(separator: " ").split(separator: " ").map(String.init)
        for (group, module) in [("char-iio", "industrialio"), ("char-ttyUSB", "usbserial"), ("char-ttyACM", "cdc_acm")]
        where settings["DeviceAllow", default: []].contains(where: { $0.hasPrefix(group + " ") }) {
            #expect(wants.contains("modprobe@\(module).service") && after.contains("modprobe@\(module).service"), "\(group)")
        }
        // The groups the udev rules hand the devices to.
        let groups = Set(try Self.ruleFiles.flatMap { try Self.rules($0) }.flatMap { $0 }.filter { $0.key == "GROUP" }.map(\.value))
        #expect(groups.isSubset(of: Set(settings["SupplementaryGroups"]?.first?.split(separator: " ").map(String.init) ?? [])))
    }

    static let systemdAnalyze = "/usr/bin/systemd-analyze"

    /// The page's unit: its own user in the agent's group, writing only the database's folder.
    @Test func thePagesUnitSharesOnlyTheDatabaseAndTheSocket() throws {
        let text = try String(contentsOf: Self.unit.deletingLastPathComponent().appendingPathComponent("rideguard-web.service"), encoding: .utf8)
        let settings = Dictionary(text.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("=") }.map { line in
            (String(line.prefix { $0 != "=" }), String(line.drop { $0 != "=" }.dropFirst()))
        }, uniquingKeysWith: { first, _ in first })
        #expect(settings["User"] == "rideguard-web" && settings["Group"] == "rideguard")
        #expect(settings["ReadWritePaths"] == URL(fileURLWithPath: AgentConfiguration().database).deletingLastPathComponent().path)
        #expect(settings["ProtectSystem"] == "strict" && settings["NoNewPrivileges"] == "yes" && settings["PrivateDevices"] == "yes")
        #expect(settings["ExecStart"]?.hasPrefix("/usr/bin/rideguard web serve") == true)
        #expect(settings["IPAddressDeny"] == "any")
        // Issue 43, point 7: the page can never take the Pi's CPU, memory, threads or files from the agent.
        #expect(settings["Nice"].flatMap(Int.init).map { $0 > 0 } == true)
        #expect(settings["CPUQuota"] == "50%" && settings["MemoryMax"] == "96M")
        #expect(settings["TasksMax"].flatMap(Int.init).map { $0 <= 64 } == true)
        #expect(settings["LimitNOFILE"].flatMap(Int.init).map { $0 > WebServer.Limits().connections + 64 } == true)
    }

    /// The page's program, which sees no devices, loads neither libiio nor libgpiod (nor what they
    /// bring: libusb, libxml2, avahi): `ldd` on the built program, beside the agent's, which does.
    @Test func thePagesProgramLoadsNoHardwareLibrary() throws {
        func libraries(_ program: String) throws -> [String] {
            let path = Rideguard.binary.deletingLastPathComponent().appendingPathComponent(program)
            let ldd = try Rideguard.run([path.path], program: URL(fileURLWithPath: "/usr/bin/ldd"))
            #expect(ldd.status == 0, "\(ldd.stderr)")
            return ldd.lines.compactMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) }
        }
        let agent = try libraries("rideguard"), page = try libraries("rideguard-web")
        #expect(agent.contains { $0.hasPrefix("libiio.so") } && agent.contains { $0.hasPrefix("libgpiod.so") }, "\(agent)")
        #expect(page.contains { $0.hasPrefix("libsqlite3.so") }, "\(page)")
        let hardware = page.filter { ["libiio", "libgpiod", "libusb", "libxml2", "libavahi"].contains(String($0.prefix { $0 != "." && $0 != "-" })) }
        #expect(hardware.isEmpty, "rideguard-web loads \(hardware)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: systemdAnalyze)), arguments: ["rideguard.service", "rideguard-web.service"])
    func systemdAcceptsTheUnit(name: String) throws {
        // verify checks that ExecStart exists, so point it at the binary under test.
        let text = try String(contentsOf: Self.unit.deletingLastPathComponent().appendingPathComponent(name), encoding: .utf8)
            .replacingOccurrences(of: "ExecStart=/usr/bin/rideguard", with: "ExecStart=\(Rideguard.binary.path)")
        let copy = try Rideguard.temporaryFile(name, contents: Data(text.utf8))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.systemdAnalyze)
        // The man pages of Documentation= are installed with the package (checked there), not here.
        process.arguments = ["verify", "--man=no", copy.path]
        let output = try Rideguard.temporaryFile("verify.out", contents: Data())
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: output)
        try process.run()
        process.waitUntilExit()
        let said = try String(contentsOf: output, encoding: .utf8)
        #expect(process.terminationStatus == 0, "systemd-analyze verify: \(said)")
        // systemd only warns about unknown keys and bad values, and goes on without them.
        #expect(said.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "systemd-analyze verify: \(said)")
    }

    // MARK: - Boards

    static let boards = Rideguard.packageRoot.appendingPathComponent("boards")
    static let boardChips = ["pi-zero-2-w": "pinctrl-bcm2835", "pi-3b-plus": "pinctrl-bcm2835", "pi-4": "pinctrl-bcm2711",
                             "pi-5": "pinctrl-rp1", "cm4": "pinctrl-bcm2711"]

    /// The `i2c-sensor` overlay's parameters RideGuard's pages may use, as raspberrypi/linux's
    /// `overlays/README` and `i2c-sensor-common.dtsi` (`__overrides__`) give them: a chip, `addr`
    /// (the MPUs' and the BNO055's), `int_pin` (the MPUs' only; the deprecated `mpu6050` overlay
    /// called it `interrupt`), `reset_pin` (the BNO055's).
    static let sensorChips: Set<String> = ["mpu6050", "mpu9250", "bno055", "adxl355"]
    static let sensorParameters: [String: Set<String>] = ["addr": ["mpu6050", "mpu9250", "bno055"], "int_pin": ["mpu6050", "mpu9250"],
                                                         "reset_pin": ["bno055"]]

    /// Every `dtoverlay=i2c-sensor,…` line in boards/ and docs/ names one chip and only parameters
    /// the overlay has for it; none uses the deprecated `mpu6050` overlay.
    @Test func everyOverlayLineIsOneTheOverlayTakes() throws {
        let pages = try FileManager.default.contentsOfDirectory(at: Self.boards, includingPropertiesForKeys: nil)
            + ["installer.md", "rider.md"].map { Rideguard.packageRoot.appendingPathComponent("docs/\($0)") }
        var seen = 0
        for page in pages where page.pathExtension == "md" {
            let text = try String(contentsOf: page, encoding: .utf8)
            #expect(!text.contains("dtoverlay=mpu6050,"), "\(page.lastPathComponent) uses the deprecated mpu6050 overlay")
            for match in text.matches(of: /dtoverlay=i2c-sensor,([a-z0-9_=,x]+)/) {
                seen += 1
                let words = match.1.split(separator: ",").map(String.init)
                let chips = words.filter { Self.sensorChips.contains($0) }
                #expect(chips.count == 1, "\(page.lastPathComponent): \(match.0)")
                for parameter in words where !Self.sensorChips.contains(parameter) {
                    let name = String(parameter.prefix { $0 != "=" })
                    #expect(Self.sensorParameters[name]?.contains(chips.first ?? "") == true, "\(page.lastPathComponent): \(match.0): \(name)")
                }
            }
        }
        #expect(seen >= 5)
    }

    /// The 40-pin header (the same on every supported board): physical pin → BCM GPIO number.
    static let header = [3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23, 18: 24]

    @Test(arguments: boardChips.keys.sorted())
    func everyBoardHasItsPageAndAWorkingConfiguration(board: String) throws {
        let page = try String(contentsOf: Self.boards.appendingPathComponent("\(board).md"), encoding: .utf8)
        let configuration = try ConfigurationFile.load(path: Self.boards.appendingPathComponent("\(board).yaml").path)
        #expect(!configuration.imu.simulated && !configuration.gpio.simulated && !configuration.modem.simulated)
        #expect(page.contains("Label `\(Self.boardChips[board]!)`"))
        for line in ["dtparam=i2c_arm=on", "dtoverlay=i2c-sensor,mpu6050,int_pin=4"] { #expect(page.contains(line), "\(board): \(line)") }
        // The lines the configuration uses are the ones the page's pin table gives them.
        #expect(page.contains("| 11 | GPIO17 | `gpio.button`") && configuration.gpio.button == "GPIO17")
        #expect(page.contains("| 12 | GPIO18 | `gpio.buzzer`") && configuration.gpio.buzzer == "GPIO18")
        // The UART device the page names for a HAT modem is the one the configuration offers.
        let yaml = try String(contentsOf: Self.boards.appendingPathComponent("\(board).yaml"), encoding: .utf8)
        let uart = board == "pi-5" ? "/dev/ttyAMA0" : "/dev/serial0"
        #expect(page.contains("`modem.device: \(uart)`") && yaml.contains("# device: \(uart)"))
        let index = try String(contentsOf: Self.boards.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(index.contains("[`\(board).md`](\(board).md) | `\(Self.boardChips[board]!)`"))
    }

    /// Every "pin N … GPIOm" the wiring and the board index state agrees with the header.
    @Test func theWiringMatchesTheHeader() throws {
        var checked = 0
        for file in ["wiring.md", "README.md", "imus.md"] {
            let text = try String(contentsOf: Self.boards.appendingPathComponent(file), encoding: .utf8)
            let pattern = try NSRegularExpression(pattern: #"pin (\d+)\s+GPIO(\d+)|\| (\d+) \| GPIO(\d+)"#)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let groups = (1...4).compactMap { Range(match.range(at: $0), in: text).map { Int(text[$0])! } }
                #expect(Self.header[groups[0]] == groups[1], "\(file): pin \(groups[0]) is not GPIO\(groups[1])")
                checked += 1
            }
        }
        #expect(checked >= 12)
    }
}

/// The documents the code, the tests and the docs point at are in the repository: every
/// `docs/<name>.md` named in Sources/ and Tests/, and every relative link in README.md and docs/.
@Suite struct DocumentLinkTests {
    static let root = Rideguard.packageRoot

    func files(under folder: String, endingIn suffixes: [String]) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: Self.root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { url in suffixes.contains { url.path.hasSuffix($0) } }
    }

    /// docs/installer.md's tables of the SIM's states and the `+CMS ERROR` causes are the code's
    /// own words (issue 61: the modem's table and the troubleshooting one had come to disagree).
    @Test func theInstallersTablesOfCausesAreTheCodes() throws {
        // The tables stand in a list: their lines indented.
        let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/installer.md"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map { $0.drop { $0 == " " } }.joined(separator: "\n")
        #expect(guide.contains(CauseTables.simStates), "docs/installer.md lacks the SIM's table as the code writes it:\n\(CauseTables.simStates)")
        #expect(guide.contains(CauseTables.smsCauses), "docs/installer.md lacks the causes' table as the code writes it:\n\(CauseTables.smsCauses)")
        // No other table names a +CMS ERROR code's meaning.
        #expect(guide.components(separatedBy: "| `+CMS ERROR` |").count == 2)
    }

    /// What a contact receives, as docs/rider.md shows it in each language, is what the composer
    /// writes: the page cannot go stale.
    @Test func theRidersGuideShowsTheContactsQuestionAsSent() throws {
        let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/rider.md"), encoding: .utf8)
        for language in MessageLanguage.allCases {
            let sent = MessageComposer.confirmationRequest(riderName: "Alex", language: language)
            #expect(guide.contains("| \(language.rawValue) | \(sent) |"), "docs/rider.md lacks: \(sent)")
        }
    }

    /// Each language's alert as a contact receives it, as set up and with a long message and a
    /// medical note, with its SMS parts: docs/rider.md shows what the composer writes. (With
    /// RIDEGUARD_ALERTS_OUT=FILE set, the section the guide must hold is written there.)
    @Test func theRidersGuideShowsEachLanguagesAlertAsSent() throws {
        let guide = try String(contentsOf: Self.root.appendingPathComponent("docs/rider.md"), encoding: .utf8)
        let more: [MessageLanguage: (words: String, medical: String)] = [
            .en: ("I usually ride alone on the mountain roads near Annecy.", "type 1 diabetic, allergic to penicillin"),
            .fr: ("Je roule souvent seul sur les routes de montagne près d'Annecy.", "diabétique de type 1, allergique à la pénicilline"),
            .de: ("Ich fahre meist allein auf den Bergstraßen bei Annecy.", "Diabetiker Typ 1, Penicillinallergie"),
            .es: ("Suelo ir solo por las carreteras de montaña cerca de Annecy.", "diabético tipo 1, alérgico a la penicilina"),
            .it: ("Di solito guido da solo sulle strade di montagna vicino ad Annecy.", "diabetico di tipo 1, allergico alla penicillina"),
        ]
        var section = ""
        for language in MessageLanguage.allCases {
            guard let extra = more[language] else {
                Issue.record("no longer message and medical note for \(language.rawValue): add them above")
                continue
            }
            let suggested = MessageComposer.suggestedMessage(language)
            for (name, words, medical) in [("as set up", suggested, nil), ("with more words and a medical note", suggested + " " + extra.words, extra.medical)] as [(String, String, String?)] {
                let evidence = try JSONDecoder().decode(CrashEvidence.self, from: Data(#"{"reason":"lying_still","postureDegrees":88,"stillSeconds":2,"peakG":7.9,"deltaV":0}"#.utf8))
                let c = MessageContext(riderName: "Alex Martin", riderMessage: words, medicalNote: medical, language: language,
                                       trigger: .crash, crashTime: "14:32", evidence: evidence,
                                       fix: Fix(time: 0, latitude: 45.89912, longitude: 6.12934, accuracy: 8), fixAge: 5,
                                       speedBefore: 17.2, headingBefore: 40)
                let alert = MessageComposer.alert(c)
                let sms = SMSText(alert)
                let encoding = sms.encoding == SMSText.Encoding.gsm7 ? "GSM 7-bit" : "UCS-2"
                section += "**\(language.rawValue)**, \(name): \(sms.parts.count) SMS part\(sms.parts.count == 1 ? "" : "s"), \(encoding)\n\n```text\n\(alert)\n```\n\n"
            }
        }
        if let out = ProcessInfo.processInfo.environment["RIDEGUARD_ALERTS_OUT"] { try section.write(toFile: out, atomically: true, encoding: .utf8) }
        #expect(guide.contains(section), "docs/rider.md lacks the alerts as the composer writes them (RIDEGUARD_ALERTS_OUT=FILE writes them)")
    }

    @Test func theDocumentsTheCodeCitesExist() throws {
        let pattern = try NSRegularExpression(pattern: #"docs/[A-Za-z0-9_-]+\.md"#)
        var cited = Set<String>()
        for file in files(under: "Sources", endingIn: [".swift"]) + files(under: "Tests", endingIn: [".swift", ".sh", ".c", ".py"]) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                cited.insert(String(text[Range(match.range, in: text)!]))
            }
        }
        #expect(cited.count >= 4, "\(cited)")
        for path in cited.sorted() {
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(path).path), "\(path) is cited but not in the repository")
        }
    }

    @Test func everyRelativeLinkOfTheDocsLeadsToAFile() throws {
        let pattern = try NSRegularExpression(pattern: #"\]\(([^)#\s]+)(#[^)]*)?\)"#)
        let documents = [Self.root.appendingPathComponent("README.md")] + files(under: "docs", endingIn: [".md"])
            + files(under: "boards", endingIn: [".md"]) + files(under: "udev", endingIn: [".md"])
        var checked = 0
        for document in documents {
            let text = try String(contentsOf: document, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                guard !target.contains("://") else { continue }
                let resolved = document.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL
                #expect(FileManager.default.fileExists(atPath: resolved.path), "\(document.lastPathComponent): \(target) leads nowhere")
                checked += 1
            }
        }
        #expect(checked >= 20, "only \(checked) links checked")
    }
}
