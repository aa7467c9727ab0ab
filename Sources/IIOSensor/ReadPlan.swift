// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// One rule for buffer or poll, kept by the sampler across openings of the IMU: a device that has a
/// buffer has it tried, whatever its trigger answers; it is polled when the buffer cannot be enabled
/// (at that opening) or stays empty once enabled (from then on); and when polling fails (no raw
/// channels, the chip gone), the next opening tries the buffer again.
package struct ReadPlan: Equatable, Sendable {
    package enum Step: Equatable {
        case tryBuffer
        case poll(reason: String)
    }

    /// Why the raw channels are polled although the device has a buffer: it stayed empty.
    package private(set) var emptyBuffer: String?

    package init() {}

    /// How to read at this opening; `bufferless` is why the device has no buffer to try (nil when it
    /// has one).
    package func step(bufferless: String?) -> Step {
        if let emptyBuffer { return .poll(reason: emptyBuffer) }
        if let bufferless { return .poll(reason: bufferless) }
        return .tryBuffer
    }

    /// The buffer stayed empty for `seconds` once enabled: the interrupt does not arrive (a loose INT
    /// wire, the overlay's pin wrong) or the driver drops what it reads (6.1's inv_mpu6050 tests an
    /// MPU-6050's data-ready bit in the wrong register). The raw channels may still answer.
    package mutating func bufferStayedEmpty(for seconds: Double) {
        emptyBuffer = "the buffer stayed empty for \(DecimalFormat.string(seconds, decimals: 1)) s: no data-ready interrupt reaches the driver, or the driver drops it"
    }

    /// Polling failed: the next opening tries the buffer again.
    package mutating func pollingFailed() {
        emptyBuffer = nil
    }

    /// Why a chip `name` whose device has no accelerometer scan elements gives no buffer.
    package static func bufferless(chip name: String) -> String {
        name == "adxl345" ? "the adxl345 driver gives no buffer before Linux 6.15"
            : "INT not wired: the driver gives a buffer only with the chip's interrupt line"
    }
}

/// The rate to ask of a driver that did not take the one asked.
package enum SamplingRate {
    /// The slowest rate the driver offers (`available`, as its `*_sampling_frequency_available`
    /// lists them) at or above `asked`, else its fastest: a chip sampling slower than asked would
    /// have its samples read more than once. Nil when it lists none.
    package static func choose(_ asked: Double, available: String) -> Double? {
        let rates = available.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }.filter { $0 > 0 }
        return rates.filter { $0 >= asked * 0.99 }.min() ?? rates.max()
    }

    /// A rate as a driver's sysfs attribute takes it: a whole number without a decimal point (most
    /// drivers parse an integer), else its decimals.
    package static func text(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int64(rate)) : String(rate)
    }
}
