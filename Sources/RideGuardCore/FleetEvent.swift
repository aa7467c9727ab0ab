// SPDX-License-Identifier: Apache-2.0
/// What the agent tells a fleet's dispatcher or a riding group: one event of the MQTT contract
/// (docs/fleet.md), published on `<prefix>/<device>/event` with `t`, `seq` and the
/// position, from the database, in order.
package struct FleetEvent: Equatable, Sendable {
    package enum Name: String, CaseIterable, Sendable {
        case armed
        case notProtecting = "not_protecting"
        /// Protecting with a weakness: an alert still goes out (`summary` says what failed).
        case degraded
        case protectionStopped = "protection_stopped"
        case crashDetected = "crash_detected"
        case countdownStarted = "countdown_started"
        case sosRaised = "sos_raised"
        case imFine = "im_fine"
        /// The countdown is over: the alerts are being sent.
        case alerting
        case emergencySent = "emergency_sent"
        case sendingFailed = "sending_failed"
        case messagesBlocked = "messages_blocked"
        case acknowledged
        case allClear = "all_clear"
        case emergencyEnded = "emergency_ended"
        case parkedFall = "parked_fall"
        case sensorFault = "sensor_fault"
        case storageFault = "storage_fault"
        case partRecovered = "part_recovered"
        case modemFault = "modem_fault"
        case modemReady = "modem_ready"
    }

    /// What raised an alert: `alerting`'s `trigger`.
    package enum Trigger: String, Sendable {
        case crash
        /// The rider's SOS (the button held).
        case sos
    }

    package var name: Name
    /// The event's own facts (`summary`, `seconds`, `by`…), in order.
    package var facts: JSONLine

    package init(_ name: Name, facts: JSONLine = JSONLine()) {
        self.name = name
        self.facts = facts
    }

    /// An event whose one fact is a sentence: what happened, as the journal says it.
    package init(_ name: Name, summary: String) {
        var facts = JSONLine()
        facts.add("summary", summary)
        self.init(name, facts: facts)
    }

    /// The countdown is over and the alerts go out, raised by `trigger`.
    package static func alerting(_ trigger: Trigger) -> FleetEvent {
        var facts = JSONLine()
        facts.add("trigger", trigger.rawValue)
        return FleetEvent(.alerting, facts: facts)
    }

    /// The event as stored and published, less its `seq`: `event`, `t` (Unix seconds), its facts,
    /// then the position last known (`lat`, `lon`, `accuracy_m`, `fix_age_s`) when there is one.
    package func json(at t: Double, position: Fix?) -> String {
        var line = JSONLine(event: name.rawValue, t: t)
        line.append(contentsOf: facts)
        if let position { line.append(contentsOf: position.fleetFacts(now: t)) }
        return line.text
    }
}

extension Fix {
    /// `lat`, `lon`, `accuracy_m` when known, and `fix_age_s` at `now` when given: the position's
    /// facts in the fleet's events, state and group reports.
    package func fleetFacts(now: Double?) -> JSONLine {
        var line = JSONLine()
        line.add("lat", latitude, decimals: 6)
        line.add("lon", longitude, decimals: 6)
        if let accuracy { line.add("accuracy_m", accuracy, decimals: 0) }
        if let now { line.add("fix_age_s", max(0, now - time), decimals: 0) }
        return line
    }
}

/// Where one position is from another, for a dispatcher and a riding group.
package enum Bearing {
    /// Distance (m) and direction (degrees clockwise from north), on the local flat map: within a
    /// fraction of a percent over the tens of kilometres a group or a depot spans.
    package static func between(_ a: (lat: Double, lon: Double), _ b: (lat: Double, lon: Double)) -> (metres: Double, degrees: Double) {
        let metresPerDegree = 111_195.0
        let north = (b.lat - a.lat) * metresPerDegree
        let east = (b.lon - a.lon) * cosine((a.lat + b.lat) / 2 * .pi / 180) * metresPerDegree
        let degrees = atan2Degrees(east, north)
        return ((north * north + east * east).squareRoot(), degrees < 0 ? degrees + 360 : degrees)
    }

    /// "11.1 km S", "350 m NE".
    package static func text(_ a: (lat: Double, lon: Double), _ b: (lat: Double, lon: Double)) -> String {
        let (metres, degrees) = between(a, b)
        let compass = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"][Int((degrees + 22.5) / 45) % 8]
        return (metres < 1000 ? "\(Int(metres.rounded())) m" : "\(DecimalFormat.string(metres / 1000, decimals: 1)) km") + " " + compass
    }
}
