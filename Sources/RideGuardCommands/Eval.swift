// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import SystemPackage
import DetectorLab
import RideGuardAgent
import RideGuardCore
import ScenarioSynth

struct Eval: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay labelled traces and score the detector: crashes found, false alarms, latency.",
        discussion: """
            Reads the manifest written by `rideguard synth` (give the file or its folder), or with
            --synth generates the corpus in memory without writing it. Exits 1 when the bar is missed:
            every crash detected, no false alarm, latency after coming to rest within the limits.
            """
    )

    @Argument(help: "manifest.json, or the folder holding it.")
    var manifest: String?

    @Flag(help: "Generate the corpus in memory instead of reading a manifest.")
    var synth = false

    @Option(help: "With --synth: the corpus seed.")
    var seed: UInt64 = 1

    @Option(help: "With --synth: how many traces (by default every scenario five times).")
    var count: Int = 5 * Scenario.allCases.count

    @Option(help: "With --synth: scale the riding before each event.")
    var ridingScale: Double = 1

    @Option(help: "Pass mark: median latency after rest, seconds.")
    var medianLatency: Double = 3

    @Option(help: "Pass mark: maximum latency after rest, seconds.")
    var maxLatency: Double = 6

    @Flag(help: "Print the result as JSON.")
    var json = false

    @Option(help: "Also write the evaluation as an HTML page to this file.")
    var report: String?

    @OptionGroup var detector: DetectorOptions

    func validate() throws {
        if synth == (manifest != nil) { throw ValidationError("give a manifest, or --synth, not both") }
        _ = try detector.configuration()
    }

    func run() throws {
        let configuration = try detector.configuration()
        var evaluation = DetectorEvaluation(configuration: configuration)
        if synth {
            for index in 0..<count {
                let (scenario, traceSeed) = TraceSynthesizer.plan(seed: seed, index: index)
                var label: TraceLabel?
                var detections: [Double] = []
                var parkedFalls: [Double] = []
                var detector = CrashDetector(configuration: configuration)
                label = TraceSynthesizer.generate(scenario, seed: traceSeed, file: "#\(index + 1) seed \(traceSeed)",
                                                  ridingScale: ridingScale) { sample in
                    detector.process(sample) { event in
                        switch event {
                        case .crashDetected(let t, _): detections.append(t)
                        case .parkedFall(let t, _): parkedFalls.append(t)
                        default: break
                        }
                    }
                }
                evaluation.record(.init(label: label!, detections: detections, parkedFalls: parkedFalls))
            }
        } else {
            var path = manifest!
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                path = FilePath(path).appending("manifest.json").string
            }
            let folder = FilePath(path).removingLastComponent().string
            do {
                let loaded = try Manifest.load(path: path)
                for label in loaded.traces {
                    let replay = TraceReplay(configuration: configuration)
                    let summary = try replay.run(path: FilePath(folder).appending(label.file).string) { _ in }
                    evaluation.record(.init(label: label, detections: summary.crashes, parkedFalls: summary.parkedFalls))
                }
            } catch let error as TraceError {
                Output.error(error.description)
                throw ExitCode(2)
            }
        }
        var bar = DetectorEvaluation.Bar()
        bar.medianLatency = medianLatency
        bar.maximumLatency = maxLatency
        Output.line(json ? evaluation.json : evaluation.table)
        if let report {
            try Array(evaluation.html.utf8).withUnsafeBytes { try writeFile(report, $0) }
            if !json { Output.line("report written to \(report)") }
        }
        if !evaluation.passes(bar) {
            if !json { Output.line("FAILED the bar: every crash detected, no false alarm, latency median ≤ \(medianLatency) s, max ≤ \(maxLatency) s") }
            throw ExitCode(1)
        }
        if !json { Output.line("passed: every crash detected, no false alarm, latency median ≤ \(medianLatency) s, max ≤ \(maxLatency) s") }
    }
}
