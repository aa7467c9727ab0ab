// SPDX-License-Identifier: Apache-2.0
/// How long to wait before trying again: `first`, doubled after each failure up to `limit`, and
/// `first` again after a success. The one retry schedule of every adapter and service that
/// reconnects (the IMU, the button, gpsd, the broker, Traccar, a supervised service, the calls'
/// contacts, the outbox, queueing an alert).
package struct Backoff: Sendable, Equatable {
    package let first: Double
    package let limit: Double
    /// The wait before the next try, seconds.
    package private(set) var delay: Double

    package init(first: Double, limit: Double) {
        self.first = first
        self.limit = limit
        delay = first
    }

    /// The wait before the next try; the one after it is twice as long, up to `limit`.
    package mutating func next() -> Double {
        defer { delay = min(limit, delay * 2) }
        return delay
    }

    /// A try succeeded: the next failure waits `first` again.
    package mutating func reset() {
        delay = first
    }

    /// The wait after `failures` failures in a row (1: `first`), for a schedule kept as a count
    /// (read from a database, so any number: it stops doubling at the limit).
    package func delay(afterFailures failures: Int) -> Double {
        var wait = first, doubled = 1
        while doubled < failures && wait < limit {
            wait *= 2
            doubled += 1
        }
        return min(limit, wait)
    }
}
