// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import RideGuardCore

/// Inputs from the world that once silenced the alert: one corrupt sample, a receiver's far date.
@Suite struct RobustInputTests {
    /// One sample of 1e308 (or inf, NaN, a time a century ahead) is dropped and reported; the
    /// lowside after it is still found.
    @Test(arguments: [Vector3(1e308, 0, 9.8), Vector3(.infinity, 0, 0), Vector3(0, .nan, 9.8), Vector3(0, 0, 50_000)])
    func aNonPhysicalSampleIsDroppedAndTheNextCrashFound(bad: Vector3) {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 40)
        feeder.detector.process(IMUSample(t: feeder.t, accel: bad, gyro: nil, speed: nil)) { feeder.events.append($0) }
        feeder.detector.process(IMUSample(t: feeder.t + 3e9, accel: rolled(0), gyro: nil, speed: .infinity)) { feeder.events.append($0) }
        feeder.t += 0.005
        ride(&feeder, seconds: 10)
        feeder.feed(1) { t in rolled(1.45 * min(1, t - 50)) }
        feeder.feed(8) { _ in rolled(1.45) }
        let faults = feeder.events.compactMap { if case .sensorFault(_, .nonPhysical(let n)) = $0 { n } else { nil } }
        #expect(faults == [1, 1] || faults == [2] || faults == [1], "\(faults)")
        #expect(feeder.crashes.count == 1, "the lowside after a corrupt sample was missed")
        #expect(feeder.crashes.first.map { $0.evidence.peakG < 10 } == true, "the corrupt sample counted as an impact")
    }

    /// A flood of corrupt samples is reported at most once a second, with a count.
    @Test func aFloodIsReportedOnceASecond() {
        var detector = CrashDetector()
        var reports: [Int] = []
        for i in 0..<2000 {
            detector.process(IMUSample(t: Double(i) * 0.001, accel: Vector3(.nan, 0, 0), gyro: nil, speed: nil)) { event in
                if case .sensorFault(_, .nonPhysical(let n)) = event { reports.append(n) }
            }
        }
        #expect(reports.count <= 3 && reports.first == 1, "\(reports)")
    }

    /// A receiver reporting 2999 (a GPS week-number rollover) must not freeze the position: fixes
    /// are kept in the order they arrive.
    @Test func aFixFromTheFutureDoesNotBlockTheNext() {
        var store = LocationStore()
        store.update(Fix(time: 32_503_680_000, latitude: 45.1, longitude: 5.7))
        store.update(Fix(time: 1_795_000_000, latitude: 45.2, longitude: 5.8))
        #expect(store.lastFix?.latitude == 45.2)
        #expect(store.track.count == 1)
    }

    /// gpsd's address, read once for the configuration, the agent, doctor, location and record
    /// (issue 42, point 4: four parsers agreed on less than this; `host:abc` passed the configuration).
    @Test func aGPSDAddressIsHostAndAPort() {
        #expect(GPSDAddress("127.0.0.1:2947") == GPSDAddress("127.0.0.1:2947") && GPSDAddress("127.0.0.1:2947")?.port == 2947)
        #expect(GPSDAddress("[::1]:2947")?.host == "[::1]")
        #expect(GPSDAddress("gpsd.local:2948")?.description == "gpsd.local:2948")
        for bad in ["gpsd", ":2947", "host:0", "host:65536", "host:abc", "host:"] { #expect(GPSDAddress(bad) == nil, "\(bad)") }
        var configuration = AgentConfiguration()
        configuration.gps.gpsd = "localhost:abc"
        #expect(configuration.validationErrors().contains { $0.key == "gps.gpsd" }, "\(configuration.validationErrors())")
    }
}
