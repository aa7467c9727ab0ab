// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RideGuardCore
import SystemPackage

/// A trace file being written: rows are buffered and written out at least every `flushInterval`
/// of trace time, so a power cut loses at most that much.
/// Used by one thread at a time (its owner serializes appends).
package final class TraceFileWriter: @unchecked Sendable {
    package let path: String
    private let fd: Int32
    private let writer: TraceWriter
    private var buffer: [UInt8] = []
    private var lastFlush = -Double.infinity
    package var flushInterval = 1.0
    package private(set) var samplesWritten = 0

    /// `agentOwned`: a file the agent creates in its own folders (crash windows, recordings): created
    /// anew, never through a link and never over an existing file (a member of the rideguard group
    /// could plant a link named for the coming seconds, to have the agent overwrite its database).
    /// Otherwise the path a person gave is created or truncated.
    package init(path: String, hasGyro: Bool, hasSpeed: Bool, metadata: [(key: String, value: String)],
                agentOwned: Bool = false) throws(TraceError) {
        self.path = path
        fd = agentOwned ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o640)
            : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TraceError(source: path, line: nil, reason: "cannot create: \(Errno(rawValue: errno))") }
        writer = TraceWriter(hasGyro: hasGyro, hasSpeed: hasSpeed)
        buffer.reserveCapacity(1 << 20)
        buffer.append(contentsOf: writer.header(metadata: metadata).utf8)
    }

    deinit {
        try? flush()
        close(fd)
    }

    package func append(_ sample: IMUSample) throws(TraceError) {
        writer.appendRow(sample, to: &buffer)
        samplesWritten += 1
        if buffer.count >= 1 << 20 || sample.t - lastFlush >= flushInterval {
            lastFlush = sample.t
            try flush()
        }
    }

    /// Writes out everything buffered.
    package func flush() throws(TraceError) {
        do { try FileDescriptor(rawValue: fd).writeAll(buffer) } catch {
            throw TraceError(source: path, line: nil, reason: "write failed: \(error)")
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
