// SPDX-License-Identifier: Apache-2.0
/// Fixed-point decimal formatting without Foundation, for trace rows and JSON numbers.
/// Values are rounded half away from zero to `decimals` places; non-finite values are written as
/// the caller decides (trace writers never produce them).
package enum DecimalFormat {
    @usableFromInline static let powersOfTen: [Double] = (0...18).map { n in
        var p = 1.0
        for _ in 0..<n { p *= 10 }
        return p
    }

    /// Appends `value` with exactly `decimals` digits after the point (0...9).
    @inlinable package static func append(_ value: Double, decimals: Int, to out: inout [UInt8]) {
        precondition(decimals >= 0 && decimals <= 9, "decimals out of range")
        var v = value
        if v < 0 {
            v = -v
        }
        let scaled = (v * powersOfTen[decimals]).rounded(.toNearestOrAwayFromZero)
        guard scaled < 9.0e18 else {
            // Far beyond any sensor value: fall back to the standard library's description.
            out.append(contentsOf: Array(String(value).utf8))
            return
        }
        var n = UInt64(scaled)
        if value < 0 && n != 0 { out.append(UInt8(ascii: "-")) }
        let divisor = UInt64(powersOfTen[decimals])
        let integerPart = n / divisor
        n %= divisor
        appendInteger(integerPart, to: &out)
        if decimals > 0 {
            out.append(UInt8(ascii: "."))
            var d = divisor / 10
            while d > 0 {
                out.append(UInt8(ascii: "0") &+ UInt8(n / d))
                n %= d
                d /= 10
            }
        }
    }

    @inlinable package static func appendInteger(_ value: UInt64, to out: inout [UInt8]) {
        if value == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        var buffer: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var v = value
        withUnsafeMutableBytes(of: &buffer) { raw in
            while v > 0 {
                raw[count] = UInt8(ascii: "0") &+ UInt8(v % 10)
                v /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(raw[i]) }
        }
    }

    /// `value` as a string with `decimals` digits after the point.
    package static func string(_ value: Double, decimals: Int) -> String {
        var out: [UInt8] = []
        append(value, decimals: decimals, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
