// SPDX-License-Identifier: Apache-2.0
// The detector's maths: no C library in the core, so what it needs beyond the standard library is here.

/// A unit quaternion for integrating rotation rates.
struct Quaternion: Sendable {
    var w = 1.0, x = 0.0, y = 0.0, z = 0.0

    static let identity = Quaternion()

    /// Composes a small body rotation `angle` (rotation vector, radians) on the right.
    mutating func rotate(by angle: Vector3) {
        let (hx, hy, hz) = (angle.x / 2, angle.y / 2, angle.z / 2)
        let nw = w - x * hx - y * hy - z * hz
        let nx = x + w * hx + y * hz - z * hy
        let ny = y + w * hy + z * hx - x * hz
        let nz = z + w * hz + x * hy - y * hx
        let norm = (nw * nw + nx * nx + ny * ny + nz * nz).squareRoot()
        let perNorm = 1 / norm
        (w, x, y, z) = (nw * perNorm, nx * perNorm, ny * perNorm, nz * perNorm)
    }

    /// A vector fixed in the world, seen from the rotated body: q* v q.
    func inverseRotate(_ v: Vector3) -> Vector3 {
        let u = Vector3(-x, -y, -z)
        let t = u.cross(v) * 2
        return v + t * w + u.cross(t)
    }
}

/// A symmetric 3×3 matrix kept as an exponential average of outer products.
struct SymmetricMatrix3: Sendable {
    var xx = 0.0, yy = 0.0, zz = 0.0, xy = 0.0, xz = 0.0, yz = 0.0

    mutating func blend(toward v: Vector3, weight k: Double) {
        xx += (v.x * v.x - xx) * k
        yy += (v.y * v.y - yy) * k
        zz += (v.z * v.z - zz) * k
        xy += (v.x * v.y - xy) * k
        xz += (v.x * v.z - xz) * k
        yz += (v.y * v.z - yz) * k
    }

    func apply(_ v: Vector3) -> Vector3 {
        Vector3(xx * v.x + xy * v.y + xz * v.z, xy * v.x + yy * v.y + yz * v.z, xz * v.x + yz * v.y + zz * v.z)
    }

    /// The dominant eigenvector in the plane orthogonal to `normal`, by power iteration.
    func principalAxis(start: Vector3, orthogonalTo normal: Vector3) -> Vector3? {
        var v = start - normal * start.dot(normal)
        for _ in 0..<16 {
            var next = apply(v)
            next = next - normal * next.dot(normal)
            guard let unit = next.normalized else { return nil }
            v = unit
        }
        return v.normalized
    }
}

@inlinable func square(_ x: Double) -> Double { x * x }

/// A cone around the upright, with the cosines 0.01° inside and outside its edge: a direction whose
/// cosine is above `inside` is in it, below `outside` is not, between needs the arccosine.
struct Cone: Sendable {
    let degrees: Double
    let inside: Double
    let outside: Double

    init(degrees: Double) {
        self.degrees = degrees
        inside = Self.cosine(max(0, degrees - 0.01))
        outside = Self.cosine(degrees + 0.01)
    }

    /// cos of an angle of at most 90°, in degrees: its Taylor series to the x¹⁴ term (error below
    /// 1e-10), the core having no C library's `cos`.
    static func cosine(_ degrees: Double) -> Double {
        let x = degrees * Double.pi / 180
        var term = 1.0, sum = 1.0
        for n in stride(from: 2, through: 14, by: 2) {
            term *= -x * x / Double((n - 1) * n)
            sum += term
        }
        return sum
    }
}

/// acos in degrees without Foundation (the standard library has no acos): Abramowitz–Stegun's
/// polynomial, good to 2e-8 rad (about 1e-6°), far below what a posture needs.
@inlinable @inline(__always) func acosDegrees(_ x: Double) -> Double {
    // Abramowitz–Stegun 4.4.46 (error below 2e-8 rad), its polynomial evaluated as pairs
    // (Estrin's scheme) rather than one long chain: it runs on every sample.
    let ax = abs(x)
    let x2 = ax * ax
    let low = (1.5707963050 - 0.2145988016 * ax) + (0.0889789874 - 0.0501743046 * ax) * x2
    let high = (0.0308918810 - 0.0170881256 * ax) + (0.0066700901 - 0.0012624911 * ax) * x2
    let p = low + high * (x2 * x2)
    let r = (1 - ax).squareRoot() * p
    let radians = x >= 0 ? r : Double.pi - r
    return radians * 180 / Double.pi
}
