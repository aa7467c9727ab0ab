// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import RideGuardCore
import ScenarioSynth

/// A hard hit is not a crash (issue 53). Each trace below raised `collision_then_still` before its
/// rule existed: a pulse with a horizontal peak of 6 g or more and 2 m/s or more of horizontal
/// delta-v, then the bike still and upright within 20 s. Each rule tells it from a collision by
/// physics, and a pinned bike's collision is still a crash.
@Suite struct HardHitTests {
    /// Ridden for 40 s at 1 kHz.
    static func ridden() -> SignalFeeder {
        var feeder = SignalFeeder()
        feeder.rate = 1000
        ride(&feeder, seconds: 40)
        return feeder
    }

    /// A half-sine pulse of `peak` g for `seconds`, along the unit body-frame `direction`, over 1 g of
    /// gravity along the bike's up.
    static func pulse(_ feeder: inout SignalFeeder, peak: Double, seconds: Double, direction: Vector3,
                      gravity: Vector3 = Vector3(0, 0, g), speed: Double? = nil) {
        let start = feeder.t
        feeder.feed(seconds, speed: speed) { t in gravity + direction * (peak * g * sin(.pi * (t - start) / seconds)) }
    }

    static func impactKinds(_ feeder: SignalFeeder) -> [ImpactKind] {
        feeder.events.compactMap { if case .impact(_, _, _, _, let kind) = $0 { kind } else { nil } }
    }

    /// A steep drop off a ledge, 1 m (0.45 s in the air), landing front wheel first pitched 50° nose
    /// down: the ground's push along the world's up reads 10.7 g backwards in the bike's frame, more
    /// horizontal than vertical. The flight before it makes it a landing; the rider stops at once.
    @Test func aLandingAfterAFlightIsNoCollision() throws {
        var feeder = Self.ridden()
        feeder.feed(0.45) { t in vibrating(.zero, t, amplitude: 0.8) }       // in the air, the engine revving
        let pitch = -50.0 * .pi / 180
        Self.pulse(&feeder, peak: 14, seconds: 0.1, direction: Vector3(sin(pitch), 0, cos(pitch)), gravity: .zero)
        feeder.feed(15) { t in vibrating(Vector3(0, 0, g), t, amplitude: 0.3) }
        let kind = try #require(Self.impactKinds(feeder).last)
        guard case .landing(let flight) = kind else { Issue.record("\(kind)"); return }
        #expect(flight > 0.3 && flight < 0.6)
        #expect(feeder.crashes.isEmpty, "\(feeder.crashes)")
    }

    /// The same landing without the flight before it is a collision (a bike thrown backwards onto
    /// what stopped it): the flight is what tells them apart.
    @Test func theSamePulseWithoutAFlightIsACollision() throws {
        var feeder = Self.ridden()
        let pitch = -50.0 * .pi / 180
        Self.pulse(&feeder, peak: 14, seconds: 0.1, direction: Vector3(sin(pitch), 0, cos(pitch)))
        feeder.feed(15) { t in vibrating(Vector3(0, 0, g), t, amplitude: 0.3) }
        #expect(Self.impactKinds(feeder).last == .collision)
        #expect(feeder.crashes.first?.evidence.reason == .collisionThenStill)
    }

    /// A pothole's far edge at speed: 12 g for 50 ms pushing 55° above the horizontal, backwards.
    /// Horizontally 6.9 g and 2.1 m/s, as a collision; along the bike's up 3.1 m/s, more than that:
    /// a hard hit. The rider stops at once and stands still.
    @Test func aPulseMostlyAlongTheBikesUpIsAHardHit() throws {
        var feeder = Self.ridden()
        let angle = 55.0 * .pi / 180
        Self.pulse(&feeder, peak: 12, seconds: 0.05, direction: Vector3(-cos(angle), 0, sin(angle)))
        feeder.feed(15) { t in vibrating(Vector3(0, 0, g), t, amplitude: 0.3) }
        let kind = try #require(Self.impactKinds(feeder).last)
        guard case .hardHit(let vertical) = kind else { Issue.record("\(kind)"); return }
        #expect(vertical > 2.5)
        #expect(feeder.crashes.isEmpty, "\(feeder.crashes)")
    }

    /// A kerb struck at 40 km/h (8 g for 60 ms backwards: 3 m/s gone), and GPS 1.5 s later still reads
    /// 9 m/s: the bike rode on, coasting smoothly (the sensor settles at once), and stops 5 s later.
    /// Without GPS that settling would look like a pinned bike; the fix says otherwise.
    @Test func aFixThatStillReadsMovingAfterThePulseSaysTheBikeRodeOn() throws {
        var feeder = SignalFeeder()
        feeder.rate = 1000
        feeder.feed(40, speed: 11) { t in vibrating(Vector3(0.1 * g * sin(2 * .pi * t / 10), 0, g), t) }
        Self.pulse(&feeder, peak: 8, seconds: 0.06, direction: Vector3(-1, 0, 0), speed: 11)
        feeder.feed(1.5, speed: 11) { _ in Vector3(0, 0, g) }
        for speed in [9.0, 7, 5, 3, 1, 0] {
            feeder.feed(1, speed: speed) { _ in Vector3(0, 0, g) }
        }
        feeder.feed(15, speed: 0) { _ in Vector3(0, 0, g) }
        #expect(Self.impactKinds(feeder).last == .collision)
        #expect(feeder.crashes.isEmpty, "\(feeder.crashes)")
        // The same without the fix that read moving: the bike settled at once, and nothing says it
        // rode on. A pinned bike looks exactly so: an alarm.
        var pinned = SignalFeeder()
        pinned.rate = 1000
        pinned.feed(40, speed: 11) { t in vibrating(Vector3(0.1 * g * sin(2 * .pi * t / 10), 0, g), t) }
        Self.pulse(&pinned, peak: 8, seconds: 0.06, direction: Vector3(-1, 0, 0), speed: 11)
        pinned.feed(0.8, speed: 11) { _ in Vector3(0, 0, g) }
        pinned.feed(15, speed: 0) { _ in Vector3(0, 0, g) }
        #expect(pinned.crashes.first?.evidence.reason == .collisionThenStill)
    }

    /// A kerb struck with no GPS: the same 3 m/s backwards, then the rider rides on for 2 s, brakes
    /// at 0.5 g and stops, a foot down. The sensor settles 3.5 s after the pulse: what the bike hit did
    /// not stop it. A pinned bike settles within about 2 s (its lean and the smoothing included).
    @Test func aBikeThatComesToRestLateWasStoppedByItsRider() throws {
        var feeder = Self.ridden()
        Self.pulse(&feeder, peak: 8, seconds: 0.06, direction: Vector3(-1, 0, 0))
        feeder.feed(2) { t in vibrating(Vector3(0, 0, g), t) }
        feeder.feed(1) { t in vibrating(Vector3(-0.5 * g, 0, g), t) }
        feeder.feed(15) { t in vibrating(rolled(-0.08), t, amplitude: 0.3) }
        #expect(Self.impactKinds(feeder).last == .collision)
        #expect(feeder.crashes.isEmpty, "\(feeder.crashes)")
        // Stopped by what it hit, leaning 8° against it: a crash.
        var pinned = Self.ridden()
        Self.pulse(&pinned, peak: 8, seconds: 0.06, direction: Vector3(-1, 0, 0))
        let start = pinned.t
        pinned.feed(0.6) { t in vibrating(rolled(-0.14 * (t - start) / 0.6), t, amplitude: 0.3) }
        pinned.feed(15) { t in vibrating(rolled(-0.14), t, amplitude: 0.3) }
        #expect(pinned.crashes.first?.evidence.reason == .collisionThenStill)
    }

    /// Parked for 20 minutes, then a car's bump: 6 g sideways, 5 m/s, as hard as a collision. It rocks
    /// on its stand long enough to seem moved about, and the context leaves `parked`; before, the
    /// collision then counted. A blow to a parked bike hits nobody, whatever follows.
    @Test func aBlowToAParkedBikeIsNoCollisionWhateverFollows() {
        let (scenario, seed) = TraceSynthesizer.plan(seed: 16, index: 106)
        #expect(scenario == .parkedBumped)
        var detector = CrashDetector()
        var crashes = 0, collisions = 0
        _ = TraceSynthesizer.generate(.parkedBumped, seed: seed, ridingScale: 1) { sample in
            detector.process(sample) { event in
                if case .crashDetected = event { crashes += 1 }
                if case .impact(_, _, _, _, .collision) = event { collisions += 1 }
            }
        }
        #expect(collisions == 1, "the bump is as hard as a collision")
        #expect(crashes == 0)
    }
}
