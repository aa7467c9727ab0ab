// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import DetectorLab
import RideGuardAgent
import RideGuardCore

struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the crash detector over a recorded trace and print what it decides.",
        discussion: """
            Reads trace CSV v1 (a file, or - for standard input) and prints one line per event.
            With --json, one JSON object per line, each with "event" and "t" (trace seconds).
            Exits 0 whether or not a crash was found, non-zero when the trace cannot be read.
            """
    )

    @Argument(help: "The trace file, or - for standard input.")
    var trace: String

    @Flag(help: "Print JSON Lines instead of text.")
    var json = false

    @Option(help: "Also print the detector's state every this many seconds of trace time (phase, posture, stillness).")
    var stateEvery: Double?

    @Option(help: "Write a self-contained HTML report (charts, detector state, events) to this file.")
    var report: String?

    @OptionGroup var detector: DetectorOptions

    func validate() throws {
        if let stateEvery, stateEvery <= 0 { throw ValidationError("--state-every must be positive") }
        _ = try detector.configuration()
    }

    func run() throws {
        if let report {
            do {
                let built = try TraceReport.build(path: trace, configuration: try detector.configuration())
                let html = ReportHTML.render(built, configuration: try detector.configuration())
                try Array(html.utf8).withUnsafeBytes { bytes in
                    try writeFile(report, bytes)
                }
                Output.line("\(report): \(html.utf8.count / 1024) KB, \(built.summary.humanLine)")
                return
            } catch let error as TraceError {
                Output.error(error.description)
                throw ExitCode(2)
            }
        }
        let replay = TraceReplay(configuration: try detector.configuration())
        do {
            let summary = try replay.run(path: trace, onStart: { header, first in
                if json {
                    var line = JSONLine(event: "trace_start", t: first.t)
                    line.add("source", trace == "-" ? "stdin" : trace)
                    if let rate = header.rateHz { line.add("rate_hz", rate, decimals: 1) }
                    line.add("gyro", header.hasGyro)
                    line.add("speed", header.hasSpeed)
                    Output.line(line.text)
                } else {
                    let rate = header.rateHz.map { " at \(DecimalFormat.string($0, decimals: 0)) Hz" } ?? ""
                    let sensors = header.hasGyro ? "accelerometer and gyro" : "accelerometer only"
                    Output.line("\(trace == "-" ? "stdin" : trace): \(sensors)\(rate)")
                }
            }, stateEvery: stateEvery, onState: { t, state in
                var line = JSONLine(event: "state", t: t)
                line.add("phase", state.phase.rawValue)
                line.add("posture_deg", state.postureDegrees, decimals: 1)
                line.add("smoothed_g", state.smoothedG, decimals: 3)
                line.add("still_s", state.stillSeconds, decimals: 2)
                line.add("forward_known", state.forwardKnown)
                line.add("context", state.context.rawValue)
                line.add("upright_confirmed", state.uprightConfirmed)
                Output.line(json ? line.text : "\(DecimalFormat.string(t, decimals: 3)) s  \(state.phase.rawValue)  \(state.context.rawValue)  posture \(DecimalFormat.string(state.postureDegrees, decimals: 0))°  \(DecimalFormat.string(state.smoothedG, decimals: 2)) g  still \(DecimalFormat.string(state.stillSeconds, decimals: 1)) s\(state.uprightConfirmed ? "" : "  (upright not confirmed)")")
            }, onEvent: { event in
                Output.line(json ? event.jsonLine : event.humanLine)
            })
            Output.line(json ? summary.jsonLine : summary.humanLine)
            Output.flush()
        } catch let error as TraceError {
            Output.error(error.description)
            throw ExitCode(2)
        }
    }
}
