// SPDX-License-Identifier: Apache-2.0
import Foundation
import Fuzzing

// The fuzz harness for the parsers that take outside input (AT lines, trace CSV, configuration YAML, SMS PDUs).
//
// Built as usual it runs the seeded mutation engine:
//     rideguard-fuzz at|trace|config|pdu [--runs N] [--seed S]
// Built by scripts/fuzz.sh with libFuzzer (-sanitize=fuzzer -DLIBFUZZER), it runs libFuzzer's own
// coverage-guided search, the target named by RIDEGUARD_FUZZ_TARGET.
// Either way it ends with the inputs tried, the properties broken and the slowest input.

/// The time each input takes, and the slow ones (over 100 ms).
final class Timings: @unchecked Sendable {
    var runs = 0
    var slowest = 0.0
    var slowestInput: [UInt8] = []
    var slow = 0

    func time(_ input: [UInt8], _ body: () -> Void) {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        runs += 1
        if seconds > 0.1 { slow += 1 }
        if seconds > slowest {
            slowest = seconds
            slowestInput = input
        }
    }

    func report(_ target: String, broken: Int) -> String {
        let preview = String(decoding: slowestInput.prefix(60), as: UTF8.self).debugDescription
        return "\(target): \(runs) inputs, \(broken) broken, \(slow) over 100 ms, slowest \(String(format: "%.2f", slowest * 1000)) ms (\(slowestInput.count) bytes: \(preview))"
    }
}

#if LIBFUZZER
let timings = Timings()
nonisolated(unsafe) var fuzzTarget = FuzzTarget.trace

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// The executable's entry point (SwiftPM names it after the module), handing over to libFuzzer.
@_cdecl("rideguard_fuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    guard let name = ProcessInfo.processInfo.environment["RIDEGUARD_FUZZ_TARGET"], let target = FuzzTarget(rawValue: name) else {
        FileHandle.standardError.write(Data("set RIDEGUARD_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue))\n".utf8))
        return 2
    }
    fuzzTarget = target
    // The seeds go into the corpus folder libFuzzer starts from.
    if let folder = ProcessInfo.processInfo.environment["RIDEGUARD_FUZZ_SEEDS"] {
        for (index, seed) in target.seeds.enumerated() {
            _ = FileManager.default.createFile(atPath: "\(folder)/seed-\(index)", contents: Data(seed))
        }
    }
    atexit { print("rideguard-fuzz " + timings.report(fuzzTarget.rawValue, broken: 0)) }
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
        let input = Array(UnsafeBufferPointer(start: data, count: size))
        timings.time(input) {
            if let broken = fuzzTarget.check(input) { fatalError("\(fuzzTarget.rawValue): \(broken)") }
        }
        return 0
    }
}
#else
@main struct RideGuardFuzz {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            print("usage: rideguard-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) [--runs N] [--seed S]")
            exit(2)
        }
        func option(_ flag: String, _ fallback: Int) -> Int {
            arguments.firstIndex(of: flag).flatMap { arguments.index(after: $0) < arguments.endIndex ? Int(arguments[arguments.index(after: $0)]) : nil } ?? fallback
        }
        let runs = option("--runs", 100_000), seed = option("--seed", 1)
        var mutator = FuzzMutator(target: target, seed: UInt64(seed))
        let timings = Timings()
        var broken = 0
        for _ in 0..<runs {
            let input = mutator.next()
            timings.time(input) {
                if let problem = target.check(input) {
                    broken += 1
                    if broken <= 10 { print("BROKEN \(problem)\n  input: \(String(decoding: input.prefix(200), as: UTF8.self).debugDescription)") }
                }
            }
        }
        print(timings.report(target.rawValue, broken: broken))
        exit(broken == 0 ? 0 : 1)
    }
}
#endif
