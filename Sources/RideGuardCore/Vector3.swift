// SPDX-License-Identifier: Apache-2.0
/// A 3-axis quantity in the sensor frame: specific force (m/s²) or rotation rate (rad/s).
package struct Vector3: Equatable, Sendable {
    package var x: Double
    package var y: Double
    package var z: Double

    @inlinable package init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    package static let zero = Vector3(0, 0, 0)

    @inlinable package var magnitude: Double { (x * x + y * y + z * z).squareRoot() }

    @inlinable package func dot(_ other: Vector3) -> Double { x * other.x + y * other.y + z * other.z }

    @inlinable package func cross(_ o: Vector3) -> Vector3 {
        Vector3(y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x)
    }

    /// The unit vector, or nil for a vector too short to have a direction.
    @inlinable package var normalized: Vector3? {
        let m = magnitude
        return m > 1e-9 ? self / m : nil
    }

    @inlinable package subscript(axis: Int) -> Double {
        get { axis == 0 ? x : (axis == 1 ? y : z) }
        set {
            switch axis {
            case 0: x = newValue
            case 1: y = newValue
            default: z = newValue
            }
        }
    }

    @inlinable package static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    @inlinable package static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
    @inlinable package static func * (a: Vector3, k: Double) -> Vector3 { Vector3(a.x * k, a.y * k, a.z * k) }
    /// One division and three products: three divisions cost several times more, per sample.
    @inlinable package static func / (a: Vector3, k: Double) -> Vector3 { a * (1 / k) }
    @inlinable package static func += (a: inout Vector3, b: Vector3) { a = a + b }
}

/// One IMU sample as the detector sees it, in IIO units.
package struct IMUSample: Equatable, Sendable {
    /// Seconds since an arbitrary origin (trace time or the monotonic clock).
    package var t: Double
    /// Specific force in m/s²: an upright sensor at rest reads about +9.81 on the axis pointing up.
    package var accel: Vector3
    /// Rotation rate in rad/s, when the sensor has a gyro.
    package var gyro: Vector3?
    /// GPS ground speed in m/s, when known.
    package var speed: Double?

    @inlinable package init(t: Double, accel: Vector3, gyro: Vector3? = nil, speed: Double? = nil) {
        self.t = t
        self.accel = accel
        self.gyro = gyro
        self.speed = speed
    }
}

/// Standard gravity, m/s².
package let standardGravity = 9.80665
