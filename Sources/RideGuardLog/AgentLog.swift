// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import RideGuardCore
import SystemPackage

/// How the agent's lines are written, bootstrapped once by the executable: under systemd (which
/// gives the service `JOURNAL_STREAM`), each line starts with its syslog priority (`<4>` for a
/// warning) and journald adds the time; on a terminal or a pipe, "[  1.2 s] text" with the time
/// since start. `RIDEGUARD_LOG=debug` shows more (and each line's part), `=warning` less. Phone
/// numbers are masked where a line is made, never here: this writes what it is given.
package struct AgentLogHandler: LogHandler {
    package enum Format: Sendable {
        case terminal
        case journal
    }

    /// Where the lines go: the agent's own output, or a command's error output (`rideguard sms`).
    package enum Stream: Sendable {
        case standardOutput
        case standardError
    }

    private let format: Format
    private let stream: Stream
    private let start: ContinuousClock.Instant
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]

    package init(format: Format, stream: Stream = .standardOutput, level: Logger.Level = .info, start: ContinuousClock.Instant = .now) {
        self.format = format
        self.stream = stream
        self.logLevel = level
        self.start = start
    }

    /// A command's progress on its error output, in the terminal's format: what `rideguard sms` says.
    package static func errorOutput(level: Logger.Level = .info) -> Logger {
        Logger(label: "rideguard", factory: { _ in AgentLogHandler(format: .terminal, stream: .standardError, level: level) })
    }

    /// Bootstraps swift-log for the process, from the environment (see above).
    package static func bootstrap(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let format: Format = environment["JOURNAL_STREAM"] == nil ? .terminal : .journal
        let level = environment["RIDEGUARD_LOG"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        let start = ContinuousClock.now
        LoggingSystem.bootstrap { _ in AgentLogHandler(format: format, level: level, start: start) }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var text = "\(event.message)"
        if logLevel <= .debug, let part = metadata["part"] { text = "\(part): " + text }
        let file: FileDescriptor = stream == .standardOutput ? .standardOutput : .standardError
        _ = try? file.writeAll(line(text, level: event.level).utf8)
    }

    /// The text as written, with its newline; continuation lines carry the prefix (journald) or
    /// are indented under the first (terminal).
    package func line(_ text: String, level: Logger.Level) -> String {
        switch format {
        case .journal:
            let prefix = "<\(Self.priority(level))>"
            return text.split(separator: "\n", omittingEmptySubsequences: false).map { prefix + $0 }.joined(separator: "\n") + "\n"
        case .terminal:
            let since = (ContinuousClock.now - start).components
            let elapsed = DecimalFormat.string(Double(since.seconds) + Double(since.attoseconds) / 1e18, decimals: 1)
            let prefix = "[" + String(repeating: " ", count: max(0, 6 - elapsed.count)) + elapsed + " s] "
            return prefix + text.replacing("\n", with: "\n" + String(repeating: " ", count: prefix.count)) + "\n"
        }
    }

    /// syslog's priorities, as journald reads them from a line's `<N>` prefix.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}

extension Logger {
    /// For a part whose lines nobody reads (a one-off check: `doctor`, `setup`'s test SMS).
    package static let silent = Logger(label: "rideguard.silent", factory: { _ in SwiftLogNoOpLogHandler() })
}
