import ArgumentParser
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

    func run() throws {
        let replay = TraceReplay()
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
