// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// The one place where a system call that a signal interrupted (EINTR) is made again. Reads and
/// writes go through swift-system's `FileDescriptor`, which does the same for them; the calls it
/// does not wrap (poll, accept) come here. A failure is the call's `Errno`.
package func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) throws(Errno) -> Result {
    while true {
        let result = call()
        if result >= 0 { return result }
        let code = Errno(rawValue: errno)
        guard code == .interrupted else { throw code }
    }
}

/// poll(2): how many of `descriptors` are ready within `milliseconds` (-1: no limit), 0 when the
/// time is up. An interrupted poll starts again with the whole time: callers with a deadline pass
/// what is left of it.
package func poll(_ descriptors: inout [pollfd], milliseconds: Int) throws(Errno) -> Int {
    Int(try retryingInterrupts { Glibc.poll(&descriptors, nfds_t(descriptors.count), Int32(clamping: milliseconds)) })
}

/// Everything left to read from `file`, up to its end.
package func readToEnd(_ file: FileDescriptor) throws(Errno) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n: Int
        do { n = try chunk.withUnsafeMutableBytes { try file.read(into: $0) } } catch { throw error as! Errno }
        if n == 0 { return bytes }
        bytes += chunk[0..<n]
    }
}
