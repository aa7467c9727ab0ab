// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// The IMU as installed: mounting, range, bias, scale, noise, quantisation, and sometimes a dead axis.
struct SensorModel: Sendable {
    var rate: Double
    var hasGyro: Bool
    var rangeG: Double
    var gyroRange: Double          // rad/s
    var mounting: Rotation         // body → sensor
    var accelBias: Vector3
    var gyroBias: Vector3
    var scale: Vector3
    var accelNoise: Double
    var gyroNoise: Double
    var deadAxis: Int?

    /// `range`: instead of the range drawn (the draw is made all the same: the rest stays as the seed gives it).
    init(rng: inout SeededRandom, rate fixedRate: Double? = nil, range fixedRange: Double? = nil) {
        let drawn = rng.pick([100.0, 200, 250, 400, 500, 1000])
        rate = fixedRate ?? drawn
        hasGyro = rng.chance(0.7)
        rangeG = rng.chance(0.4) ? 8 : 16
        if let fixedRange { rangeG = fixedRange }
        gyroRange = rng.pick([250.0, 500, 1000, 2000]) * .pi / 180
        if rng.chance(0.5) {
            // A board screwed in square to the frame in one of 24 orientations, a few degrees off.
            let axes = [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)]
            let first = rng.pick(axes) * rng.sign()
            var second = rng.pick(axes) * rng.sign()
            while abs(second.dot(first)) > 0.5 { second = rng.pick(axes) * rng.sign() }
            let third = first.cross(second)
            let square = Rotation(r: (first, second, third))
            let tilt = Rotation(axis: Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian()), angle: rng.uniform(0...0.15))
            mounting = square * tilt
        } else {
            // Anywhere, any way up.
            let axis = Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian())
            mounting = Rotation(axis: axis, angle: rng.uniform(0...Double.pi))
        }
        accelBias = Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian()) * 0.15
        gyroBias = Vector3(rng.gaussian(), rng.gaussian(), rng.gaussian()) * 0.03
        scale = Vector3(1 + 0.015 * rng.gaussian(), 1 + 0.015 * rng.gaussian(), 1 + 0.015 * rng.gaussian())
        accelNoise = 0.03 * (rate / 100).squareRoot()
        gyroNoise = 0.002 * (rate / 100).squareRoot()
        deadAxis = rng.chance(0.06) ? Int(rng.next() % 3) : nil
    }

    /// What the sensor reports for body specific force `force` (m/s²) and body rate `rate` (rad/s).
    func measure(force: Vector3, rate bodyRate: Vector3, rng: inout SeededRandom) -> (Vector3, Vector3?) {
        let limit = rangeG * standardGravity
        let quantum = limit / 32768
        var a = mounting.apply(force)
        for axis in 0..<3 {
            var v = a[axis] * scale[axis] + accelBias[axis] + accelNoise * rng.gaussian()
            if axis == deadAxis { v = accelBias[axis] + accelNoise * rng.gaussian() }
            v = max(-limit, min(limit - quantum, v))
            a[axis] = (v / quantum).rounded() * quantum
        }
        guard hasGyro else { return (a, nil) }
        let gyroQuantum = gyroRange / 32768
        var w = mounting.apply(bodyRate)
        for axis in 0..<3 {
            let v = max(-gyroRange, min(gyroRange - gyroQuantum, w[axis] + gyroBias[axis] + gyroNoise * rng.gaussian()))
            w[axis] = (v / gyroQuantum).rounded() * gyroQuantum
        }
        return (a, w)
    }
}
