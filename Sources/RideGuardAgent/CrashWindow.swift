// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import SystemCalls
import SystemPackage
import Logging
import RideGuardCore
import Storage
import Synchronization
import SystemTime

/// The last minute of samples, and the trace around a crash: 30 s before and 30 s after, saved to
/// the `traces` folder on its own queue (never on the sampler's thread) and named in the journal.
final class CrashWindow: Sendable {
    private let ring: Mutex<SampleRing>
    /// The crash whose window waits for its 30 s after.
    private let pending = Mutex<Double?>(nil)
    private let files = DispatchQueue(label: "rideguard.crash-traces")
    private let folder: String
    private let database: RideGuardDatabase
    private let clock: any ServiceClock
    private let logger: Logger

    init(folder: String, rateHz: Double, database: RideGuardDatabase, clock: any ServiceClock, logger: Logger) {
        ring = Mutex(SampleRing(seconds: 60, rateHz: max(rateHz, 1000)))
        self.folder = folder
        self.database = database
        self.clock = clock
        self.logger = logger
    }

    /// On the sampler's thread: keeps the sample; 30 s after a crash, hands its window over.
    func append(_ sample: IMUSample) {
        ring.withLock { $0.append(sample) }
        guard let crashAt = pending.withLock({ $0 }), sample.t >= crashAt + 30 else { return }
        save(around: crashAt)
    }

    func crashDetected(at t: Double) {
        pending.withLock { $0 = t }
    }

    /// The stream ended (or the agent stops) before 30 s after a crash: saves what there is, and
    /// returns once every window is written.
    func flush() {
        if let crashAt = pending.withLock({ $0 }) { save(around: crashAt) }
        files.sync {}
    }

    private func save(around crashAt: Double) {
        pending.withLock { $0 = nil }
        let window = ring.withLock { $0.window(from: crashAt - 30, to: crashAt + 30) }
        files.async { self.write(window, crashAt: crashAt) }
    }

    private func write(_ samples: [IMUSample], crashAt: Double) {
        try? PrivateFiles.createFolder(folder)
        let stamp = String(Times.iso8601(Date().timeIntervalSince1970).map { $0 == ":" ? "-" : $0 })
        let path = FilePath(folder).appending("crash-\(stamp).csv").string
        var created = false
        do {
            let writer = try TraceFileWriter(path: path, hasGyro: samples.first?.gyro != nil, hasSpeed: false,
                                             metadata: [("source", "rideguard run: 30 s before and after the crash at \(crashAt) s")],
                                             agentOwned: true)
            created = true
            for sample in samples { try writer.append(sample) }
            try writer.flush()
            database.journal(JournalEntry(.detections, "saved the trace around the crash: \(path)"), at: clock.now())
        } catch {
            // A full card leaves no empty or cut trace behind to be taken for a recording.
            if created { unlink(path) }
            logger.error("could not save the trace around the crash: \(error)")
            database.journal(JournalEntry(.detections, "the trace around the crash could not be saved: \(error)"), at: clock.now())
        }
    }
}
