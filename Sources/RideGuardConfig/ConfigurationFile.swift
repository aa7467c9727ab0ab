// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore
import SystemCalls
import SystemPackage

/// Problems found in a configuration file: each names the file, the line and the key.
package struct ConfigurationFileError: Error, CustomStringConvertible, Sendable {
    package struct Problem: Equatable, Sendable {
        package var line: Int?
        package var key: String
        package var reason: String

        package init(line: Int?, key: String, reason: String) {
            self.line = line
            self.key = key
            self.reason = reason
        }
    }

    package var source: String
    package var problems: [Problem]

    package var description: String {
        problems.map { "\(source)\($0.line.map { ":\($0)" } ?? ""): \($0.key): \($0.reason)" }.joined(separator: "\n")
    }
}

/// Reads the YAML configuration (default /etc/rideguard/config.yaml). Every key is optional and
/// has a default; a wrong value or an unknown key is an error that names its line.
package enum ConfigurationFile {
    package static let defaultPath = "/etc/rideguard/config.yaml"

    package static func load(path: String) throws(ConfigurationFileError) -> AgentConfiguration {
        // The system's own reason (errno), never Foundation's "The operation could not be completed".
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            let reason = errno == ENOENT ? "no such file" : String(cString: strerror(errno))
            throw ConfigurationFileError(source: path, problems: [.init(line: nil, key: "file", reason: "cannot read: \(reason)")])
        }
        let file = FileDescriptor(rawValue: fd)
        defer { try? file.close() }
        var info = stat()
        if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            throw ConfigurationFileError(source: path, problems: [.init(line: nil, key: "file", reason: "is a folder, not a file")])
        }
        let data: [UInt8]
        do {
            data = try readToEnd(file)
        } catch {
            throw ConfigurationFileError(source: path, problems: [.init(line: nil, key: "file", reason: "cannot read: input/output error")])
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ConfigurationFileError(source: path, problems: [.init(line: nil, key: "file", reason: "not UTF-8 text")])
        }
        return try parse(text, source: path)
    }

    package static func parse(_ text: String, source: String) throws(ConfigurationFileError) -> AgentConfiguration {
        do {
            return try read(text, source: source)
        } catch {
            // YAML marks what is missing at the very end on the line after the last: name the last.
            // (Counted once: counting it again for each problem made 40 000 problems take 36 s.)
            var error = error
            let last = lastLine(text)
            for i in error.problems.indices { error.problems[i].line = error.problems[i].line.map { min($0, last) } }
            throw error
        }
    }

    static func read(_ text: String, source: String) throws(ConfigurationFileError) -> AgentConfiguration {
        var configuration = AgentConfiguration()
        var problems: [ConfigurationFileError.Problem] = []
        let root: YAMLNode?
        do {
            root = try YAMLNode.parse(text)
        } catch {
            let (line, reason) = yamlProblem(error, lastLine: lastLine(text))   // (its context's line too)
            throw ConfigurationFileError(source: source, problems: [.init(line: line, key: "file", reason: reason)])
        }
        guard let root else { return configuration }   // an empty file: every default
        guard let sections = root.mapping else {
            throw ConfigurationFileError(source: source, problems: [.init(line: line(root), key: "file", reason: "expected sections such as imu:, gpio:, modem:")])
        }
        for (keyNode, value) in sections {
            guard let section = keyNode.string, !section.isEmpty else {
                problems.append(.init(line: line(keyNode), key: "file", reason: "a section needs a name in plain text"))
                continue
            }
            if let apply = topLevel[section] {
                do { try apply(&configuration, value) } catch { problems.append(.init(line: line(value), key: section, reason: error.reason)) }
                continue
            }
            guard let keys = schema[section] else {
                problems.append(.init(line: line(keyNode), key: section, reason: "unknown section" + suggestion(section, Array(schema.keys) + Array(topLevel.keys))))
                continue
            }
            guard let mapping = value.mapping else {
                if !isNull(value) { problems.append(.init(line: line(value), key: section, reason: "expected keys under it")) }
                continue
            }
            for (entryKey, entryValue) in mapping {
                guard let key = entryKey.string, !key.isEmpty else {
                    problems.append(.init(line: line(entryKey), key: section, reason: "a key needs a name in plain text"))
                    continue
                }
                if section == "detector" {
                    do {
                        try configuration.detector.set(key, to: entryValue.string ?? "")
                    } catch {
                        problems.append(.init(line: line(entryKey), key: "detector.\(key)", reason: error.reason))
                    }
                    continue
                }
                guard let apply = keys[key] else {
                    problems.append(.init(line: line(entryKey), key: "\(section).\(key)", reason: "unknown key" + suggestion(key, Array(keys.keys))))
                    continue
                }
                do { try apply(&configuration, entryValue) } catch {
                    problems.append(.init(line: line(entryValue), key: "\(section).\(key)", reason: error.reason))
                }
            }
        }
        // Ranges and combinations, with the line of the key where there is one.
        for problem in configuration.validationErrors() {
            let parts = problem.key.split(separator: ".").map(String.init)
            problems.append(.init(line: lineOf(parts, in: root), key: problem.key, reason: problem.reason))
        }
        guard problems.isEmpty else { throw ConfigurationFileError(source: source, problems: problems) }
        return configuration
    }

    /// What is worth changing though it works: detector settings written in camelCase, the
    /// spelling every other key left (file:line: key: note).
    package static func notes(_ text: String, source: String) -> [String] {
        guard let root = try? YAMLNode.parse(text), let sections = root.mapping else { return [] }
        var notes: [String] = []
        for (section, value) in sections where section.string == "detector" {
            for (key, _) in value.mapping ?? [] {
                guard let name = key.string, name.contains(where: \.isUppercase) else { continue }
                notes.append("\(source):\(line(key).map(String.init) ?? "?"): detector.\(name): written detector.\(DetectorConfiguration.snakeCase(name)) from now on, as every other key is (this spelling still works)")
            }
        }
        return notes
    }

    // MARK: - Schema

    struct ValueError: Error {
        var reason: String
    }

    typealias Apply = @Sendable (inout AgentConfiguration, YAMLNode) throws(ValueError) -> Void

    static let topLevel: [String: Apply] = [
        // The file's path, or its path and how long its records are kept.
        "database": { c, n throws(ValueError) in
            guard let entries = n.mapping else { return c.database = try string(n) }
            for (key, value) in entries {
                switch key.string {
                case "path": c.database = try string(value)
                case "keep_days": c.keepDays = try integer(value)
                default: throw ValueError(reason: "unknown key '\(key.string ?? "")' (path, keep_days)")
                }
            }
        },
        "control_socket": { c, n throws(ValueError) in c.controlSocket = try string(n) },
    ]

    static let schema: [String: [String: Apply]] = [
        "imu": [
            "simulated": { c, n throws(ValueError) in c.imu.simulated = try bool(n) },
            "uri": { c, n throws(ValueError) in c.imu.uri = try string(n) },
            "device": { c, n throws(ValueError) in c.imu.device = try string(n) },
            "rate_hz": { c, n throws(ValueError) in c.imu.rateHz = try double(n) },
            "trace": { c, n throws(ValueError) in c.imu.trace = try string(n) },
            "speed": { c, n throws(ValueError) in c.imu.speed = try double(n) },
        ],
        "gpio": [
            "simulated": { c, n throws(ValueError) in c.gpio.simulated = try bool(n) },
            "buzzer": { c, n throws(ValueError) in c.gpio.buzzer = try string(n) },
            "button": { c, n throws(ValueError) in c.gpio.button = try string(n) },
            "button_active_low": { c, n throws(ValueError) in c.gpio.buttonActiveLow = try bool(n) },
            "ignition": { c, n throws(ValueError) in c.gpio.ignition = isNull(n) ? nil : try string(n) },
            "ignition_active_low": { c, n throws(ValueError) in c.gpio.ignitionActiveLow = try bool(n) },
        ],
        "traccar": [
            "url": traccar { t, n throws(ValueError) in t.url = try string(n) },
            "device": traccar { t, n throws(ValueError) in t.device = try string(n) },
            "interval_s": traccar { t, n throws(ValueError) in t.intervalSeconds = try double(n) },
            "parked_interval_s": traccar { t, n throws(ValueError) in t.parkedIntervalSeconds = try double(n) },
            "ca_file": traccar { t, n throws(ValueError) in t.caFile = try string(n) },
        ],
        "web": [
            "listen": { c, n throws(ValueError) in c.web.listen = try string(n) },
            "address": { c, n throws(ValueError) in c.web.address = try string(n) },
            "session_days": { c, n throws(ValueError) in c.web.sessionDays = try double(n) },
        ],
        "group": [
            "name": optional(\.group, AgentConfiguration.Group()) { g, n throws(ValueError) in g.name = try string(n) },
            "dismiss_s": optional(\.group, AgentConfiguration.Group()) { g, n throws(ValueError) in g.dismissSeconds = try double(n) },
        ],
        "power": [
            "shutdown_after_ignition_off_s": { c, n throws(ValueError) in
                c.power.shutdownAfterIgnitionOffSeconds = isNull(n) ? nil : try double(n)
            },
            "shutdown_command": { c, n throws(ValueError) in
                c.power.shutdownCommand = try string(n).split(separator: " ").map(String.init)
            },
        ],
        "gps": [
            "simulated": { c, n throws(ValueError) in c.gps.simulated = try bool(n) },
            "gpsd": { c, n throws(ValueError) in c.gps.gpsd = try string(n) },
            "fixed_position": { c, n throws(ValueError) in
                guard let items = n.sequence, items.count == 2, let lat = try? double(items[0]), let lon = try? double(items[1]) else {
                    throw ValueError(reason: "expected [latitude, longitude]")
                }
                c.gps.fixedPosition = [lat, lon]
            },
        ],
        "modem": [
            "simulated": { c, n throws(ValueError) in c.modem.simulated = try bool(n) },
            "device": { c, n throws(ValueError) in c.modem.device = try string(n) },
            "baud": { c, n throws(ValueError) in c.modem.baud = try integer(n) },
            "pin": { c, n throws(ValueError) in c.modem.pin = try string(n) },
        ],
        "workflow": [
            "countdown_s": { c, n throws(ValueError) in c.workflow.countdownSeconds = try double(n) },
            "cancel_hold_s": { c, n throws(ValueError) in c.workflow.cancelHoldSeconds = try double(n) },
            "long_hold_s": { c, n throws(ValueError) in c.workflow.longHoldSeconds = try double(n) },
            "manual_countdown_s": { c, n throws(ValueError) in c.workflow.manualCountdownSeconds = try double(n) },
            "update_interval_s": { c, n throws(ValueError) in c.workflow.locationUpdateIntervalSeconds = try double(n) },
            "tracking_s": { c, n throws(ValueError) in c.workflow.trackingDurationSeconds = try double(n) },
            "network_failure_s": { c, n throws(ValueError) in c.workflow.networkFailureSeconds = try double(n) },
        ],
        "calls": [
            "enabled": { c, n throws(ValueError) in c.calls.enabled = try bool(n) },
            "ring_s": { c, n throws(ValueError) in c.calls.ringSeconds = try double(n) },
            "rounds": { c, n throws(ValueError) in c.calls.rounds = try integer(n) },
            "interval_s": { c, n throws(ValueError) in c.calls.intervalSeconds = try double(n) },
        ],
        "messages": [
            "language": { c, n throws(ValueError) in
                let text = try string(n)
                guard let language = MessageLanguage(rawValue: text) else {
                    throw ValueError(reason: "'\(text)' is not one of \(MessageLanguage.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                c.messages.language = language
            },
            "map_link": { c, n throws(ValueError) in
                let text = try string(n)
                guard let style = MapLinkStyle(rawValue: text) else {
                    throw ValueError(reason: "'\(text)' is not one of \(MapLinkStyle.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                c.messages.mapLink = style
            },
            "self_test_days": { c, n throws(ValueError) in c.messages.selfTestDays = try integer(n) },
        ],
        "detector": [:],
        "mqtt": [
            "url": mqtt { m, n throws(ValueError) in m.url = try string(n) },
            "username": mqtt { m, n throws(ValueError) in m.username = try string(n) },
            "password": { _, _ throws(ValueError) in
                throw ValueError(reason: "a password is never written in the configuration: put it in a file readable only by the rideguard user and name that file with password_file")
            },
            "password_file": mqtt { m, n throws(ValueError) in m.passwordFile = try string(n) },
            "ca_file": mqtt { m, n throws(ValueError) in m.caFile = try string(n) },
            "cert_file": mqtt { m, n throws(ValueError) in m.certFile = try string(n) },
            "key_file": mqtt { m, n throws(ValueError) in m.keyFile = try string(n) },
            "topic_prefix": mqtt { m, n throws(ValueError) in m.topicPrefix = try string(n) },
            "device": mqtt { m, n throws(ValueError) in m.device = try string(n) },
            "keepalive_s": mqtt { m, n throws(ValueError) in m.keepaliveSeconds = try integer(n) },
            "state_interval_s": mqtt { m, n throws(ValueError) in m.stateIntervalSeconds = try double(n) },
            "owntracks_user": mqtt { m, n throws(ValueError) in m.owntracksUser = try string(n) },
        ],
    ]

    /// A key of an optional section (`mqtt:`, `traccar:`, `group:`), which exists once one of its keys is read.
    static func optional<Section: Sendable>(_ section: WritableKeyPath<AgentConfiguration, Section?> & Sendable, _ empty: Section,
                                            _ set: @escaping @Sendable (inout Section, YAMLNode) throws(ValueError) -> Void) -> Apply {
        { c, n throws(ValueError) in
            var value = c[keyPath: section] ?? empty
            try set(&value, n)
            c[keyPath: section] = value
        }
    }

    static func mqtt(_ set: @escaping @Sendable (inout AgentConfiguration.MQTT, YAMLNode) throws(ValueError) -> Void) -> Apply {
        optional(\.mqtt, AgentConfiguration.MQTT(), set)
    }

    static func traccar(_ set: @escaping @Sendable (inout AgentConfiguration.Traccar, YAMLNode) throws(ValueError) -> Void) -> Apply {
        optional(\.traccar, AgentConfiguration.Traccar(), set)
    }

    static func string(_ n: YAMLNode) throws(ValueError) -> String {
        guard let text = n.string, !text.isEmpty else { throw ValueError(reason: "expected text") }
        return text
    }

    static func double(_ n: YAMLNode) throws(ValueError) -> Double {
        guard let text = n.string, let value = Double(text), value.isFinite else {
            throw ValueError(reason: "'\(n.string ?? "…")' is not a number")
        }
        return value
    }

    static func integer(_ n: YAMLNode) throws(ValueError) -> Int {
        guard let text = n.string, let value = Int(text) else {
            throw ValueError(reason: "'\(n.string ?? "…")' is not a whole number")
        }
        return value
    }

    /// YAML 1.1's words, as before: true/yes/on and false/no/off, any case.
    static func bool(_ n: YAMLNode) throws(ValueError) -> Bool {
        switch n.string?.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw ValueError(reason: "'\(n.string ?? "…")' is not true or false")
        }
    }

    /// An empty value, `~` or `null`, unquoted.
    static func isNull(_ n: YAMLNode) -> Bool {
        guard n.isPlainScalar, let text = n.string else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(text)
    }

    static func line(_ n: YAMLNode) -> Int? { n.line }

    /// The line and the words of a YAML syntax error.
    /// (YAML marks what is missing at the very end on the line after the last: `lastLine` instead.)
    static func yamlProblem(_ error: YAMLNode.SyntaxError, lastLine: Int) -> (line: Int?, reason: String) {
        let during = error.context.map { " (\($0.text) on line \(min($0.line, lastLine)))" } ?? ""
        return (error.line.map { min($0, lastLine) }, "not valid YAML: \(error.problem)\(during)")
    }

    /// The number of the file's last line, counted as YAML counts: a line ends at LF, CR LF or a
    /// lone CR.
    static func lastLine(_ text: String) -> Int {
        var breaks = 0, previous: UInt8 = 0
        for byte in text.utf8 {
            if byte == 0x0D || (byte == 0x0A && previous != 0x0D) { breaks += 1 }
            previous = byte
        }
        return max(1, previous == 0x0A || previous == 0x0D ? breaks : breaks + 1)
    }

    static func lineOf(_ path: [String], in root: YAMLNode) -> Int? {
        var node = root
        var found: Int?
        for part in path {
            guard let mapping = node.mapping, let pair = mapping.first(where: { $0.key.string == part }) else { break }
            found = line(pair.key)
            node = pair.value
        }
        return found
    }

    static func suggestion(_ word: String, _ candidates: [String]) -> String {
        let best = candidates.min { distance(word, $0) < distance(word, $1) }
        guard let best, distance(word, best) <= 3 else { return "" }
        return " (did you mean \(best)?)"
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }
}

private extension Error {
    var reason: String {
        if let e = self as? ConfigurationFile.ValueError { return e.reason }
        if let e = self as? ConfigurationError { return e.reason }
        return "\(self)"
    }
}

