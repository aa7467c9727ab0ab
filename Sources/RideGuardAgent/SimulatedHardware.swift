import Foundation
import Logging
import RideGuardCore
import SerialModem
import Storage
import Synchronization

/// The modem's twin: says what it would send, and accepts it; says whom it would ring, and lets
/// the call ring out (nobody answers a simulation).
public final class SimulatedTransport: SMSTransport, VoiceCaller {
    let logger: Logger
    let reference = Atomic<Int>(0)

    public init(logger: Logger) {
        self.logger = logger
    }

    public func send(_ text: String, to number: String) async throws(SendError) -> [Int] {
        let body = text.split(separator: "\n").map { "    │ " + $0 }.joined(separator: "\n")
        logger.info("SMS to \(PhoneNumber.mask(number)) (simulated modem):\n\(body)")
        return SMSText(text).parts.map { _ in reference.add(1, ordering: .relaxed).newValue }
    }

    public var canCall: Bool? { true }

    public func call(_ number: String, ringSeconds: Double) async -> CallReport {
        logger.info("calling \(PhoneNumber.mask(number)) (simulated modem): ringing for \(DecimalFormat.string(ringSeconds, decimals: 0)) s")
        do { try await Task.sleep(for: .seconds(ringSeconds)) } catch { return CallReport(.stopped) }
        return CallReport(.notAnswered("no answer in \(DecimalFormat.string(ringSeconds, decimals: 0)) s (simulated)"))
    }
}

/// The IMU's twin: plays a trace file at real time × `speed` on a dedicated thread.
final class TracePlayer: Sendable {
    private final class Flags: Sendable { let running = Atomic<Bool>(true) }
    private let flags = Flags()

    init(path: String, speed: Double, onSample: @escaping @Sendable (IMUSample) -> Void,
         onEnd: @escaping @Sendable (String?) -> Void) {
        let flags = self.flags
        let thread = Thread {
            let start = Date()
            var first: Double?
            do {
                try TraceFile.stream(path: path) { sample in
                    guard flags.running.load(ordering: .acquiring) else { throw CancellationError() }
                    if first == nil { first = sample.t }
                    // Sleep only when 20 ms ahead: batches of samples, like the real sampler's refills,
                    // instead of a wake-up per sample.
                    let due = (sample.t - first!) / speed - Date().timeIntervalSince(start)
                    if due > 0.02 { usleep(useconds_t(due * 1e6)) }
                    onSample(sample)
                }
                onEnd(nil)
            } catch is CancellationError {
                onEnd(nil)
            } catch {
                onEnd("\(error)")
            }
        }
        thread.name = "rideguard-trace-player"
        thread.start()
    }

    func stop() { flags.running.store(false, ordering: .releasing) }
}
