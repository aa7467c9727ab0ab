// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import SystemPackage
import Testing
import RideGuardCore

/// The one place a system call interrupted by a signal is made again.
@Suite struct SystemCallsTests {
    @Test func anInterruptedCallIsMadeAgainAndAnotherErrorIsThrown() throws {
        var calls = 0
        let result = try retryingInterrupts { () -> Int32 in
            calls += 1
            guard calls == 3 else { errno = EINTR; return -1 }
            return 7
        }
        #expect(result == 7 && calls == 3)
        #expect(throws: Errno.badFileDescriptor) {
            try retryingInterrupts { () -> Int32 in errno = EBADF; return -1 }
        }
    }

    @Test func pollSaysWhenTimeIsUpAndWhenADescriptorIsReady() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        var descriptors = [pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)]
        #expect(try poll(&descriptors, milliseconds: 10) == 0)
        var byte: UInt8 = 1
        #expect(write(ends[1], &byte, 1) == 1)
        #expect(try poll(&descriptors, milliseconds: 1000) == 1)
    }

    /// The one wake pipe: a poll on its read end sleeps until `wake()`, from another thread; a wake
    /// never blocks, however many come before anybody reads.
    /// The one retry schedule: first, doubled after each failure up to the limit, first again after
    /// a success; and the same schedule read from a count of failures.
    @Test func backoffDoublesToItsLimitAndStartsOverAfterASuccess() {
        var backoff = Backoff(first: 0.5, limit: 30)
        #expect((0..<9).map { _ in backoff.next() } == [0.5, 1, 2, 4, 8, 16, 30, 30, 30])
        backoff.reset()
        #expect(backoff.delay == 0.5 && backoff.next() == 0.5 && backoff.delay == 1)
        let counted = Backoff(first: 5, limit: 300)
        #expect([0, 1, 2, 3, 7, 100].map { counted.delay(afterFailures: $0) } == [5, 5, 10, 20, 300, 300])
        #expect(Backoff(first: 1, limit: 30).delay(afterFailures: 6) == 30)
        // A count read from a damaged row: answered at once, not after Int.max doublings.
        #expect(counted.delay(afterFailures: .max) == 300 && counted.delay(afterFailures: -5) == 5)
    }

    @Test func aWakePipeWakesAPollAndNeverBlocks() throws {
        let pipe = WakePipe()
        #expect(pipe.readEnd >= 0)
        var quiet = [pollfd(fd: pipe.readEnd, events: Int16(POLLIN), revents: 0)]
        #expect(try poll(&quiet, milliseconds: 10) == 0)
        let started = monotonicSeconds()
        startThread("test-waker") { usleep(50_000); pipe.wake() }
        var woken = [pollfd(fd: pipe.readEnd, events: Int16(POLLIN), revents: 0)]
        #expect(try poll(&woken, milliseconds: 5_000) == 1)
        #expect(monotonicSeconds() - started >= 0.04)
        for _ in 0..<100_000 { pipe.wake() }          // past the pipe's 64 KiB: still returns
    }
}
