// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc

/// Hands back to the system the agent's code pages that only starting needed.
///
/// Starting runs code that never runs again — the command line, the configuration, the database
/// schema — and the kernel maps code 64 KB or more around every page that runs (fault-around,
/// large page-cache folios): measured, a third of the agent's memory just before its services
/// start is such code. Those pages are clean copies of the binary, so asking the kernel to page
/// them out (`MADV_PAGEOUT`, Linux 5.4) only drops them; the code that keeps running faults its
/// pages back in from the binary, once. Only the binary's read-only mappings are released, never
/// data, so nothing goes to swap. Best effort: an older kernel answers EINVAL and nothing changes.
package enum StartupMemory {
    /// Seconds after the services start by which every part has started.
    package static let settleSeconds = 30.0

    /// Bytes of the binary's read-only mappings handed back (0 when the kernel refused).
    @discardableResult
    package static func release() -> Int {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
              let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return 0 }
        var released = 0
        for line in maps.split(separator: "\n") {
            // start-end perms offset device inode   path (which may hold spaces)
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[5].drop(while: { $0 == " " }) == executable,
                  !fields[1].contains("w") else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                  end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { continue }
            if madvise(address, Int(end - start), MADV_PAGEOUT) == 0 { released += Int(end - start) }
        }
        return released
    }
}
