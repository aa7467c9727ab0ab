// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RideGuardCore
import SystemPackage

/// Reads trace files in fixed-size chunks, so a trace of any length streams in constant memory.
package enum TraceFile {
    package static let chunkSize = 1 << 20

    /// Streams `path` (or standard input for "-") through a parser, calling `onSample` per sample.
    /// Returns the parser, whose header and sample count describe the trace. Throws `TraceError`.
    @discardableResult
    package static func stream(path: String, onHeader: (TraceHeader) throws -> Void = { _ in },
                              onSample: (IMUSample) throws -> Void) throws -> TraceParser {
        let source = path == "-" ? "stdin" : path
        let fd: Int32
        if path == "-" {
            fd = STDIN_FILENO
        } else {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw TraceError(source: source, line: nil, reason: "cannot open: \(Errno(rawValue: errno))")
            }
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var parser = TraceParser(source: source)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n: Int
            do { n = try FileDescriptor(rawValue: fd).read(into: buffer) } catch {
                throw TraceError(source: source, line: nil, reason: "read failed: \(error)")
            }
            if n == 0 { break }
            try parser.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), onHeader: onHeader, onSample: onSample)
        }
        try parser.finish(onHeader: onHeader, onSample: onSample)
        return parser
    }
}
