// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// A 3×3 rotation matrix (rows), enough for attitudes and sensor mountings.
struct Rotation: Sendable {
    var r: (Vector3, Vector3, Vector3)

    static let identity = Rotation(r: (Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)))

    /// Body-to-world for yaw ψ, pitch θ, roll φ (Z-Y-X order): x forward, y left, z up.
    /// Positive roll leans the bike to its right; positive pitch lifts the nose.
    init(yaw: Double, pitch: Double, roll: Double) {
        let (cy, sy) = (cos(yaw), sin(yaw))
        let (cp, sp) = (cos(-pitch), sin(-pitch))
        let (cr, sr) = (cos(roll), sin(roll))
        r = (Vector3(cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr),
             Vector3(sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr),
             Vector3(-sp, cp * sr, cp * cr))
    }

    init(r: (Vector3, Vector3, Vector3)) {
        self.r = r
    }

    /// Rotation by `angle` about the unit `axis` (Rodrigues).
    init(axis: Vector3, angle: Double) {
        let k = axis.normalized ?? Vector3(0, 0, 1)
        let c = cos(angle), s = sin(angle), v = 1 - c
        r = (Vector3(c + k.x * k.x * v, k.x * k.y * v - k.z * s, k.x * k.z * v + k.y * s),
             Vector3(k.y * k.x * v + k.z * s, c + k.y * k.y * v, k.y * k.z * v - k.x * s),
             Vector3(k.z * k.x * v - k.y * s, k.z * k.y * v + k.x * s, c + k.z * k.z * v))
    }

    func apply(_ v: Vector3) -> Vector3 { Vector3(r.0.dot(v), r.1.dot(v), r.2.dot(v)) }

    var transposed: Rotation {
        Rotation(r: (Vector3(r.0.x, r.1.x, r.2.x), Vector3(r.0.y, r.1.y, r.2.y), Vector3(r.0.z, r.1.z, r.2.z)))
    }

    static func * (a: Rotation, b: Rotation) -> Rotation {
        let bt = b.transposed
        return Rotation(r: (Vector3(a.r.0.dot(bt.r.0), a.r.0.dot(bt.r.1), a.r.0.dot(bt.r.2)),
                            Vector3(a.r.1.dot(bt.r.0), a.r.1.dot(bt.r.1), a.r.1.dot(bt.r.2)),
                            Vector3(a.r.2.dot(bt.r.0), a.r.2.dot(bt.r.1), a.r.2.dot(bt.r.2))))
    }

    /// The body rate that turns `previous` into `self` over `dt` (both body-to-world).
    func bodyRate(from previous: Rotation, dt: Double) -> Vector3 {
        let d = previous.transposed * self
        let skew = Vector3(d.r.2.y - d.r.1.z, d.r.0.z - d.r.2.x, d.r.1.x - d.r.0.y) * 0.5
        let s = min(1, skew.magnitude)
        guard s > 1e-12 else { return .zero }
        let trace = d.r.0.x + d.r.1.y + d.r.2.z
        let angle = atan2(s, (trace - 1) / 2)
        return skew * (angle / s / dt)
    }
}
