// SPDX-License-Identifier: Apache-2.0
import Logging
import Synchronization

/// The agent's log, kept: every line as "part: message" (or the message alone).
package final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    private let level: Logger.Level

    /// Keeps the lines at `level` and above.
    package init(level: Logger.Level = .info) {
        self.level = level
    }

    package var all: [String] { lines.withLock { $0 } }
    package var count: Int { lines.withLock { $0.count } }
    package var text: String { all.joined(separator: "\n") }

    package func contains(_ needle: String) -> Bool { lines.withLock { $0.contains { $0.contains(needle) } } }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    /// A logger whose lines are kept here: its part (a metadata key the agent sets) names the line.
    package var logger: Logger { Logger(label: "rideguard") { [self] _ in Handler(lines: self, logLevel: level) } }

    private struct Handler: LogHandler {
        let lines: LogLines
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.MetadataValue? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            lines.append("\(metadata["part"].map { "\($0): " } ?? "")\(event.message)")
        }
    }
}
