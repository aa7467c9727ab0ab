// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import SystemCalls
import RideGuardCore
import ScenarioSynth

/// Scores the detector against labelled traces: crashes found, false alarms, and how long after
/// the bike came to rest the alarm started.
package struct DetectorEvaluation: Sendable {
    /// What happened on one trace.
    package struct TraceResult: Sendable {
        package var label: TraceLabel
        package var detections: [Double]
        /// The `parked_fall` events.
        package var parkedFalls: [Double]

        package init(label: TraceLabel, detections: [Double], parkedFalls: [Double] = []) {
            self.label = label
            self.detections = detections
            self.parkedFalls = parkedFalls
        }

        /// A parked bike's fall that was due and not reported.
        package var missedParkedFall: Bool {
            guard let fall = label.parkedFall else { return false }
            return !parkedFalls.contains { $0 >= fall - 0.05 }
        }
        /// `parked_fall` events beyond the one due (none is due on most traces).
        package var strayParkedFalls: Int { parkedFalls.count - (label.parkedFall != nil && !missedParkedFall ? 1 : 0) }
        package var isProblem: Bool { missed || falseAlarms > 0 || missedParkedFall || strayParkedFalls > 0 }

        /// The first detection at or after the crash began.
        package var detection: Double? {
            guard let start = label.crashStart else { return nil }
            return detections.first { $0 >= start - 0.05 }
        }
        package var missed: Bool { label.crash && detection == nil }
        /// Alarms on a ride, or before the crash began, or a second alarm for the same crash.
        package var falseAlarms: Int {
            guard label.crash, let start = label.crashStart else { return detections.count }
            let before = detections.filter { $0 < start - 0.05 }.count
            return before
        }
        /// Seconds from coming to rest to the alarm (negative: the alarm came while it still slid).
        package var latency: Double? {
            guard let detection, let rest = label.rest else { return nil }
            return detection - rest
        }
    }

    /// The pass mark.
    package struct Bar: Sendable {
        package var medianLatency = 3.0
        package var maximumLatency = 6.0
        package init() {}
    }

    package private(set) var results: [TraceResult] = []
    package var configuration: DetectorConfiguration

    package init(configuration: DetectorConfiguration = DetectorConfiguration()) {
        self.configuration = configuration
    }

    package mutating func record(_ result: TraceResult) {
        results.append(result)
    }

    // MARK: - Totals

    package struct Row: Sendable {
        package var name: String
        package var traces = 0
        package var crashes = 0
        package var detected = 0
        package var falseAlarms = 0
        package var ridingHours = 0.0
        package var latencies: [Double] = []
        package var parkedFallsDue = 0
        package var parkedFallsFound = 0
        package var strayParkedFalls = 0

        package var medianLatency: Double? { Self.median(latencies) }
        package var maximumLatency: Double? { latencies.max() }
        package var falseAlarmsPerHour: Double { ridingHours > 0 ? Double(falseAlarms) / ridingHours : 0 }

        static func median(_ values: [Double]) -> Double? {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            let mid = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
        }

        mutating func add(_ result: TraceResult) {
            traces += 1
            ridingHours += result.label.ridingSeconds / 3600
            falseAlarms += result.falseAlarms
            if result.label.parkedFall != nil {
                parkedFallsDue += 1
                if !result.missedParkedFall { parkedFallsFound += 1 }
            }
            strayParkedFalls += result.strayParkedFalls
            if result.label.crash {
                crashes += 1
                if !result.missed { detected += 1 }
                if let latency = result.latency { latencies.append(latency) }
            }
        }
    }

    /// One row per scenario, in the generator's order, then the totals.
    package var rows: (perScenario: [Row], total: Row) {
        var byScenario: [Scenario: Row] = [:]
        var total = Row(name: "total")
        for result in results {
            byScenario[result.label.scenario, default: Row(name: result.label.scenario.rawValue)].add(result)
            total.add(result)
        }
        return (Scenario.allCases.compactMap { byScenario[$0] }, total)
    }

    package func passes(_ bar: Bar) -> Bool {
        let total = rows.total
        return total.detected == total.crashes && total.falseAlarms == 0
            && total.parkedFallsFound == total.parkedFallsDue && total.strayParkedFalls == 0
            && (total.medianLatency ?? 0) <= bar.medianLatency && (total.maximumLatency ?? 0) <= bar.maximumLatency
    }

    /// The table a person reads.
    package var table: String {
        func cell(_ s: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - s.count)) + s }
        func latency(_ v: Double?) -> String { v.map { DecimalFormat.string($0, decimals: 2) } ?? "-" }
        var lines = ["scenario                    traces  crashes  detected  false alarms  FA/hour  riding h  latency median  latency max  parked falls"]
        let (perScenario, total) = rows
        for row in perScenario + [total] {
            if row.name == "total" { lines.append(String(repeating: "-", count: lines[0].count)) }
            let parked = "\(row.parkedFallsFound)/\(row.parkedFallsDue)" + (row.strayParkedFalls > 0 ? " +\(row.strayParkedFalls)" : "")
            lines.append(row.name + String(repeating: " ", count: max(1, 26 - row.name.count))
                + cell("\(row.traces)", 8) + cell("\(row.crashes)", 9) + cell("\(row.detected)", 10)
                + cell("\(row.falseAlarms)", 14) + cell(DecimalFormat.string(row.falseAlarmsPerHour, decimals: 3), 9)
                + cell(DecimalFormat.string(row.ridingHours, decimals: 2), 10)
                + cell(latency(row.medianLatency), 16) + cell(latency(row.maximumLatency), 13) + cell(parked, 14))
        }
        for result in results where result.isProblem {
            let what = result.missed ? "MISSED"
                : result.falseAlarms > 0 ? "FALSE ALARM at \(result.detections.map { DecimalFormat.string($0, decimals: 2) }.joined(separator: ", ")) s"
                : result.missedParkedFall ? "PARKED FALL NOT REPORTED"
                : "PARKED FALL REPORTED WHERE NONE HAPPENED at \(result.parkedFalls.map { DecimalFormat.string($0, decimals: 2) }.joined(separator: ", ")) s"
            lines.append("  \(result.label.file.isEmpty ? "seed \(result.label.seed)" : result.label.file) (\(result.label.scenario.rawValue)): \(what)")
        }
        return lines.joined(separator: "\n")
    }

    /// The same as JSON, for machines.
    package var json: String {
        func rowJSON(_ row: Row) -> String {
            var line = JSONLine()
            line.add("name", row.name)
            line.add("traces", row.traces)
            line.add("crashes", row.crashes)
            line.add("detected", row.detected)
            line.add("false_alarms", row.falseAlarms)
            line.add("false_alarms_per_hour", row.falseAlarmsPerHour, decimals: 4)
            line.add("riding_hours", row.ridingHours, decimals: 3)
            line.add("latency_median_s", row.medianLatency ?? .nan, decimals: 3)
            line.add("latency_max_s", row.maximumLatency ?? .nan, decimals: 3)
            line.add("parked_falls_due", row.parkedFallsDue)
            line.add("parked_falls_found", row.parkedFallsFound)
            line.add("stray_parked_falls", row.strayParkedFalls)
            return line.text
        }
        let (perScenario, total) = rows
        var line = JSONLine()
        line.addRaw("total", rowJSON(total))
        line.addRaw("scenarios", "[" + perScenario.map(rowJSON).joined(separator: ",") + "]")
        let problems = results.filter(\.isProblem).map { result -> String in
            var p = JSONLine()
            p.add("file", result.label.file)
            p.add("scenario", result.label.scenario.rawValue)
            p.add("missed", result.missed)
            p.add("false_alarms", result.falseAlarms)
            p.add("missed_parked_fall", result.missedParkedFall)
            p.add("stray_parked_falls", result.strayParkedFalls)
            return p.text
        }
        line.addRaw("problems", "[" + problems.joined(separator: ",") + "]")
        line.add("passed", passes(Bar()))
        return line.text
    }
}

extension DetectorEvaluation {
    /// The evaluation as a self-contained page: the table, then a row per trace.
    package var html: String {
        var page = ReportHTML.head(title: "RideGuard evaluation")
        let (perScenario, total) = rows
        page += "<h1>RideGuard evaluation <span class=muted>\(results.count) traces</span></h1>\n"
        let passed = passes(Bar())
        page += "<div class=\"verdict \(passed ? "ok" : "crash")\">\(passed ? "Passed" : "Failed"): \(total.detected)/\(total.crashes) crashes detected, \(total.falseAlarms) false alarms in \(DecimalFormat.string(total.ridingHours, decimals: 2)) h of riding</div>\n"
        page += "<table><tr><th>scenario</th><th>traces</th><th>crashes</th><th>detected</th><th>false alarms</th><th>FA/hour</th><th>riding h</th><th>latency median</th><th>latency max</th></tr>"
        func latency(_ v: Double?) -> String { v.map { DecimalFormat.string($0, decimals: 2) + " s" } ?? "–" }
        for row in perScenario + [total] {
            page += "<tr><td>\(row.name)</td><td>\(row.traces)</td><td>\(row.crashes)</td><td>\(row.detected)</td><td>\(row.falseAlarms)</td><td>\(DecimalFormat.string(row.falseAlarmsPerHour, decimals: 3))</td><td>\(DecimalFormat.string(row.ridingHours, decimals: 2))</td><td>\(latency(row.medianLatency))</td><td>\(latency(row.maximumLatency))</td></tr>"
        }
        page += "</table>\n<h2>Every trace</h2><table><tr><th>trace</th><th>scenario</th><th>crash from</th><th>rest at</th><th>detections</th><th>latency after rest</th><th>verdict</th></tr>"
        for result in results {
            let label = result.label
            let verdict = result.missed ? "MISSED" : result.falseAlarms > 0 ? "FALSE ALARM"
                : result.missedParkedFall ? "PARKED FALL NOT REPORTED" : result.strayParkedFalls > 0 ? "STRAY PARKED FALL" : "ok"
            page += "<tr><td>\(Markup.escaped(label.file.isEmpty ? "seed \(label.seed)" : label.file))</td><td>\(label.scenario.rawValue)</td>"
                + "<td>\(label.crashStart.map { DecimalFormat.string($0, decimals: 2) } ?? "–")</td><td>\(label.rest.map { DecimalFormat.string($0, decimals: 2) } ?? "–")</td>"
                + "<td>\(result.detections.map { DecimalFormat.string($0, decimals: 2) }.joined(separator: ", "))</td><td>\(latency(result.latency))</td>"
                + "<td class=\"\(verdict == "ok" ? "" : "crash")\">\(verdict)</td></tr>"
        }
        return page + "</table></body></html>\n"
    }
}

extension Manifest {
    /// Reads a manifest written by `rideguard synth`.
    package static func load(path: String) throws -> Manifest {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw TraceError(source: path, line: nil, reason: "cannot read manifest: \(explain(error))")
        }
        do {
            return try JSONDecoder().decode(Manifest.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw TraceError(source: path, line: nil, reason: "manifest is missing '\(key.stringValue)' at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch {
            throw TraceError(source: path, line: nil, reason: "not a rideguard manifest: \(error)")
        }
    }

    package func write(path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: path))
    }
}
