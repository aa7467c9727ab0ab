// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import RideGuardCore

/// The hours around a ride: a parked bike, the ignition, a start with the bike lying.
@Suite struct BikeContextTests {
    /// A fall from upright to `roll` over about a second with the gyro turning, then lying there.
    func fall(_ feeder: inout SignalFeeder, to roll: Double, lying seconds: Double) {
        let start = feeder.t
        feeder.feed(0.8, gyro: Vector3(-roll / 0.8, 0, 0)) { t in rolled(roll * (t - start) / 0.8) }
        feeder.feed(seconds) { _ in rolled(roll) }
    }

    var parkedFalls: (SignalFeeder) -> [Double] {
        { $0.events.compactMap { if case .parkedFall(let t, _) = $0 { t } else { nil } } }
    }

    @Test func aParkedBikeThatFallsIsAParkedFallNeverACrash() {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 40)
        feeder.feed(60) { t in vibrating(rolled(-0.2), t) }              // on the side stand, engine idling
        #expect(feeder.detector.context != .parked, "an idling engine is someone about")
        feeder.feed(250) { _ in rolled(-0.2) }                           // switched off, left
        #expect(feeder.detector.context == .parked)
        fall(&feeder, to: 1.45, lying: 20)
        #expect(feeder.crashes.isEmpty)
        #expect(parkedFalls(feeder).count == 1)
        #expect(feeder.detector.state.phase == .lying)
    }

    @Test func aBikeLaidDownSlowlyIsNeitherACrashNorAFall() {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 40)
        feeder.feed(250) { _ in rolled(-0.2) }
        let start = feeder.t
        feeder.feed(6, gyro: Vector3(-1.3 / 6, 0, 0)) { t in rolled(-0.2 + (1.5 - -0.2) * (t - start) / 6) }
        feeder.feed(30) { _ in rolled(1.5) }
        #expect(feeder.crashes.isEmpty && parkedFalls(feeder).isEmpty)
    }

    /// Accelerometer only, no landing shock: how fast the posture left upright decides. Tipped over
    /// in 0.4 s it fell; lowered over 4 s a person laid it down.
    @Test(arguments: [(0.4, 1), (4.0, 0)])
    func withoutAGyroThePostureSpeedTellsAFallFromALayingDown(seconds: Double, falls: Int) {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 40)
        feeder.feed(250) { _ in rolled(-0.2) }
        #expect(feeder.detector.context == .parked)
        let start = feeder.t
        feeder.feed(seconds) { t in rolled(-0.2 + 1.65 * (t - start) / seconds) }
        feeder.feed(20) { _ in rolled(1.45) }
        #expect(feeder.crashes.isEmpty)
        #expect(parkedFalls(feeder).count == falls)
    }

    @Test func aStopAtLightsIsNotParked() {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 40)
        feeder.feed(90) { _ in rolled(0.05) }                              // engine off at a long light
        #expect(feeder.detector.context == .stopped)
        fall(&feeder, to: 1.45, lying: 5)
        #expect(feeder.crashes.count == 1, "a tip-over at a stop is a crash")
    }

    @Test func theIgnitionOffParksAtOnceAndOnEndsIt() {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 40)
        feeder.detector.setIgnition(false)
        feeder.feed(5) { t in vibrating(rolled(-0.2), t) }
        #expect(feeder.detector.context == .parked)
        fall(&feeder, to: -1.4, lying: 5)
        #expect(feeder.crashes.isEmpty && parkedFalls(feeder).count == 1)
        feeder.feed(12) { _ in rolled(0) }                                 // lifted
        feeder.detector.setIgnition(true)
        #expect(feeder.detector.context != .parked)
        ride(&feeder, seconds: 30)
        fall(&feeder, to: 1.45, lying: 5)
        #expect(feeder.crashes.count == 1)
    }

    /// Started lying: the reference learned is the lying bike's. Lifting it is no crash; riding
    /// replaces the reference, and a crash later in that ride is found.
    @Test func aStartLyingNeitherAlarmsAtTheLiftNorLeavesTheRideUnprotected() {
        var feeder = SignalFeeder()
        feeder.feed(30) { _ in rolled(1.4) }
        let start = feeder.t
        feeder.feed(3, gyro: Vector3(1.4 / 3, 0, 0)) { t in rolled(1.4 * (1 - (t - start) / 3)) }
        feeder.feed(10) { _ in rolled(0) }
        #expect(feeder.crashes.isEmpty, "the lift read as a crash")
        ride(&feeder, seconds: 40)
        #expect(feeder.detector.state.uprightConfirmed)
        fall(&feeder, to: -1.45, lying: 5)
        #expect(feeder.crashes.count == 1)
    }

    /// After a crash the rider rides on without pressing anything, with a reference the crash left
    /// wrong: riding at speed (GPS) re-arms the detector, and the second fall is found. Without GPS
    /// the same riding does not: hands on a lying bike move and shake it as riding does, and a
    /// crash in progress ends only when the bike is seen upright again (issue 40).
    @Test(arguments: [true, false])
    func ridingOnAfterACrashRearmsEvenWithAWrongReference(gps: Bool) {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 40)
        fall(&feeder, to: 1.45, lying: 5)
        #expect(feeder.crashes.count == 1)
        // The sensor was knocked in its mount: upright now reads 40° from the old reference.
        feeder.mounting = { Vector3($0.x, $0.y * cos(0.7) - $0.z * sin(0.7), $0.y * sin(0.7) + $0.z * cos(0.7)) }
        feeder.feed(5) { _ in rolled(0) }
        ride(&feeder, seconds: 40, speed: gps ? 12 : nil)
        let rearmed = feeder.events.contains { if case .rearmed = $0 { true } else { false } }
        #expect(rearmed == gps)
        guard gps else { return }
        fall(&feeder, to: 1.45, lying: 5)
        #expect(feeder.crashes.count == 2)
    }
}
