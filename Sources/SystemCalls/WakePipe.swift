// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Seconds on the monotonic clock: for timeouts and intervals, which a wall clock set back (a Pi
/// without RTC, corrected by NTP) must not stretch or cut.
package func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Wakes a thread that sleeps in poll(2): the thread polls `readEnd` beside its own descriptors,
/// another thread calls `wake()`. Both ends close with it.
package final class WakePipe: Sendable {
    /// What the sleeping thread polls (POLLIN once woken); -1 when the pipe could not be made
    /// (poll then ignores it, and `wake()` does nothing).
    package let readEnd: Int32
    private let writeEnd: Int32

    package init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// Never blocks: a pipe already full is awake already.
    package func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }
}
