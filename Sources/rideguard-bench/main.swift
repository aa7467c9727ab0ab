// Benchmarks for the per-sample paths: the crash detector and the trace parser.
// Run in release: swift run -c release rideguard-bench
import RideGuardCore
import ScenarioSynth

func measure(_ label: String, count: Int, repeats: Int = 5, _ body: () -> Void) {
    var best = Duration.seconds(1_000_000)
    let clock = ContinuousClock()
    for _ in 0..<repeats {
        let elapsed = clock.measure(body)
        best = min(best, elapsed)
    }
    let seconds = Double(best.components.seconds) + Double(best.components.attoseconds) / 1e18
    let perItem = seconds / Double(count) * 1e9
    print("\(label): \(DecimalFormat.string(perItem, decimals: 1)) ns per sample, "
          + "\(DecimalFormat.string(Double(count) / seconds / 1e6, decimals: 2)) M samples/s (best of \(repeats))")
}

// Ten minutes of riding and a crash, with gyro, at 1 kHz, generated once.
var samples: [IMUSample] = []
for (index, scenario) in [Scenario.hardRide, .lowside, .roughRoad].enumerated() {
    let offset = samples.last?.t ?? 0
    _ = TraceSynthesizer.generate(scenario, seed: UInt64(100 + index), ridingScale: 0.5, rate: 1000) { sample in
        var shifted = sample
        shifted.t += offset + 1
        samples.append(shifted)
    }
}
print("\(samples.count) samples (\(DecimalFormat.string(samples.last!.t / 60, decimals: 1)) min at 1 kHz)")

var crashes = 0
measure("CrashDetector.process", count: samples.count) {
    var detector = CrashDetector()
    for sample in samples {
        detector.process(sample) { event in
            if case .crashDetected = event { crashes += 1 }
        }
    }
}
precondition(crashes > 0, "the benchmark trace should contain a detected crash")

// The same samples as trace CSV v1 text, parsed from memory in 1 MiB chunks.
let writer = TraceWriter(hasGyro: true, hasSpeed: false)
var text = Array(writer.header(metadata: [("rate_hz", "1000")]).utf8)
for sample in samples { writer.appendRow(sample, to: &text) }
var parsed = 0
measure("TraceParser.feed", count: samples.count) {
    var parser = TraceParser(source: "memory")
    text.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + (1 << 20))
            try! parser.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) { _ in parsed += 1 }
            offset = end
        }
    }
    try! parser.finish { _ in parsed += 1 }
}
measure("TraceWriter.appendRow", count: samples.count, repeats: 3) {
    var out: [UInt8] = []
    out.reserveCapacity(text.count)
    for sample in samples { writer.appendRow(sample, to: &out) }
}
