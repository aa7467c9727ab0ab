// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// Moves a bike through time at the sensor's nominal rate and reports what its IMU would read.
///
/// Physics: the world acceleration of the sensor and the bike's attitude are what each phase
/// prescribes; the specific force is that acceleration minus gravity, rotated into the body, and
/// the gyro reads the body rate that turns one attitude into the next. Nothing is a template.
struct BikeSimulator {
    static let g = standardGravity
    var rng: SeededRandom
    let sensor: SensorModel
    let dt: Double
    private(set) var t = 0.0

    // Motion.
    var speed = 0.0          // along the travel direction, m/s
    var travel = 0.0         // direction of travel, rad (world)
    var yaw = 0.0, pitch = 0.0, roll = 0.0
    private var previousAttitude = Rotation.identity
    private var started = false

    // Engine and other vibration.
    enum Engine { case off, idle, running }
    var engine = Engine.off
    let cylinders: Double
    let idleRPM: Double
    let engineAmplitude: Double   // g, while riding
    let idleAmplitude: Double     // g, at idle
    let vibrationDirection: Vector3
    private var enginePhase = 0.0
    var scrape = 0.0              // broadband scraping vibration, g

    // Output.
    var ridingSeconds = 0.0
    private var lastEmitted = -Double.infinity
    private var gaps: [(start: Double, end: Double)] = []
    let speedColumn: Bool
    private var gpsSpeed: Double?
    private var nextFix: Double
    private let emit: (IMUSample) -> Void

    init(seed: UInt64, rate: Double? = nil, range: Double? = nil, emit: @escaping (IMUSample) -> Void) {
        var rng = SeededRandom(seed: seed)
        sensor = SensorModel(rng: &rng, rate: rate, range: range)
        dt = 1 / sensor.rate
        cylinders = rng.pick([1.0, 2, 2, 3, 4])
        idleRPM = rng.uniform(950...1350)
        engineAmplitude = rng.uniform(0.2...1.5)
        idleAmplitude = rng.uniform(0.15...1.0)
        vibrationDirection = Vector3(rng.uniform(0...0.5), rng.uniform(-0.2...0.2), 1).normalized!
        speedColumn = rng.chance(0.3)
        nextFix = rng.uniform(3...20)
        if rng.chance(0.3) {
            var at = rng.uniform(5...60)
            for _ in 0..<Int(rng.next() % 4 + 1) {
                let length = rng.uniform(0.05...0.3)
                gaps.append((at, at + length))
                at += rng.uniform(30...400)
            }
        }
        self.rng = rng
        self.emit = emit
    }

    var attitude: Rotation { Rotation(yaw: yaw, pitch: pitch, roll: roll) }
    var forward: Vector3 { Vector3(cos(travel), sin(travel), 0) }
    var left: Vector3 { Vector3(-sin(travel), cos(travel), 0) }
    /// To the bike's right, horizontal: where a positive roll leans it.
    var right: Vector3 { Vector3(sin(yaw), -cos(yaw), 0) }

    /// Advances one sample with world acceleration `accel` (m/s², gravity not included).
    mutating func step(accel: Vector3) {
        let attitude = self.attitude
        if !started {
            previousAttitude = attitude
            started = true
        }
        let bodyRate = attitude.bodyRate(from: previousAttitude, dt: dt)
        previousAttitude = attitude
        let specific = accel + Vector3(0, 0, Self.g)
        var force = attitude.transposed.apply(specific)
        force += vibration() * Self.g
        let (a, w) = sensor.measure(force: force, rate: bodyRate, rng: &rng)
        if speed > 1 { ridingSeconds += dt }
        updateGPS()
        if !gaps.contains(where: { t >= $0.start && t < $0.end }) {
            let jittered = max(lastEmitted + dt * 0.05, t + dt * 0.08 * rng.gaussian())
            lastEmitted = jittered
            emit(IMUSample(t: jittered, accel: a, gyro: w, speed: speedColumn ? gpsSpeed : nil))
        }
        t += dt
    }

    /// Runs `duration` seconds, asking `body` for the world acceleration at each step.
    mutating func run(_ duration: Double, _ body: (inout BikeSimulator, Double) -> Vector3) {
        let steps = max(1, Int((duration / dt).rounded()))
        for i in 0..<steps {
            let a = body(&self, Double(i) / Double(steps))
            step(accel: a)
        }
    }

    private mutating func vibration() -> Vector3 {
        var amplitude = 0.0
        var frequency = 0.0
        switch engine {
        case .off: break
        case .idle:
            amplitude = idleAmplitude
            frequency = idleRPM / 60 * cylinders / 2
        case .running:
            amplitude = engineAmplitude
            frequency = (idleRPM + 2000 + 160 * speed) / 60 * cylinders / 2
        }
        var total = Vector3.zero
        if amplitude > 0 {
            enginePhase += 2 * .pi * frequency * dt
            if enginePhase > 2 * .pi * 1000 { enginePhase -= 2 * .pi * 1000 }
            // The sensor's own low-pass filter (set relative to its output rate) tames what lies above Nyquist.
            let cutoff = 0.45 * sensor.rate
            let first = frequency > cutoff ? pow(cutoff / frequency, 4) : 1
            let second = 2 * frequency > cutoff ? pow(cutoff / (2 * frequency), 4) : 1
            let value = amplitude * (first * sin(enginePhase) + 0.35 * second * sin(2 * enginePhase + 1))
            total = vibrationDirection * value
        }
        if scrape > 0 {
            total += Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian()) * scrape
        }
        return total
    }

    private mutating func updateGPS() {
        guard speedColumn, t >= nextFix else { return }
        gpsSpeed = max(0, speed + 0.15 * rng.gaussian())
        nextFix += 1
    }
}

/// Smooth 0→1 ramp.
func smoothstep(_ x: Double) -> Double {
    let u = max(0, min(1, x))
    return u * u * (3 - 2 * u)
}

/// A damped half-wave pulse shape: 0 at start, peak 1 early, back to 0 by the end.
func pulse(_ x: Double) -> Double {
    guard x >= 0 && x <= 1 else { return 0 }
    return sin(.pi * x)
}
