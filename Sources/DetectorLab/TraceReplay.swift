// SPDX-License-Identifier: Apache-2.0
import RideGuardCore
import Storage

/// Runs the daemon's detector over a recorded trace as fast as the machine allows.
package struct TraceReplay {
    /// What a replay found, for the closing line and for evaluation.
    package struct Summary: Sendable {
        package var source: String
        package var header: TraceHeader?
        package var samples = 0
        /// The earliest and the latest sample time (a trace whose time runs backwards in places
        /// still has a duration of zero or more).
        package var firstT = Double.nan
        package var lastT = Double.nan
        package var crashes: [Double] = []
        package var parkedFalls: [Double] = []
        package var faults = 0

        package var duration: Double { samples > 0 ? lastT - firstT : 0 }

        package mutating func count(_ t: Double) {
            samples += 1
            firstT = firstT.isNaN ? t : min(firstT, t)
            lastT = lastT.isNaN ? t : max(lastT, t)
        }

        /// The closing line of `rideguard replay --json`.
        package var jsonLine: String {
            var line = JSONLine(event: "trace_end", t: lastT.isNaN ? 0 : lastT)
            line.add("samples", samples)
            line.add("duration_s", duration, decimals: 3)
            line.add("crashes", crashes.count)
            line.add("parked_falls", parkedFalls.count)
            line.add("sensor_faults", faults)
            return line.text
        }

        package var humanLine: String {
            var verdict = crashes.isEmpty ? "no crash detected" : "\(crashes.count) crash\(crashes.count == 1 ? "" : "es") detected"
            if !parkedFalls.isEmpty { verdict += "; the parked bike fell \(parkedFalls.count == 1 ? "once" : "\(parkedFalls.count) times")" }
            return "end of trace after \(DecimalFormat.string(duration, decimals: 1)) s and \(samples) samples: \(verdict)"
        }
    }

    package var configuration: DetectorConfiguration

    package init(configuration: DetectorConfiguration = DetectorConfiguration()) {
        self.configuration = configuration
    }

    /// Replays the trace at `path` ("-" for stdin), calling `onEvent` for each detector event.
    /// Throws `TraceError` for an unreadable trace; events already reported stay reported.
    package func run(path: String, onStart: (TraceHeader, IMUSample) -> Void = { _, _ in },
                    stateEvery: Double? = nil, onState: (Double, CrashDetector.State) -> Void = { _, _ in },
                    onEvent: (DetectorEvent) -> Void) throws -> Summary {
        var nextState = -Double.infinity
        var detector = CrashDetector(configuration: configuration)
        var summary = Summary(source: path == "-" ? "stdin" : path)
        var header: TraceHeader?
        try TraceFile.stream(path: path, onHeader: { header = $0 }) { sample in
            if summary.samples == 0, let header { onStart(header, sample) }
            summary.count(sample.t)
            if let stateEvery, sample.t >= nextState {
                nextState = sample.t + stateEvery
                onState(sample.t, detector.state)
            }
            detector.process(sample) { event in
                switch event {
                case .crashDetected(let t, _): summary.crashes.append(t)
                case .parkedFall(let t, _): summary.parkedFalls.append(t)
                case .sensorFault: summary.faults += 1
                default: break
                }
                onEvent(event)
            }
        }
        summary.header = header
        return summary
    }
}
