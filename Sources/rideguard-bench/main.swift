// SPDX-License-Identifier: Apache-2.0
// Benchmarks for the per-sample paths (the crash detector, the trace parser) and the alert's path
// through the database. Run in release: swift run -c release rideguard-bench
import Foundation
import RideGuardCore
import ScenarioSynth
import Storage

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

// The alert's path through the database (queue, claim, mark sent, what
// waits, journal, contacts), on an empty database and on one holding years of history: 200 000
// delivered messages and 1 000 000 journal lines. Issue 28 asks for the second within 1.5× of the first.
func alertPath(history: Bool) -> Double {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-bench-\(UUID().uuidString).sqlite").path
    defer { for suffix in ["", "-journal", "-wal"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    let database = try! RideGuardDatabase(path: path)
    try! database.addContact(name: "Sam", number: "+33612345678", now: 0)
    if history { try! database.addHistory(messages: 200_000, journalLines: 1_000_000) }
    let outbox = database.outbox
    let rounds = 200
    let clock = ContinuousClock()
    let elapsed = clock.measure {
        for round in 0..<rounds {
            let now = 2_000_000_000.0 + Double(round)
            _ = try! database.contactsToAlert()
            let message = outbox.queue(recipient: "+33612345678", kind: .alert, body: "Crash!", now: now)
            database.journal(JournalEntry(.messages, "alert queued"), at: now)
            let claimed = try! outbox.claimNext(now: now)!
            precondition(claimed.id == message.id)
            try! outbox.markSent(claimed.id!, references: [round], now: now)
            precondition(try! outbox.countPending() == 0)
        }
    }
    return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) / Double(rounds) * 1e6
}
let empty = alertPath(history: false), full = alertPath(history: true)
print("alert path through the database: \(DecimalFormat.string(empty, decimals: 0)) µs empty, "
      + "\(DecimalFormat.string(full, decimals: 0)) µs with 200 000 messages and 1 000 000 journal lines (×\(DecimalFormat.string(full / empty, decimals: 2)))")
