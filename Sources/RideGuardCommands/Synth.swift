// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import SystemPackage
import RideGuardAgent
import RideGuardCore
import Storage
import ScenarioSynth

struct Synth: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write labelled synthetic traces (crashes and normal rides) and their manifest.",
        discussion: """
            Each trace is physically consistent: the bike's motion is simulated and the sensor's
            readings derived from it, with a random mounting, range, rate, bias, noise, jitter and gaps.
            Scenarios: \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")).
            """
    )

    @Option(help: "The folder to write the traces and manifest.json into.")
    var out: String

    @Option(help: "The corpus seed: the same seed gives the same traces.")
    var seed: UInt64 = 1

    @Option(help: "How many traces (scenarios in turn).")
    var count: Int = 10

    @Option(help: "Only this scenario (repeatable).")
    var scenario: [Scenario] = []

    @Option(help: "Only these traces of the corpus, by number (1-based, repeatable): reproduces one trace of an evaluation.")
    var index: [Int] = []

    @Option(help: "Sample at this rate (Hz) instead of one drawn per trace (100 to 1000 are realistic).")
    var rate: Double?

    @Option(help: "Scale the riding before each event (below 1 for short traces).")
    var ridingScale: Double = 1

    func validate() throws {
        guard count > 0 else { throw ValidationError("--count must be at least 1") }
        if let rate, !(rate >= 10 && rate <= 5000) { throw ValidationError("--rate must be between 10 and 5000 Hz") }
        if let bad = index.first(where: { $0 < 1 }) { throw ValidationError("--index \(bad): trace numbers start at 1") }
        guard ridingScale > 0 && ridingScale <= 10 else { throw ValidationError("--riding-scale must be in (0, 10]") }
    }

    func run() throws {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        var labels: [TraceLabel] = []
        let total = max(count, index.max() ?? 0)
        for index in 0..<total where self.index.isEmpty ? index < count : self.index.contains(index + 1) {
            var (kind, traceSeed) = TraceSynthesizer.plan(seed: seed, index: index)
            if !scenario.isEmpty { kind = scenario[index % scenario.count] }
            let number = String(index + 1)
            let name = String(repeating: "0", count: max(0, 4 - number.count)) + number + "-\(kind.rawValue).csv"
            let path = FilePath(out).appending(name).string
            let facts = SensorFacts(seed: traceSeed, scenario: kind, rate: rate)
            let writer = try TraceFileWriter(
                path: path, hasGyro: facts.gyro, hasSpeed: facts.speedColumn,
                metadata: [("rate_hz", String(Int(facts.rateHz))), ("range_g", String(Int(facts.rangeG))),
                           ("source", "rideguard synth, seed \(traceSeed)"), ("scenario", kind.rawValue)])
            var failure: Error?
            let label = TraceSynthesizer.generate(kind, seed: traceSeed, file: name, ridingScale: ridingScale, rate: rate) { sample in
                guard failure == nil else { return }
                do { try writer.append(sample) } catch { failure = error }
            }
            if let failure { throw failure }
            try writer.flush()
            labels.append(label)
            Output.line("\(name): \(kind.rawValue), \(Int(label.duration)) s at \(Int(label.rateHz)) Hz\(label.gyro ? "" : ", no gyro")")
        }
        let manifest = Manifest(seed: seed, traces: labels)
        try manifest.write(path: FilePath(out).appending("manifest.json").string)
        let hours = labels.map(\.ridingSeconds).reduce(0, +) / 3600
        Output.line("wrote \(labels.count) traces with \(DecimalFormat.string(hours, decimals: 2)) hours of riding to \(out)")
    }
}

extension Scenario: ExpressibleByArgument {}
