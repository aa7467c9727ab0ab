// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import RideGuardCore

/// Feeds `seconds` of samples at `rate` whose body-frame specific force is `force(t)` (m/s²), seen
/// through `mounting`, and returns the events.
struct SignalFeeder {
    var detector = CrashDetector()
    var t = 0.0
    var rate = 200.0
    var mounting: (Vector3) -> Vector3 = { $0 }
    var events: [DetectorEvent] = []

    mutating func feed(_ seconds: Double, gyro: Vector3? = nil, speed: Double? = nil,
                       _ force: (Double) -> Vector3) {
        let steps = Int(seconds * rate)
        for _ in 0..<steps {
            let sample = IMUSample(t: t, accel: mounting(force(t)), gyro: gyro.map(mounting), speed: speed)
            detector.process(sample) { events.append($0) }
            t += 1 / rate
        }
    }

    var crashes: [(t: Double, evidence: CrashEvidence)] {
        events.compactMap { if case .crashDetected(let t, let e) = $0 { (t, e) } else { nil } }
    }
}

let g = standardGravity
/// Gravity in the body frame of a bike rolled by `roll` radians (x forward, y left, z up).
func rolled(_ roll: Double) -> Vector3 { Vector3(0, -g * sin(roll), g * cos(roll)) }
/// Gravity for a bike pitched nose-up by `pitch` radians, with forward acceleration `a` (m/s²).
func pitched(_ pitch: Double, accelerating a: Double = 0) -> Vector3 {
    Vector3(a * cos(pitch) + g * sin(pitch), 0, g * cos(pitch) - a * sin(pitch))
}
/// A little vibration so the signal is not perfectly flat (engine at 35 Hz, 0.5 g, along z).
func vibrating(_ v: Vector3, _ t: Double, amplitude: Double = 0.5) -> Vector3 {
    v + Vector3(0.2, 0.1, 1) * (amplitude * g * sin(2 * .pi * 35 * t))
}

/// Riding for a while: straights with speed changes (force along x, none sideways), then
/// coordinated turns (force along the bike's up, g/cos(lean)), every 20 s.
func ride(_ feeder: inout SignalFeeder, seconds: Double, speed: Double? = nil) {
    feeder.feed(seconds, speed: speed) { t in
        let phase = t.truncatingRemainder(dividingBy: 20)
        if phase < 10 {
            return vibrating(Vector3(0.25 * g * sin(2 * .pi * phase / 10), 0, g), t)
        }
        let lean = 0.6 * sin(.pi * (phase - 10) / 10)
        return vibrating(Vector3(0, 0, g / cos(lean)), t)
    }
}

@Suite struct CrashDetectorTests {
    @Test(arguments: [
        "identity", "upside-down board", "on its side", "rotated 30° about x then 60° about z",
    ])
    func bikeOnItsSideIsACrashWhateverTheMounting(mounting name: String) throws {
        let mountings: [String: (Vector3) -> Vector3] = [
            "identity": { $0 },
            "upside-down board": { Vector3($0.x, -$0.y, -$0.z) },
            "on its side": { Vector3($0.z, $0.x, $0.y) },
            "rotated 30° about x then 60° about z": { v in
                let a = 30.0 * .pi / 180, b = 60.0 * .pi / 180
                let r = Vector3(v.x, v.y * cos(a) - v.z * sin(a), v.y * sin(a) + v.z * cos(a))
                return Vector3(r.x * cos(b) - r.y * sin(b), r.x * sin(b) + r.y * cos(b), r.z)
            },
        ]
        var feeder = SignalFeeder(mounting: try #require(mountings[name]))
        ride(&feeder, seconds: 60)
        feeder.feed(0.5) { t in rolled(1.5 * (t - 60) / 0.5 * 0.5 * 2) }   // falls over in half a second
        let rest = feeder.t
        feeder.feed(10) { t in vibrating(rolled(1.5), t, amplitude: 0.8) }  // engine still idling
        let crash = try #require(feeder.crashes.first)
        #expect(feeder.crashes.count == 1)
        #expect(crash.evidence.reason == .lyingStill)
        #expect(crash.t - rest > 0.5 && crash.t - rest < 3, "latency \(crash.t - rest)")
        #expect(abs(crash.evidence.postureDegrees - 86) < 4)
    }

    /// The detector's own arccosine (the core has no libm), behind every posture, against the C
    /// library's.
    @Test func ownArccosineAgreesWithTheCLibrary() {
        for i in 0...20_000 {
            let x = -1 + Double(i) / 10_000
            #expect(abs(acosDegrees(x) - acos(x) * 180 / .pi) < 2e-6, "acos(\(x))")
        }
    }

    @Test func sideStandAndStopsAreNotCrashes() {
        var feeder = SignalFeeder()
        feeder.feed(5) { _ in rolled(-14 * .pi / 180) }       // parked on the side stand
        feeder.feed(1) { t in rolled(-14 * .pi / 180 * (1 - (t - 5))) }
        ride(&feeder, seconds: 120)
        feeder.feed(30) { _ in rolled(-5 * .pi / 180) }       // foot down at a light
        ride(&feeder, seconds: 60)
        feeder.feed(60) { _ in rolled(-16 * .pi / 180) }      // parked again
        #expect(feeder.crashes.isEmpty)
    }

    @Test func deepLeanAndHardBrakingAreNotCrashes() {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 30)
        // 55° of lean for 8 s: the force stays along the bike's up axis, at g / cos(55°).
        feeder.feed(8) { t in vibrating(Vector3(0, 0, g / cos(55 * .pi / 180)), t) }
        // 1.1 g of braking for 3 s, then stopped upright.
        feeder.feed(3) { t in vibrating(Vector3(-1.1 * g, 0, g), t) }
        feeder.feed(20) { _ in Vector3(0, 0, g) }
        #expect(feeder.crashes.isEmpty)
    }

    @Test func jumpsWithLongAirtimeAreNotCrashes() {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 30)
        for _ in 0..<3 {
            feeder.feed(1.8) { _ in Vector3(0.1, 0, 0.05) }   // 1.8 s of free fall
            feeder.feed(0.2) { t in Vector3(0, 0, 5 * g) }    // 5 g landing
            ride(&feeder, seconds: 10)
        }
        #expect(feeder.crashes.isEmpty)
    }

    @Test func potholesAreImpactsNotCrashes() {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 30)
        for _ in 0..<10 {
            feeder.feed(0.03) { _ in Vector3(-1.5 * g, 0, 8 * g) }
            ride(&feeder, seconds: 3)
        }
        feeder.feed(30) { _ in Vector3(0, 0, g) }            // and then a stop
        #expect(feeder.crashes.isEmpty)
        #expect(feeder.events.contains { if case .impact = $0 { true } else { false } })
    }

    @Test func balancedWheelieIsNotLying() {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 90)                             // braking and accelerating teach "forward"
        #expect(feeder.detector.forward != nil)
        // Wheelies held for 6 s: the force points through the centre of mass, about 52° from the
        // bike's up whatever the pitch: as far from upright as a fall, but about the pitch axis.
        feeder.feed(6) { t in vibrating(pitched(52 * .pi / 180), t) }
        feeder.feed(6) { t in vibrating(pitched(30 * .pi / 180, accelerating: g * tan(22 * .pi / 180)), t) }
        feeder.feed(6) { t in vibrating(pitched(60 * .pi / 180, accelerating: -g * tan(8 * .pi / 180)), t) }
        ride(&feeder, seconds: 10)
        #expect(feeder.crashes.isEmpty)
    }

    /// Past the lying angle about the pitch axis: a wheelie moves and comes down within seconds, a
    /// bike that rests there has gone down (the learned forward axis can be wrong after a short ride).
    @Test func pitchLikeTiltHeldStillIsACrashAfterTheLongerRest() throws {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 90)
        #expect(feeder.detector.forward != nil)
        // Balancing a wheelie past the angle: the pitch wanders by ±6° (never still), for 10 s.
        feeder.feed(10) { t in vibrating(pitched((66 + 6 * sin(2 * .pi * 0.7 * t)) * .pi / 180), t) }
        ride(&feeder, seconds: 10)
        #expect(feeder.crashes.isEmpty)
        // Resting at 66°, about the pitch axis, the engine idling.
        let rest = feeder.t
        feeder.feed(3.5) { t in vibrating(pitched(66 * .pi / 180), t, amplitude: 0.1) }
        #expect(feeder.crashes.isEmpty, "a pitch-like tilt waits for the longer rest")
        feeder.feed(4) { t in vibrating(pitched(66 * .pi / 180), t, amplitude: 0.1) }
        let crash = try #require(feeder.crashes.first)
        #expect(crash.t - rest > 4 && crash.t - rest < 5.5, "\(crash.t - rest) s after coming to rest")
    }

    /// GPS at 1 Hz sees what a dead longitudinal axis hides: 14 m/s gone between two fixes, an
    /// impact in between. Braking as hard as a bike can (1 g) to a stop, over a pothole, is not it.
    @Test func speedGoneFasterThanBrakesCanIsACollision() throws {
        func run(speeds: [Double], pulse: Bool) -> SignalFeeder {
            var feeder = SignalFeeder()
            feeder.feed(40, speed: speeds[0]) { t in vibrating(Vector3(0, 0, g), t) }
            for (index, speed) in speeds.enumerated().dropFirst() {
                if pulse && index == 1 {
                    // A 4 g vertical knock: all that a sensor with a dead x axis sees of the crash.
                    feeder.feed(0.05, speed: speeds[0]) { _ in Vector3(0, 0, 4 * g) }
                    feeder.feed(0.95, speed: speeds[0]) { t in vibrating(Vector3(0, 0, g), t) }
                }
                feeder.feed(1, speed: speed) { t in vibrating(Vector3(0, 0, g), t, amplitude: 0.1) }
            }
            feeder.feed(8, speed: speeds.last!) { t in vibrating(Vector3(0, 0, g), t, amplitude: 0.1) }
            return feeder
        }
        let pinned = run(speeds: [14, 0.2], pulse: true)
        let crash = try #require(pinned.crashes.first)
        #expect(crash.evidence.reason == .collisionThenStill)
        #expect(crash.evidence.deltaV > 13)
        #expect(crash.t - 41 < 4)
        #expect(run(speeds: [14, 4.2, 0], pulse: true).crashes.isEmpty, "1 g braking over a pothole")
        #expect(run(speeds: [14, 0.2], pulse: false).crashes.isEmpty, "a GPS jump without an impact")
    }

    @Test func collisionThatLeavesTheBikeUprightIsACrash() throws {
        var feeder = SignalFeeder()
        feeder.rate = 1000
        ride(&feeder, seconds: 40)
        // 80 ms half-sine of 25 g backwards: delta-v ≈ 12.5 m/s (45 km/h) in one pulse.
        let start = feeder.t
        feeder.feed(0.08) { t in Vector3(-25 * g * sin(.pi * (t - start) / 0.08), 0, g) }
        let rest = feeder.t
        feeder.feed(10) { t in vibrating(Vector3(0, 0, g), t, amplitude: 0.6) }
        let crash = try #require(feeder.crashes.first)
        #expect(crash.evidence.reason == .collisionThenStill)
        #expect(crash.evidence.deltaV > 10)
        #expect(crash.t - rest < 4)
    }

    @Test func deadAxisCarryingGravityStillSeesTheBikeGoDown() throws {
        // The y axis is dead: it reads 0.05 whatever happens. Lying on its side puts gravity on y.
        var feeder = SignalFeeder(mounting: { Vector3($0.x, 0.05, $0.z) })
        ride(&feeder, seconds: 60)
        feeder.feed(0.5) { t in rolled(1.5 * (t - 60) / 0.5) }
        let rest = feeder.t
        feeder.feed(10) { _ in rolled(1.45) }
        let crash = try #require(feeder.crashes.first)
        #expect(crash.t - rest < 5)
        #expect(crash.evidence.postureDegrees > 60)
    }

    @Test func deadAxisAlongGravityIsReportedAndTheFallStillFound() throws {
        // Upright, gravity sits on the dead z axis: the sensor reads almost nothing at rest.
        var feeder = SignalFeeder(mounting: { Vector3($0.x, $0.y, 0.3) })
        ride(&feeder, seconds: 40)
        feeder.feed(20) { _ in rolled(-0.1) }                 // stopped upright: not a crash
        #expect(feeder.crashes.isEmpty)
        #expect(feeder.events.contains { if case .sensorFault(_, .implausibleGravity) = $0 { true } else { false } })
        feeder.feed(0.5) { t in rolled(1.5 * (t - 60) / 0.5) }
        feeder.feed(10) { _ in rolled(1.5) }
        #expect(feeder.crashes.count == 1)
    }

    @Test func rearmsWhenTheBikeIsUprightAgain() {
        var feeder = SignalFeeder()
        ride(&feeder, seconds: 30)
        feeder.feed(10) { _ in rolled(1.4) }
        #expect(feeder.crashes.count == 1)
        feeder.feed(12) { _ in Vector3(0, 0, g) }
        #expect(feeder.events.contains { if case .rearmed = $0 { true } else { false } })
        ride(&feeder, seconds: 30)
        feeder.feed(10) { _ in rolled(-1.4) }
        #expect(feeder.crashes.count == 2)
    }

    @Test func timeGoingBackwardsAndGapsAreFaults() {
        var detector = CrashDetector()
        var events: [DetectorEvent] = []
        for (i, t) in [0.0, 0.005, 0.010, 0.008, 0.015, 0.9].enumerated() {
            detector.process(IMUSample(t: t, accel: Vector3(0, 0, g + Double(i) * 0.01))) { events.append($0) }
        }
        #expect(events.contains(.sensorFault(t: 0.008, fault: .timeWentBackwards(by: 0.010 - 0.008))))
        #expect(events.contains { if case .sensorFault(_, .gap(let s)) = $0 { abs(s - 0.885) < 1e-9 } else { false } })
    }

    @Test(arguments: [100.0, 1000.0])
    func latencyDoesNotDependOnTheRate(rate: Double) throws {
        var feeder = SignalFeeder()
        feeder.rate = rate
        ride(&feeder, seconds: 30)
        let rest = feeder.t
        feeder.feed(8) { _ in rolled(-1.6) }
        let crash = try #require(feeder.crashes.first)
        #expect(crash.t - rest > 1 && crash.t - rest < 3)
    }

    /// A calibrated up is the reference from the first sample, confirmed: no riding needed, and a
    /// fall right after the start is a crash (the posture reads against it at once).
    @Test func aCalibratedUpReadsThePostureFromTheStart() {
        var config = DetectorConfiguration()
        config.calibratedUp = [0, 0, 1]
        var feeder = SignalFeeder(detector: CrashDetector(configuration: config))
        feeder.feed(3) { _ in rolled(0.1) }
        #expect(abs(feeder.detector.state.postureDegrees - 0.1 * 180 / .pi) < 1)
        let start = feeder.t
        feeder.feed(0.8, gyro: Vector3(-1.45 / 0.8, 0, 0)) { t in rolled(0.1 + 1.35 * (t - start) / 0.8) }
        feeder.feed(6) { _ in rolled(1.45) }
        #expect(feeder.crashes.count == 1)
    }

    @Test func configurationValidationNamesTheField() {
        var config = DetectorConfiguration()
        #expect(config.validationErrors().isEmpty)
        config.lyingAngleDegrees = 95
        config.calibratedUp = [0, 0]
        #expect(config.validationErrors() == [
            "lyingAngleDegrees must be between 20 and 90", "wheelieMaximumDegrees must be between lyingAngleDegrees and 180",
            "calibratedUp must be three numbers, not all zero",
        ])
    }

    @Test func settingsAreChangedByNameWithErrorsNamingTheKey() throws {
        var config = DetectorConfiguration()
        try config.set("lyingAngleDegrees", to: " 65 ")
        #expect(config.lyingAngleDegrees == 65)
        try config.set("lying_angle_degrees", to: "66")
        #expect(config.lyingAngleDegrees == 66)
        #expect(DetectorConfiguration.snakeCase("parkedFallRotationDegreesPerSecond") == "parked_fall_rotation_degrees_per_second")
        #expect(throws: ConfigurationError(key: "lyingAngle", reason: "unknown detector setting; known: "
                                           + DetectorConfiguration.settings.map { DetectorConfiguration.snakeCase($0.key) }.joined(separator: ", "))) {
            try config.set("lyingAngle", to: "65")
        }
        #expect(throws: ConfigurationError(key: "gapSeconds", reason: "'soon' is not a number")) {
            try config.set("gapSeconds", to: "soon")
        }
        #expect(throws: ConfigurationError(key: "smoothingSeconds", reason: "smoothingSeconds must be 0.01...1")) {
            try config.set("smoothingSeconds", to: "5")
        }
        #expect(DetectorConfiguration.settings.count == 33)
    }

    @Test func gyroRebuildsGravityAroundADeadAxisThatCarriesMostOfIt() throws {
        // Tilted 50° about x with y dead: upright, the sensor reads only 0.64 g, no trustworthy
        // vertical. Once y is known dead, gravity at the last upright stop is rebuilt (the hidden
        // part's sign is the one whose gyro-turned prediction matches the live axes).
        let tilt = 50.0 * .pi / 180
        let mounting: (Vector3) -> Vector3 = { v in Vector3(v.x, 0.02, v.y * sin(tilt) + v.z * cos(tilt)) }
        for direction in [-1.0, 1.0] {
            var feeder = SignalFeeder(mounting: mounting)
            ride(&feeder, seconds: 40)
            feeder.feed(5) { _ in Vector3(0, 0, g) }                   // a stop: the deficient rest
            ride(&feeder, seconds: 40)                                 // y is reported dead
            #expect(feeder.events.contains { if case .sensorFault(_, .deadAxis(1)) = $0 { true } else { false } })
            feeder.feed(5, gyro: .zero) { _ in Vector3(0, 0, g) }      // upright at a stop
            let fall = 85.0 * .pi / 180, duration = 0.8, start = feeder.t
            let rate = direction * fall / duration
            feeder.feed(duration, gyro: Vector3(rate, 0, 0)) { t in rolled(rate * (t - start)) }
            let rest = feeder.t
            feeder.feed(8, gyro: .zero) { _ in rolled(direction * fall) }
            let crash = try #require(feeder.crashes.first, "falling \(direction)")
            #expect(crash.t - rest < 4.5)
            #expect(crash.evidence.postureDegrees > 70, "\(crash.evidence.postureDegrees)°")
        }
    }

    @Test func gyroSeesTheFallWhenTheDeadAxisTakesGravity() throws {
        // The board is tilted 22° about x and its y axis is dead: upright, the dead axis already hides
        // a third of gravity (the sensor reads 0.93 g). Falling to 75° toward that axis moves most of
        // gravity into it; from the accelerometer alone the tilt could be as small as ~49°.
        let tilt = 22.0 * .pi / 180
        let mounting: (Vector3) -> Vector3 = { v in
            Vector3(v.x, 0.02, v.y * sin(tilt) + v.z * cos(tilt))
        }
        let fall = 75.0 * .pi / 180, duration = 0.8
        func run(gyro: Bool) -> SignalFeeder {
            var feeder = SignalFeeder(mounting: mounting)
            ride(&feeder, seconds: 40)
            feeder.feed(5, gyro: gyro ? .zero : nil) { _ in Vector3(0, 0, g) }        // a stop, upright
            let rate = fall / duration
            // Rolling left (negative roll); the gyro reads the body rate through the same mounting.
            feeder.feed(duration, gyro: gyro ? Vector3(-rate, 0, 0) : nil) { t in rolled(-rate * (t - 45)) }
            feeder.feed(8, gyro: gyro ? .zero : nil) { _ in rolled(-fall) }
            return feeder
        }
        let withGyro = run(gyro: true)
        let crash = try #require(withGyro.crashes.first)
        #expect(crash.t - 45.8 < 4.5)
        #expect(crash.evidence.postureDegrees > 70)
        #expect(run(gyro: false).crashes.isEmpty)
    }
}
