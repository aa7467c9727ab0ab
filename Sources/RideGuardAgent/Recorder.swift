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

/// Recordings asked for with `rideguard ctl record`: the sampler hands each sample over, a second of
/// them at a time goes to a file on the recorder's own queue, so the agent goes on protecting while
/// it records and a slow SD card never holds the sampler.
///
/// Any member of the `rideguard` group may ask for one, so they are bounded: one at a time, 2 h at
/// most, `maximumRecordings` files and `folderBudgetBytes` in the folder, and never so much that
/// the card would keep less than `keepFree` of its space (the alert's database needs room): a
/// recording that would is refused, one running is stopped when the card gets there.
final class Recorder: Sendable {
    struct Refused: Error {
        var reason: String
    }

    static let maximumSeconds = 7200.0
    static let maximumRecordings = 100
    static let folderBudgetBytes: UInt64 = 2 << 30
    /// Bytes a row takes in a recording, at most (time, six axes, speed).
    static let bytesPerSample: UInt64 = 80

    /// What the card keeps free: 256 MiB, or a tenth of a smaller filesystem.
    static func keepFree(_ size: UInt64) -> UInt64 { min(256 << 20, size / 10) }

    private struct Recording {
        var file: RecordingFile
        var seconds: Double
        var until = Double.nan
        var nextHandoff = -Double.infinity
        var batch: [IMUSample] = []
    }

    private let recording = Mutex<Recording?>(nil)
    /// Whether `recording` holds one: checked per sample without taking the lock; changed only under it.
    private let active = Atomic<Bool>(false)
    private let files = DispatchQueue(label: "rideguard.recordings")
    private let folder: String
    private let rateHz: Double
    private let database: RideGuardDatabase
    private let clock: any ServiceClock
    private let logger: Logger

    /// Recordings go to `folder`; `rateHz` is written in their header.
    init(folder: String, rateHz: Double, database: RideGuardDatabase, clock: any ServiceClock, logger: Logger) {
        self.folder = folder
        self.rateHz = rateHz
        self.database = database
        self.clock = clock
        self.logger = logger
    }

    /// Starts a recording of `seconds` named `name` (`.csv` added); returns its path.
    func start(name: String, seconds: Double) -> Result<String, Refused> {
        guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }), !name.hasPrefix(".") else {
            return .failure(Refused(reason: "a recording's name is letters, digits, '-', '_' and '.', e.g. ride-2026-11-22"))
        }
        guard seconds > 0 && seconds <= Self.maximumSeconds else { return .failure(Refused(reason: "a recording lasts 1 s to 2 h")) }
        let path = FilePath(folder).appending(name.hasSuffix(".csv") ? name : name + ".csv").string
        guard !FileManager.default.fileExists(atPath: path) else { return .failure(Refused(reason: "\(path) exists already")) }
        do { try PrivateFiles.createFolder(folder) } catch {
            return .failure(Refused(reason: "cannot create \(folder): \(error)"))
        }
        if let refusal = roomProblem(forSeconds: seconds) { return .failure(Refused(reason: refusal)) }
        let file = RecordingFile(path: path, metadata: [
            ("rate_hz", String(Int(rateHz))), ("source", "rideguard run (ctl record)"),
            ("recorded", Times.iso8601(Date().timeIntervalSince1970)),
        ])
        let started = recording.withLock { r -> Bool in
            guard r == nil else { return false }
            r = Recording(file: file, seconds: seconds)
            active.store(true, ordering: .relaxed)
            return true
        }
        guard started else { return .failure(Refused(reason: "a recording is already running (rideguard ctl record --stop)")) }
        logger.info("recording \(Int(seconds)) s of the IMU to \(path)")
        return .success(path)
    }

    /// Why a recording of `seconds` would not fit, if it would not.
    func roomProblem(forSeconds seconds: Double) -> String? {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".csv") }
        if files.count >= Self.maximumRecordings {
            return "\(files.count) recordings in \(folder) already, the most it keeps: delete old ones first"
        }
        let used = files.reduce(UInt64(0)) { sum, name in
            var info = stat()
            return sum + (lstat(FilePath(folder).appending(name).string, &info) == 0 ? UInt64(info.st_size) : 0)
        }
        let needed = UInt64(seconds * max(rateHz, 1)) * Self.bytesPerSample
        let mib = { (bytes: UInt64) in "\(bytes >> 20) MiB" }
        if used + needed > Self.folderBudgetBytes {
            return "the recordings in \(folder) take \(mib(used)); this one needs up to \(mib(needed)), over the \(mib(Self.folderBudgetBytes)) they may take: delete old ones or record less"
        }
        guard let (free, keep) = Self.space(folder) else { return nil }
        if free < needed + keep {
            return "the card has \(mib(free)) free; this recording needs up to \(mib(needed)) and \(mib(keep)) stay free for the alerts: record less, or free space"
        }
        return nil
    }

    /// Free bytes for the service's user, and what to keep free, on `folder`'s filesystem.
    static func space(_ folder: String) -> (free: UInt64, keep: UInt64)? {
        var disk = statvfs()
        guard statvfs(folder, &disk) == 0 else { return nil }
        return (UInt64(disk.f_bavail) * UInt64(disk.f_frsize), keepFree(UInt64(disk.f_blocks) * UInt64(disk.f_frsize)))
    }

    /// On the sampler's thread: one sample into the recording, if any, with its GPS speed (the
    /// `speed_mps` column). Once a second (trace time) the batch goes to the queue; no I/O here.
    func record(_ sample: IMUSample) {
        guard active.load(ordering: .relaxed) else { return }
        let handoff = recording.withLock { r -> (batch: [IMUSample], file: RecordingFile, last: Bool)? in
            guard var current = r else { return nil }
            if current.until.isNaN { current.until = sample.t + current.seconds }
            current.batch.append(sample)
            let last = sample.t >= current.until
            guard last || sample.t >= current.nextHandoff else {
                r = current
                return nil
            }
            let batch = current.batch
            current.batch.removeAll(keepingCapacity: true)
            current.nextHandoff = sample.t + 1
            r = last ? nil : current
            if last { active.store(false, ordering: .relaxed) }
            return (batch, current.file, last)
        }
        guard let handoff else { return }
        files.async { [self] in
            handoff.file.write(handoff.batch)
            if handoff.last { return finished(handoff.file) }
            // The card reached what it keeps free for the alerts: the recording ends here.
            if let (free, keep) = Self.space(folder), free < keep {
                logger.warning("recording \(handoff.file.path): the card has \(free >> 20) MiB free, it keeps \(keep >> 20) MiB: stopping")
                handoff.file.fail("the card has \(free >> 20) MiB free and keeps \(keep >> 20) MiB for the alerts")
                stop()
            }
        }
    }

    /// Ends the recording: what is collected is written, and the journal says where it is. Returns
    /// its path, or nil when none was running.
    @discardableResult
    func stop() -> String? {
        guard let current = recording.withLock({ r -> Recording? in
            defer {
                r = nil
                active.store(false, ordering: .relaxed)
            }
            return r
        }) else { return nil }
        files.async { [self] in
            current.file.write(current.batch)
            finished(current.file)
        }
        return current.file.path
    }

    /// Returns once everything handed over is written.
    func flush() {
        files.sync {}
    }

    /// On `files`.
    private func finished(_ file: RecordingFile) {
        let text = file.close()
        logger.info("\(text)")
        database.journal(JournalEntry(.system, text), at: clock.now())
    }
}
