// SPDX-License-Identifier: Apache-2.0
import SystemCalls
import SystemTime

/// The journal's `--since` (the CLI's and the web page's): 30m, 12h, 7d… back from now, or an ISO
/// date such as 2026-11-22T08:00:00Z; nil when it is neither.
package enum JournalSince {
    package static let help = "like 30m, 12h, 7d, or an ISO date such as 2026-11-22T08:00:00Z"

    package static func time(_ text: String, now: Double) -> Double? {
        if let unit = text.last, let amount = Double(text.dropLast()), amount >= 0, amount.isFinite {
            let seconds: Double? = switch unit {
            case "s": amount
            case "m": amount * 60
            case "h": amount * 3600
            case "d": amount * 86400
            default: nil
            }
            if let seconds { return now - seconds }
        }
        return Times.parseISO8601(text)
    }
}
