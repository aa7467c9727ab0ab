// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

@Suite struct SpeedSnapshotTests {
    @Test func aFixsSpeedIsFreshForThreeSeconds() {
        let speeds = SpeedSnapshot()
        #expect(speeds.fresh(at: 1_800_000_000) == nil)
        speeds.store(12.5, at: 1_800_000_000)
        #expect(speeds.fresh(at: 1_800_000_000.05) == 12.5)
        #expect(speeds.fresh(at: 1_800_000_002.9) == 12.5)
        #expect(speeds.fresh(at: 1_800_000_003.1) == nil)
        // A clock that stepped back sees nothing fresh rather than a speed from the future.
        #expect(speeds.fresh(at: 1_799_999_990) == nil)
        speeds.store(.nan, at: 1_800_000_004)
        #expect(speeds.fresh(at: 1_800_000_004) == nil)
        speeds.store(0, at: 1_800_000_005)
        #expect(speeds.fresh(at: 1_800_000_005.5) == 0)
    }
}
