// SPDX-License-Identifier: Apache-2.0
import RideGuardCore
import Storage

/// The file of a recording, used only on the recorder's queue: opened with the first batch (which
/// says whether there is a gyro), written a batch at a time.
final class RecordingFile: @unchecked Sendable {
    let path: String
    private let metadata: [(key: String, value: String)]
    private var writer: TraceFileWriter?
    private var problem: String?

    init(path: String, metadata: [(key: String, value: String)]) {
        self.path = path
        self.metadata = metadata
    }

    func write(_ batch: [IMUSample]) {
        guard problem == nil, let first = batch.first else { return }
        do {
            if writer == nil { writer = try TraceFileWriter(path: path, hasGyro: first.gyro != nil, hasSpeed: true, metadata: metadata, agentOwned: true) }
            for sample in batch { try writer?.append(sample) }
            try writer?.flush()
        } catch {
            problem = "\(error)"
        }
    }

    /// Stops writing, for this reason.
    func fail(_ reason: String) {
        if problem == nil { problem = reason }
    }

    /// What happened, for the journal.
    func close() -> String {
        if let problem { return "recording \(path) stopped: \(problem)" }
        return "recording saved: \(path) (\(writer?.samplesWritten ?? 0) samples)"
    }
}
