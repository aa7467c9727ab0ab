// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import MQTTLink
import RideGuardAgent
import RideGuardCore
import SystemCalls
import Synchronization
import SystemTime

struct Fleet: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A fleet's bikes on an MQTT broker, for a dispatcher.",
        subcommands: [Watch.self])

    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Watch every bike on the broker: one line each, emergencies first, offline ones marked.",
            discussion: """
                Reads <prefix>/+/status, state and event (docs/fleet.md). On a terminal the \
                view is redrawn each second; otherwise it is printed when something changed. --json \
                prints each event as one JSON line instead, with the bike's name in "device".
                """)

        @Option(help: "The broker: mqtt://HOST[:1883] or mqtts://HOST[:8883].")
        var broker: String

        @Option(help: "The user name on the broker.")
        var user: String?

        @Option(help: "A file holding the password (never the password on the command line).")
        var passwordFile: String?

        @Option(help: "The CA that signed the broker's certificate (mqtts; default: the system's CAs).")
        var caFile: String?

        @Option(help: "The topics' prefix.")
        var prefix = "rideguard"

        @Option(help: "Where the dispatcher is, LAT,LON: each bike's distance and direction from there.")
        var from: String?

        @Flag(help: "Print the events as JSON lines.")
        var json = false

        @Option(help: "Stop after this many seconds (default: until interrupted).")
        var seconds: Double?

        func validate() throws {
            var mqtt = AgentConfiguration.MQTT()
            mqtt.url = broker
            guard mqtt.endpoint != nil else { throw ValidationError("--broker must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT]") }
            if caFile != nil && mqtt.endpoint?.tls == false { throw ValidationError("--ca-file is for TLS: use mqtts://") }
            if let from, Self.position(from) == nil { throw ValidationError("--from must be LAT,LON in degrees, such as 45.76,4.83") }
            if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be above 0") }
        }

        static func position(_ text: String) -> (lat: Double, lon: Double)? {
            let parts = text.split(separator: ",").compactMap { Double($0.trimmingPrefix(" ")) }
            guard parts.count == 2, (-90...90).contains(parts[0]), (-180...180).contains(parts[1]) else { return nil }
            return (parts[0], parts[1])
        }

        func run() throws {
            var mqtt = AgentConfiguration.MQTT()
            mqtt.url = broker
            let endpoint = mqtt.endpoint!
            let password: String?
            do { password = try passwordFile.map(MQTTSettings.password(fromFile:)) } catch {
                Output.error("\(error)")
                throw ExitCode(2)
            }
            let view = FleetView(prefix: prefix, from: from.flatMap(Self.position))
            let refused = Mutex<String?>(nil)
            let connections = Mutex(0)
            let json = self.json
            let link: MQTTLink
            do {
                link = try MQTTLink(MQTTSettings(host: endpoint.host, port: endpoint.port, tls: endpoint.tls, caFile: caFile, username: user,
                                                 password: password, clientID: "rideguard-watch-\(getpid())", keepaliveSeconds: 30)) { event in
                    switch event {
                    case .connected: connections.withLock { $0 += 1 }
                    case .refused(let reason): refused.withLock { $0 = reason }
                    case .received(let topic, let payload, _):
                        if let line = view.take(topic: topic, payload: payload), json { Output.line(line) }
                    case .failed(let reason): Output.error("not connected: \(reason); trying again")
                    case .disconnected, .acknowledged: break
                    }
                }
            } catch {
                Output.error("\(error)")
                throw ExitCode(2)
            }
            defer { link.stop() }
            let started = Date().timeIntervalSince1970
            var shown = "", subscribed = 0
            while seconds.map({ Date().timeIntervalSince1970 - started < $0 }) ?? true {
                // On each connection: the broker forgets a subscription with the session.
                let connected = connections.withLock { $0 }
                if connected != subscribed {
                    for topic in ["status", "state", "event"] { try? link.subscribe("\(prefix)/+/\(topic)") }
                    if json { Output.error("fleet watch: connected to \(broker), reading \(prefix)/+/status, state and event") }
                    subscribed = connected
                }
                if let reason = refused.withLock({ $0 }) {
                    Output.error("the broker \(broker) refused the connection: \(reason)")
                    throw ExitCode(2)
                }
                if !json {
                    let now = Date().timeIntervalSince1970
                    let lines = view.lines(now: now)
                    let table = lines.isEmpty ? "no bike on \(broker) under \(prefix)/ yet" : lines.joined(separator: "\n")
                    if isatty(1) == 1 {
                        Output.line("\u{1B}[H\u{1B}[2J" + "RideGuard fleet on \(broker), \(Times.localHourMinute(now))\n" + table)
                    } else if table != shown {
                        Output.line(table + "\n")
                    }
                    shown = table
                }
                Output.flush()
                usleep(250_000)
            }
        }
    }
}

/// What `fleet watch` knows of each bike, from its retained status and state and its events.
final class FleetView: Sendable {
    struct Bike {
        var online: Bool?
        var state: String?
        var latitude: Double?
        var longitude: Double?
        /// When the position was taken (Unix seconds).
        var fixTime: Double?
        var lastEvent: String?
    }

    /// What `fleet watch` reads of a state or an event.
    private struct Report: Decodable {
        var state: String?
        var event: String?
        var lat: Double?
        var lon: Double?
        var fix_age_s: Double?
        var t: Double?
    }

    private let prefix: String
    private let from: (lat: Double, lon: Double)?
    private let bikes = Mutex<[String: Bike]>([:])

    init(prefix: String, from: (lat: Double, lon: Double)?) {
        self.prefix = prefix
        self.from = from
    }

    /// Takes one message; returns an event as a JSON line with its bike's name ("device").
    func take(topic: String, payload: [UInt8]) -> String? {
        let levels = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard topic.hasPrefix(prefix + "/"), levels.count == 2 else { return nil }
        // A bike's name is printed on the dispatcher's terminal: never its control characters.
        let device = String(levels[0]).printable(limit: 40), text = String(decoding: payload, as: UTF8.self)
        guard !device.isEmpty else { return nil }
        switch levels[1] {
        case "status":
            bikes.withLock { $0[device, default: Bike()].online = text == "online" }
            return nil
        case "state", "event":
            guard text.hasPrefix("{"), let report = try? JSONDecoder().decode(Report.self, from: Data(payload)),
                  levels[1] == "state" || report.event != nil else { return nil }
            bikes.withLock { bikes in
                var bike = bikes[device, default: Bike()]
                bike.state = report.state?.printable(limit: 30) ?? bike.state
                bike.lastEvent = report.event?.printable(limit: 30) ?? bike.lastEvent
                if let lat = report.lat, let lon = report.lon, (-90...90).contains(lat), (-180...180).contains(lon) {
                    (bike.latitude, bike.longitude) = (lat, lon)
                    bike.fixTime = (report.t ?? Date().timeIntervalSince1970) - (report.fix_age_s ?? 0)
                }
                bikes[device] = bike
            }
            return levels[1] == "event" ? "{\"device\":\(JSONLine.quoted(device))," + text.dropFirst() : nil
        default:
            return nil
        }
    }

    /// One line a bike: emergencies first, then the others by name; offline ones marked.
    func lines(now: Double) -> [String] {
        let emergency: Set<String> = ["alert_countdown", "emergency_sending", "emergency_sent", "emergency_sending_failed"]
        let sorted = bikes.withLock { $0 }.sorted { a, b in
            let (ea, eb) = (emergency.contains(a.value.state ?? ""), emergency.contains(b.value.state ?? ""))
            return ea != eb ? ea : a.key < b.key
        }
        return sorted.map { name, bike in
            var line = name.padding(12) + " " + (emergency.contains(bike.state ?? "") ? "EMERGENCY " : "") + (bike.state ?? "?")
            if bike.online == false { line += " (OFFLINE)" }
            if let lat = bike.latitude, let lon = bike.longitude {
                line += "  \(DecimalFormat.string(lat, decimals: 5)),\(DecimalFormat.string(lon, decimals: 5))"
                if let fixTime = bike.fixTime { line += ", \(Int(max(0, now - fixTime).rounded())) s old" }
                if let from { line += ", " + Bearing.text(from, (lat, lon)) }
            } else {
                line += "  no position"
            }
            if let event = bike.lastEvent { line += "  last: \(event)" }
            return line
        }
    }

}

private extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
