// SPDX-License-Identifier: Apache-2.0
/// Everything `rideguard run` is configured with, with a default for every value. Loaded and
/// validated once at start (see RideGuardAgent's ConfigurationFile); parts are passed down by value.
package struct AgentConfiguration: Equatable, Sendable {
    package struct IMU: Equatable, Sendable {
        /// Replay `trace` instead of reading the sensor.
        package var simulated = false
        package var uri = "local:"
        package var device: String?
        package var rateHz = 200.0
        package var trace: String?
        /// Simulated: play the trace this many times faster than real time.
        package var speed = 1.0
    }

    package struct GPIO: Equatable, Sendable {
        package var simulated = false
        /// A line name (`GPIO18`) or `chip:offset` (`pinctrl-rp1:18`).
        package var buzzer = "GPIO18"
        package var button = "GPIO17"
        package var buttonActiveLow = true
        /// The bike's switched supply through an optocoupler (boards/wiring.md), where one is wired:
        /// off parks the bike at once, on ends parked. nil: not wired.
        package var ignition: String?
        /// An optocoupler's transistor pulls the line to ground while the ignition is on.
        package var ignitionActiveLow = true
    }

    /// The Pi's own power, for Pis kept alive by a UPS HAT or a supercapacitor.
    package struct Power: Equatable, Sendable {
        /// Power the Pi off cleanly once the ignition has been off this long, never while an
        /// emergency is under way; nil: never, seconds.
        package var shutdownAfterIgnitionOffSeconds: Double?
        /// What powers it off (logind, allowed to the rideguard user by the package's polkit rule).
        package var shutdownCommand = ["/usr/bin/systemctl", "poweroff"]
    }

    package struct GPS: Equatable, Sendable {
        package var simulated = false
        package var gpsd = "127.0.0.1:2947"
        /// Simulated: where the bike is.
        package var fixedPosition: [Double]?
    }

    package struct Modem: Equatable, Sendable {
        /// Print what would be sent instead of sending.
        package var simulated = false
        package var device = "/dev/rideguard-modem-at"
        package var baud = 115_200
        package var pin: String?

        /// Serial speeds the modem port can be set to.
        package static let supportedBauds = [9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 921_600]
    }

    /// Ringing the contacts after the alert went out, until one answers or replies OK.
    package struct Calls: Equatable, Sendable {
        /// nil: whenever the modem can make voice calls (it answers `AT+CLCC=?`).
        package var enabled: Bool?
        /// How long each call rings before it is hung up, seconds.
        package var ringSeconds = 30.0
        /// Rounds through every contact, at most.
        package var rounds = 3
        /// A round starts this long after the one before started, seconds.
        package var intervalSeconds = 300.0
    }

    package struct Messages: Equatable, Sendable {
        package var language = MessageLanguage.en
        package var mapLink = MapLinkStyle.google
        /// The self-test SMS to the rider's own phone, every this many days; 0: never.
        package var selfTestDays = 30
    }

    /// An MQTT broker to report to (fleets, riding groups); `mqtt:`, absent by default.
    package struct MQTT: Equatable, Sendable {
        /// `mqtt://host[:1883]` or `mqtts://host[:8883]` (TLS).
        package var url = ""
        package var username: String?
        /// A file holding the password: never the password itself in the configuration.
        package var passwordFile: String?
        /// The CA that signed the broker's certificate (mqtts); without it, the system's CAs.
        package var caFile: String?
        /// A client certificate and its key, for a broker that asks for one (both or neither).
        package var certFile: String?
        package var keyFile: String?
        package var topicPrefix = "rideguard"
        /// This bike's name in the topics; nil: the hostname.
        package var device: String?
        package var keepaliveSeconds = 30
        /// While the position moves, the retained state is published at most this often, s.
        package var stateIntervalSeconds = 30.0
        /// With it, the position also goes to `owntracks/<user>/<device>` (OwnTracks' format).
        package var owntracksUser: String?

        /// The broker's address, read from `url`; nil when `url` is not one.
        package var endpoint: (host: String, port: Int, tls: Bool)? {
            let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == "mqtt" || parts[0] == "mqtts" else { return nil }
            let tls = parts[0] == "mqtts"
            var authority = Substring(parts[1])
            if authority.hasSuffix("/") { authority = authority.dropLast() }
            guard !authority.contains("/"), !authority.contains("@") else { return nil }
            let hostAndPort = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard (1...2).contains(hostAndPort.count), !hostAndPort[0].isEmpty else { return nil }
            guard hostAndPort.count == 2 else { return (String(hostAndPort[0]), tls ? 8883 : 1883, tls) }
            guard let port = Int(hostAndPort[1]), (1...65_535).contains(port) else { return nil }
            return (String(hostAndPort[0]), port, tls)
        }

        package init() {}
    }

    package var imu = IMU()
    package var gpio = GPIO()
    package var gps = GPS()
    package var modem = Modem()
    package var detector = DetectorConfiguration()
    package var workflow = WorkflowConfiguration()
    package var messages = Messages()
    package var calls = Calls()
    package var power = Power()
    /// A Traccar server (`traccar:`), spoken to with its OsmAnd protocol; absent by default.
    package var traccar: Traccar?

    package struct Traccar: Equatable, Sendable {
        /// Traccar's OsmAnd port: `http(s)://host:5055`.
        package var url = ""
        /// The device's identifier in Traccar; nil: the hostname.
        package var device: String?
        /// A position this often while riding, s.
        package var intervalSeconds = 30.0
        /// And this often when stopped or parked (a position that has not moved is not sent again).
        package var parkedIntervalSeconds = 900.0
        /// The CA of an https server's certificate; without it, the system's CAs.
        package var caFile: String?
        package init() {}
    }

    /// A riding group (`group:`), over the `mqtt:` broker: the members hear each other's alerts.
    package var group: Group?

    package struct Group: Equatable, Sendable {
        package var name = ""
        /// A member's alert is heard this long at most, s.
        package var dismissSeconds = 1800.0
        package init() {}
    }
    package var mqtt: MQTT?

    /// The web page for the rider's phone (`rideguard web`, its own service).
    package struct Web: Equatable, Sendable {
        /// ADDRESS:PORT it listens on; 0.0.0.0 is every network the Pi is on (its hotspot, the phone's).
        package var listen = "0.0.0.0:8080"
        /// The address pairing links name; nil: the Pi's own address on its first network.
        package var address: String?
        /// A paired phone that has not opened the page for this many days must pair again.
        package var sessionDays = 180.0

        package var endpoint: (host: String, port: Int)? {
            let parts = listen.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[0].split(separator: ".").count == 4,
                  parts[0].split(separator: ".").allSatisfy({ UInt8($0) != nil }),
                  let port = Int(parts[1]), (1...65_535).contains(port) else { return nil }
            return (String(parts[0]), port)
        }

        package init() {}
    }

    package var web = Web()
    package var database = "/var/lib/rideguard/rideguard.sqlite"
    /// Delivered (or given-up) messages and journal lines older than this are pruned (`database:
    /// {path: …, keep_days: …}`).
    package var keepDays = 365
    package var controlSocket = "/run/rideguard/control.sock"

    package init() {}

    /// Problems across the whole configuration, each naming its key.
    package func validationErrors() -> [ConfigurationError] {
        var errors: [ConfigurationError] = []
        func check(_ ok: Bool, _ key: String, _ reason: String) {
            if !ok { errors.append(ConfigurationError(key: key, reason: reason)) }
        }
        /// A name that stands as one level of an MQTT topic.
        func checkTopicLevel(_ name: String, _ key: String) {
            check(!name.isEmpty && !name.contains { "/+#".contains($0) }, key, "must be one topic level: no /, + or #")
        }
        check(imu.rateHz >= 10 && imu.rateHz <= 4000, "imu.rate_hz", "must be 10...4000 Hz")
        check(!imu.simulated || imu.trace != nil, "imu.trace", "a simulated IMU needs a trace file to play")
        check(imu.speed > 0 && imu.speed <= 1000, "imu.speed", "must be above 0 and at most 1000")
        check(imu.uri == "local:" || imu.uri.hasPrefix("ip:") || imu.uri.hasPrefix("usb:") || imu.uri.hasPrefix("serial:"),
              "imu.uri", "must be local:, ip:HOST[:PORT], usb:… or serial:…")
        check(!gpio.buzzer.isEmpty, "gpio.buzzer", "needs a line name (GPIO18) or chip:offset")
        check(!gpio.button.isEmpty, "gpio.button", "needs a line name (GPIO17) or chip:offset")
        if let ignition = gpio.ignition {
            check(!ignition.isEmpty && ignition != gpio.button && ignition != gpio.buzzer, "gpio.ignition",
                  "needs a line of its own (a name such as GPIO27, or chip:offset)")
        }
        if let delay = power.shutdownAfterIgnitionOffSeconds {
            check((10...86_400).contains(delay), "power.shutdown_after_ignition_off_s", "must be 10...86400 s")
            check(gpio.ignition != nil, "power.shutdown_after_ignition_off_s", "needs gpio.ignition: without it the ignition is never seen off")
        }
        check(!power.shutdownCommand.isEmpty && power.shutdownCommand[0].hasPrefix("/"), "power.shutdown_command",
              "must start with an absolute path, such as /usr/bin/systemctl poweroff")
        check(GPSDAddress(gps.gpsd) != nil, "gps.gpsd", "must be HOST:PORT")
        if let position = gps.fixedPosition {
            check(position.count == 2 && abs(position[0]) <= 90 && abs(position[1]) <= 180,
                  "gps.fixed_position", "must be [latitude, longitude]")
        }
        check(modem.simulated || modem.device.hasPrefix("/"), "modem.device", "must be a device path such as /dev/ttyUSB2")
        check(Modem.supportedBauds.contains(modem.baud), "modem.baud",
              "is not a supported speed (\(Modem.supportedBauds.map(String.init).joined(separator: ", ")))")
        // ASCII digits only: "٣٣٣٣" is a number to Unicode, not to a SIM.
        if let pin = modem.pin { check((4...8).contains(pin.count) && pin.utf8.allSatisfy { (0x30...0x39).contains($0) }, "modem.pin", "must be 4 to 8 digits 0-9") }
        check((10...120).contains(calls.ringSeconds), "calls.ring_s", "must be 10...120 s")
        check((1...10).contains(calls.rounds), "calls.rounds", "must be 1...10")
        check((0...365).contains(messages.selfTestDays), "messages.self_test_days", "must be 0 (never) or 1...365")
        check((60...3600).contains(calls.intervalSeconds), "calls.interval_s", "must be 60...3600 s")
        for problem in detector.validationErrors() {
            errors.append(ConfigurationError(key: "detector." + (problem.split(separator: " ").first.map(String.init) ?? ""), reason: problem))
        }
        for problem in workflow.validationErrors() {
            errors.append(ConfigurationError(key: "workflow", reason: problem))
        }
        if let mqtt {
            check(mqtt.endpoint != nil, "mqtt.url", "'\(mqtt.url)' is not mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
            check((mqtt.certFile == nil) == (mqtt.keyFile == nil), "mqtt.cert_file", "a client certificate needs its key (key_file), and a key its certificate")
            check(mqtt.endpoint?.tls ?? true || (mqtt.caFile == nil && mqtt.certFile == nil), "mqtt.url",
                  "ca_file and cert_file are for TLS: use mqtts://")
            let levels = mqtt.topicPrefix.split(separator: "/", omittingEmptySubsequences: false)
            check(!levels.contains { $0.isEmpty || $0.contains("+") || $0.contains("#") }, "mqtt.topic_prefix",
                  "must be topic levels without wildcards (+, #) or empty levels, such as rideguard or fleet/berlin")
            if let device = mqtt.device {
                checkTopicLevel(device, "mqtt.device")
            }
            check((5...3600).contains(mqtt.keepaliveSeconds), "mqtt.keepalive_s", "must be 5...3600 s")
            check((5...3600).contains(mqtt.stateIntervalSeconds), "mqtt.state_interval_s", "must be 5...3600 s")
            if let user = mqtt.owntracksUser {
                checkTopicLevel(user, "mqtt.owntracks_user")
            }
            for (key, path) in [("mqtt.password_file", mqtt.passwordFile), ("mqtt.ca_file", mqtt.caFile),
                                ("mqtt.cert_file", mqtt.certFile), ("mqtt.key_file", mqtt.keyFile)] {
                guard let path else { continue }
                check(path.hasPrefix("/"), key, "must be an absolute path")
                if let problem = PathLimits.problem(path) { errors.append(ConfigurationError(key: key, reason: problem)) }
            }
        }
        check(web.endpoint != nil, "web.listen", "'\(web.listen)' is not IPV4-ADDRESS:PORT, such as 0.0.0.0:8080 (every network) or 127.0.0.1:8080 (this Pi only)")
        check((1...3650).contains(web.sessionDays), "web.session_days", "must be 1...3650 days")
        if let address = web.address { check(!address.isEmpty && !address.contains { " /?#@".contains($0) }, "web.address", "must be a host name or an address, such as 192.168.4.1") }
        if let traccar {
            let scheme = traccar.url.split(separator: "://", maxSplits: 1).first
            check((scheme == "http" || scheme == "https") && traccar.url.split(separator: "://").count == 2 && !traccar.url.contains(" "),
                  "traccar.url", "'\(traccar.url)' is not http://HOST:PORT or https://HOST:PORT (Traccar's OsmAnd port, 5055 by default)")
            check((5...3600).contains(traccar.intervalSeconds), "traccar.interval_s", "must be 5...3600 s")
            check((60...86_400).contains(traccar.parkedIntervalSeconds), "traccar.parked_interval_s", "must be 60...86400 s")
            if let device = traccar.device { check(!device.isEmpty, "traccar.device", "must not be empty") }
            if let caFile = traccar.caFile {
                check(caFile.hasPrefix("/"), "traccar.ca_file", "must be an absolute path")
                check(scheme == "https", "traccar.ca_file", "is for https://")
            }
        }
        if let group {
            check(mqtt != nil, "group", "a riding group needs the mqtt: section (its broker)")
            checkTopicLevel(group.name, "group.name")
            check((60...86_400).contains(group.dismissSeconds), "group.dismiss_s", "must be 60...86400 s")
        }
        check(database.hasPrefix("/") || database.hasPrefix("."), "database", "must be a file path")
        check((7...3650).contains(keepDays), "database.keep_days", "must be 7...3650 days")
        // Paths the system would refuse only when the agent uses them.
        let paths = [("database", database), ("control_socket", controlSocket), ("imu.trace", imu.trace ?? ""),
                     ("imu.device", imu.device ?? ""), ("modem.device", modem.device)]
        for (key, path) in paths { if let problem = PathLimits.problem(path) { errors.append(ConfigurationError(key: key, reason: problem)) } }
        let socketBytes = controlSocket.utf8.count
        check(socketBytes <= PathLimits.unixSocket, "control_socket",
              "is \(socketBytes) bytes long: a Unix socket path holds at most \(PathLimits.unixSocket) (use e.g. /run/rideguard/control.sock)")
        return errors
    }
}

/// What Linux accepts as a path: at most 4095 bytes, each name at most 255, no NUL byte; a Unix
/// socket's path at most 107 bytes.
package enum PathLimits {
    package static let path = 4095
    package static let name = 255
    package static let unixSocket = 107

    /// Why the system would refuse `path`, or nil.
    package static func problem(_ path: String) -> String? {
        let bytes = path.utf8.count
        if bytes > Self.path { return "is \(bytes) bytes long: a path holds at most \(Self.path)" }
        if path.utf8.contains(0) { return "contains a NUL character" }
        if let long = path.split(separator: "/").first(where: { $0.utf8.count > name }) {
            return "has a name of \(long.utf8.count) bytes ('\(long.prefix(12))…'): at most \(name) per name"
        }
        return nil
    }
}

/// gpsd's address, HOST:PORT (`gps.gpsd`, `--gpsd`): read in one place, so that the configuration,
/// the agent, `doctor`, `location` and `record` agree on what is one.
package struct GPSDAddress: Equatable, Sendable, CustomStringConvertible {
    package var host: String
    package var port: Int

    /// Nil unless `text` is HOST:PORT with a port from 1 to 65535 (the last colon splits, so an IPv6
    /// host in brackets works).
    package init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), colon > text.startIndex,
              let port = Int(text[text.index(after: colon)...]), (1...65_535).contains(port) else { return nil }
        host = String(text[..<colon])
        self.port = port
    }

    package var description: String { "\(host):\(port)" }
}
