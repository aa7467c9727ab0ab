// SPDX-License-Identifier: Apache-2.0
/// One JSON object on one line, keys in the order they are added (JSON Lines output).
package struct JSONLine: Equatable, Sendable {
    private var body: String

    /// Starts an event line: every line of `rideguard replay --json` has `event` and `t`.
    package init(event: String, t: Double) {
        body = ""
        add("event", event)
        add("t", t, decimals: 3)
    }

    package init() {
        body = ""
    }

    package mutating func add(_ key: String, _ value: String) {
        appendKey(key)
        body += JSONLine.quoted(value)
    }

    package mutating func add(_ key: String, _ value: Double, decimals: Int) {
        appendKey(key)
        body += value.isFinite ? DecimalFormat.string(value, decimals: decimals) : "null"
    }

    package mutating func add(_ key: String, _ value: Int) {
        appendKey(key)
        body += String(value)
    }

    package mutating func add(_ key: String, _ value: Bool) {
        appendKey(key)
        body += value ? "true" : "false"
    }

    /// Adds an already-encoded JSON value (an array or object built elsewhere).
    package mutating func addRaw(_ key: String, _ json: String) {
        appendKey(key)
        body += json
    }

    package var text: String { "{" + body + "}" }

    /// Adds every key of `other`, after this line's own.
    package mutating func append(contentsOf other: JSONLine) {
        guard !other.body.isEmpty else { return }
        if !body.isEmpty { body += "," }
        body += other.body
    }

    private mutating func appendKey(_ key: String) {
        if !body.isEmpty { body += "," }
        body += JSONLine.quoted(key) + ":"
    }

    package static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

extension DetectorEvent {
    /// The event as one line of `rideguard replay --json`.
    package var jsonLine: String {
        var line = JSONLine(event: name, t: t)
        switch self {
        case .uprightLearned(_, let up):
            line.addRaw("up", "[\(DecimalFormat.string(up.x, decimals: 4)),\(DecimalFormat.string(up.y, decimals: 4)),\(DecimalFormat.string(up.z, decimals: 4))]")
        case .impact(_, let peakG, let horizontalG, let deltaV, let kind):
            line.add("peak_g", peakG, decimals: 2)
            line.add("horizontal_g", horizontalG, decimals: 2)
            line.add("delta_v_mps", deltaV, decimals: 2)
            line.add("kind", kind.code)
            if case .landing(let flight) = kind { line.add("flight_s", flight, decimals: 2) }
        case .crashDetected(_, let e), .parkedFall(_, let e):
            line.add("reason", e.reason.rawValue)
            line.add("summary", e.summary)
            line.add("posture_deg", e.postureDegrees, decimals: 1)
            line.add("still_s", e.stillSeconds, decimals: 2)
            line.add("peak_g", e.peakG, decimals: 2)
            line.add("delta_v_mps", e.deltaV, decimals: 2)
            if let rotation = e.peakRotationDegreesPerSecond { line.add("peak_rotation_dps", rotation, decimals: 0) }
            if let speed = e.speedBefore { line.add("speed_before_mps", speed, decimals: 1) }
            if let fall = e.fallTime { line.add("fall_t", fall, decimals: 3) }
        case .rearmed:
            break
        case .sensorFault(_, let fault):
            line.add("fault", fault.code)
            line.add("summary", fault.summary)
            switch fault {
            case .deadAxis(let axis): line.add("axis", ["x", "y", "z"][axis])
            case .gap(let seconds): line.add("seconds", seconds, decimals: 3)
            case .timeWentBackwards(let by): line.add("by_s", by, decimals: 6)
            case .duplicateTime: break
            case .implausibleGravity(let g): line.add("g", g, decimals: 3)
            case .nonPhysical(let count): line.add("count", count)
            }
        }
        return line.text
    }

    /// The event as one line a person reads.
    package var humanLine: String {
        let time = DecimalFormat.string(t, decimals: 3)
        let padded = String(repeating: " ", count: max(0, 10 - time.count)) + time + " s  "
        switch self {
        case .uprightLearned:
            return padded + "upright reference learned"
        case .impact(_, let peakG, let horizontalG, let deltaV, let kind):
            return padded + "impact \(DecimalFormat.string(peakG, decimals: 1)) g (horizontal \(DecimalFormat.string(horizontalG, decimals: 1)) g, delta-v \(DecimalFormat.string(deltaV, decimals: 1)) m/s): \(kind.summary)"
        case .crashDetected(_, let e):
            return padded + "CRASH DETECTED: " + e.summary
        case .parkedFall(_, let e):
            return padded + "parked bike fell over (nobody riding: no countdown): " + e.summary
        case .rearmed:
            return padded + "bike upright again: detector re-armed"
        case .sensorFault(_, let fault):
            return padded + "sensor fault: " + fault.summary
        }
    }
}
