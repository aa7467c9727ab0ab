// SPDX-License-Identifier: Apache-2.0

/// The rate over windows of sample time (5 s in the agent: long enough that a burst or a late read
/// is not taken for the rate): says whether the first window of an opening runs more than 20 % away
/// from the nominal rate or within it, and after that each time it crosses.
package struct RateWindow {
    package enum Change: Equatable {
        case off(Double)
        case normal(Double)
    }

    package let nominal: Double
    /// The window's length, seconds of sample time.
    package let seconds: Double
    private var start = Double.nan, count = 0
    /// Whether the last window was off; nil before the first.
    private var wasOff: Bool?

    package init(nominal: Double, seconds: Double) {
        self.nominal = nominal
        self.seconds = seconds
    }

    /// A sample at `t`; the measured rate when a window ends that says something new.
    package mutating func add(_ t: Double) -> Change? {
        if start.isNaN { start = t }
        count += 1
        guard t - start >= seconds else { return nil }
        let measured = Double(count - 1) / (t - start)
        let off = abs(measured / nominal - 1) > 0.2
        defer {
            wasOff = off
            start = t
            count = 1
        }
        guard off != wasOff else { return nil }
        return off ? .off(measured) : .normal(measured)
    }

    /// The event for a change.
    package func event(_ change: Change) -> SamplerEvent {
        switch change {
        case .off(let measured): .rateOff(measured: measured, nominal: nominal)
        case .normal(let measured): .rateNormal(measured: measured, nominal: nominal)
        }
    }
}

/// When a polled read is due: one period after the last one was due, or at once when that time has
/// passed (a late read is not made up for by reading faster after it).
package struct PollPacing {
    private let period: Double
    private var due: Double

    /// The first read is due at `start`.
    package init(rate: Double, start: Double) {
        period = 1 / rate
        due = start
    }

    /// After a read that ended at `now`: how long to wait for the next, seconds (0: at once).
    package mutating func wait(now: Double) -> Double {
        due = max(due + period, now)
        return due - now
    }
}
