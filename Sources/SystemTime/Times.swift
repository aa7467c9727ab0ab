// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Times as people read them, from the C library (its time zone is `TZ`, else /etc/localtime):
/// no locale tables, which are most of a Foundation binary's size.
package enum Times {
    /// ISO 8601 in UTC, to the second: 2026-11-25T06:30:00Z.
    package static func iso8601(_ seconds: Double) -> String {
        var time = time_t(seconds.rounded(.down)), parts = tm()
        gmtime_r(&time, &parts)
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// The local time of day, 24-hour: 14:05.
    package static func localHourMinute(_ seconds: Double) -> String {
        var time = time_t(seconds.rounded(.down)), parts = tm()
        localtime_r(&time, &parts)
        return "\(two(parts.tm_hour)):\(two(parts.tm_min))"
    }

    /// Reads 2026-11-25T06:30:00Z, or with an offset (+01:00, -0530) in place of Z; nil for
    /// anything else.
    package static func parseISO8601(_ text: String) -> Double? {
        let chars = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= chars.count else { return nil }
            var value = 0
            for c in chars[from..<from + count] {
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            return value
        }
        func at(_ i: Int, _ c: Character) -> Bool { i < chars.count && chars[i] == c.asciiValue! }
        guard let year = number(0, 4), at(4, "-"), let month = number(5, 2), at(7, "-"), let day = number(8, 2),
              at(10, "T") || at(10, "t"), let hour = number(11, 2), at(13, ":"), let minute = number(14, 2), at(16, ":"),
              let second = number(17, 2), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var offset = 0
        let rest = chars.count - 19
        if rest == 1, at(19, "Z") || at(19, "z") {
        } else if rest == 6 || rest == 5, at(19, "+") || at(19, "-"), let h = number(20, 2),
                  let m = rest == 6 ? (at(22, ":") ? number(23, 2) : nil) : number(22, 2), h < 24, m < 60 {
            offset = (h * 3600 + m * 60) * (at(19, "-") ? -1 : 1)
        } else {
            return nil
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Double(timegm(&parts) - offset)
    }

    private static func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
