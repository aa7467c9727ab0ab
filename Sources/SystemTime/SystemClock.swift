// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import RideGuardCore

/// The system clock. Sleeps are measured on the monotonic clock, so a wall-clock step (NTP after
/// boot on a Pi without a real-time clock) does not stretch or cut a countdown already running.
package struct SystemServiceClock: ServiceClock {
    package init() {}

    package func now() -> Double { Date().timeIntervalSince1970 }

    package func sleep(until deadline: Double) async throws {
        let seconds = deadline - now()
        if seconds > 0 { try await Task.sleep(for: .seconds(seconds)) }
        try Task.checkCancellation()
    }
}
