// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
import AgentTestSupport
import RideGuardTestSupport
import Testing
import RideGuardConfig

@Suite struct ConfigurationFileTests {
    func problems(_ yaml: String) -> [ConfigurationFileError.Problem] {
        do {
            _ = try ConfigurationFile.parse(yaml, source: "config.yaml")
            return []
        } catch {
            return error.problems
        }
    }

    @Test func theExampleIsTheDefaults() throws {
        let parsed = try ConfigurationFile.parse(ConfigurationFile.example, source: "example")
        #expect(parsed == AgentConfiguration())
        #expect(try ConfigurationFile.parse("", source: "empty") == AgentConfiguration())
    }

    @Test func valuesAreRead() throws {
        let c = try ConfigurationFile.parse("""
            imu:
              simulated: true
              trace: /tmp/ride.csv
              speed: 4
            gps:
              simulated: true
              fixed_position: [45.1, 5.7]
            modem:
              simulated: true
              pin: "0000"
            workflow:
              countdown_s: 30
            messages:
              language: fr
              map_link: openstreetmap
            detector:
              restConfirmationSeconds: 2
            """, source: "x")
        #expect(c.imu.simulated && c.imu.trace == "/tmp/ride.csv" && c.imu.speed == 4)
        #expect(c.gps.fixedPosition == [45.1, 5.7])
        #expect(c.modem.pin == "0000")
        #expect(c.workflow.countdownSeconds == 30)
        #expect(c.messages.language == .fr && c.messages.mapLink == .openstreetmap)
        #expect(c.detector.restConfirmationSeconds == 2)
    }

    @Test func everyProblemNamesItsLineAndKey() {
        let found = problems("""
            imu:
              rate_hz: fast
            gpio:
              buzer: GPIO18
            workflow:
              countdown_s: 5
            messages:
              language: klingon
            detector:
              lyingAngle: 60
            modme:
              device: /dev/ttyUSB2
            """)
        #expect(found.contains(.init(line: 2, key: "imu.rate_hz", reason: "'fast' is not a number")))
        #expect(found.contains(.init(line: 4, key: "gpio.buzer", reason: "unknown key (did you mean buzzer?)")))
        #expect(found.contains(.init(line: 5, key: "workflow", reason: "countdownSeconds must be 10...300")))
        #expect(found.contains(.init(line: 8, key: "messages.language", reason: "'klingon' is not one of en, fr, de, es, it")))
        #expect(found.contains { $0.line == 10 && $0.key == "detector.lyingAngle" && $0.reason.contains("unknown detector setting") })
        #expect(found.contains(.init(line: 11, key: "modme", reason: "unknown section (did you mean modem?)")))
    }

    /// The broker for fleets and groups: the url gives host, port (the scheme's default) and TLS;
    /// absent, there is no `mqtt` at all.
    @Test func theMQTTSectionIsRead() throws {
        #expect(try ConfigurationFile.parse("", source: "c").mqtt == nil)
        let tls = try #require(try ConfigurationFile.parse("""
            mqtt:
              url: mqtts://broker.example.org
              username: bike1
              password_file: /etc/rideguard/mqtt-password
              ca_file: /etc/rideguard/fleet-ca.crt
              topic_prefix: fleet/berlin
              device: courier-7
              keepalive_s: 60
            """, source: "c").mqtt)
        #expect(tls.endpoint?.host == "broker.example.org" && tls.endpoint?.port == 8883 && tls.endpoint?.tls == true)
        #expect(tls.username == "bike1" && tls.passwordFile == "/etc/rideguard/mqtt-password" && tls.caFile == "/etc/rideguard/fleet-ca.crt")
        #expect(tls.topicPrefix == "fleet/berlin" && tls.device == "courier-7" && tls.keepaliveSeconds == 60)
        let plain = try #require(try ConfigurationFile.parse("mqtt:\n  url: mqtt://10.0.0.2:1884/\n", source: "c").mqtt)
        #expect(plain.endpoint?.host == "10.0.0.2" && plain.endpoint?.port == 1884 && plain.endpoint?.tls == false)
        #expect(plain.topicPrefix == "rideguard" && plain.device == nil && plain.keepaliveSeconds == 30)
    }

    /// Each mistake in `mqtt:` names its line and key; a password written in the file is refused
    /// with what to do instead.
    @Test func mqttMistakesAreNamed() {
        let found = problems("""
            mqtt:
              url: http://broker:1883
              password: hunter2
              cert_file: /etc/rideguard/bike.crt
              topic_prefix: fleet/+/berlin
              device: bikes/7
              keepalive_s: 1
              ca_file: relative/ca.crt
            """)
        #expect(found.contains { $0.line == 2 && $0.key == "mqtt.url" && $0.reason.contains("is not mqtt://HOST[:PORT]") }, "\(found)")
        #expect(found.contains { $0.line == 3 && $0.key == "mqtt.password" && $0.reason.contains("password_file") })
        #expect(found.contains { $0.key == "mqtt.cert_file" && $0.reason.contains("key_file") })
        #expect(found.contains { $0.key == "mqtt.topic_prefix" && $0.reason.contains("wildcards") })
        #expect(found.contains { $0.key == "mqtt.device" && $0.reason.contains("one topic level") })
        #expect(found.contains { $0.key == "mqtt.keepalive_s" })
        #expect(found.contains { $0.key == "mqtt.ca_file" && $0.reason.contains("absolute") })
        for url in ["mqtt://", "mqtt://host:0", "mqtt://host:99999", "mqtt://user@host", "mqtts://host/path", "host:1883"] {
            #expect(problems("mqtt:\n  url: \(url)\n").contains { $0.key == "mqtt.url" }, "\(url)")
        }
        #expect(problems("mqtt:\n  url: mqtt://host\n  ca_file: /ca.crt\n").contains { $0.key == "mqtt.url" && $0.reason.contains("mqtts://") })
    }

    /// `traccar:` and `group:` are read and checked like the rest; a group needs a broker.
    @Test func traccarAndGroupAreReadAndTheirMistakesNamed() throws {
        let traccar = try #require(try ConfigurationFile.parse("traccar:\n  url: https://t.example.org:5055\n  device: bike1\n  interval_s: 10\n",
                                                               source: "c").traccar)
        #expect(traccar.url == "https://t.example.org:5055" && traccar.device == "bike1" && traccar.intervalSeconds == 10 && traccar.parkedIntervalSeconds == 900)
        let found = problems("""
            traccar:
              url: mqtt://t.example.org
              interval_s: 1
              ca_file: ca.crt
            group:
              name: sunday/ride
              dismiss_s: 5
            """)
        #expect(found.contains { $0.key == "traccar.url" && $0.reason.contains("http://HOST:PORT") }, "\(found)")
        #expect(found.contains { $0.key == "traccar.interval_s" })
        #expect(found.contains { $0.key == "traccar.ca_file" && $0.reason.contains("absolute") })
        #expect(found.contains { $0.key == "group" && $0.reason.contains("mqtt:") })
        #expect(found.contains { $0.key == "group.name" && $0.reason.contains("one topic level") })
        #expect(found.contains { $0.key == "group.dismiss_s" })
    }

    /// Values the system would refuse only at run time are refused by `config check`, each with
    /// its line and key.
    @Test func limitsTheSystemWouldEnforceLaterAreCheckedNow() {
        let longSocket = "/run/" + String(repeating: "rideguard-", count: 11) + "/control.sock"
        let hugeDatabase = "/var/lib/" + String(repeating: "folder/", count: 700) + "rideguard.sqlite"
        let longName = "/var/lib/rideguard/" + String(repeating: "x", count: 300) + ".sqlite"
        let found = problems("""
            modem:
              pin: "٣٣٣٣"
            control_socket: \(longSocket)
            database: \(hugeDatabase)
            """)
        #expect(found.contains(.init(line: 2, key: "modem.pin", reason: "must be 4 to 8 digits 0-9")), "\(found)")
        #expect(found.contains(.init(line: 3, key: "control_socket",
                                     reason: "is \(longSocket.utf8.count) bytes long: a Unix socket path holds at most 107 (use e.g. /run/rideguard/control.sock)")))
        #expect(found.contains(.init(line: 4, key: "database", reason: "is \(hugeDatabase.utf8.count) bytes long: a path holds at most 4095")))
        #expect(problems("database: \(longName)").contains { $0.line == 1 && $0.key == "database" && $0.reason.contains("has a name of 307 bytes") })
        // The limits themselves pass.
        #expect(problems("control_socket: /" + String(repeating: "s", count: 106) + "\nmodem:\n  pin: \"0000\"").isEmpty)
    }

    /// Every scalar is read as text by its key's type: YAML 1.1's yes/no/on/off still work, an
    /// empty section is allowed, and a position must be two numbers.
    @Test func scalarsAreReadByTheirKey() throws {
        let c = try ConfigurationFile.parse("""
            gpio:
              simulated: Yes
            modem:
              simulated: on
            gps:
              simulated: TRUE
              fixed_position: [-33.9, 1.5e2]
            imu:
            workflow: ~
            """, source: "x")
        #expect(c.gpio.simulated && c.modem.simulated && c.gps.simulated)
        #expect(c.gps.fixedPosition == [-33.9, 150])
        #expect(try !ConfigurationFile.parse("gpio:\n  simulated: off\n", source: "x").gpio.simulated)
        #expect(problems("gpio:\n  simulated: maybe\n") == [.init(line: 2, key: "gpio.simulated", reason: "'maybe' is not true or false")])
        #expect(problems("gps:\n  fixed_position: [north, 5]\n") == [.init(line: 2, key: "gps.fixed_position", reason: "expected [latitude, longitude]")])
        #expect(problems("imu: fast\n") == [.init(line: 1, key: "imu", reason: "expected keys under it")])
        #expect(problems("imu: \"\"\n") == [.init(line: 1, key: "imu", reason: "expected keys under it")])
    }

    @Test func baudIsAWholeSupportedSpeed() {
        #expect(problems("modem:\n  baud: 115200.5\n") == [.init(line: 2, key: "modem.baud", reason: "'115200.5' is not a whole number")])
        #expect(problems("modem:\n  baud: 1234\n").first?.reason
                == "is not a supported speed (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600)")
        #expect(problems("modem:\n  baud: 921600\n").isEmpty)
    }

    @Test func simulatedIMUNeedsATrace() {
        #expect(problems("imu:\n  simulated: true\n").contains(.init(line: 1, key: "imu.trace", reason: "a simulated IMU needs a trace file to play")))
    }

    @Test func brokenYAMLIsOneClearError() {
        let found = problems("imu:\n  rate_hz: [200\n")
        #expect(found.count == 1)
        #expect(found.first?.reason.hasPrefix("not valid YAML") == true)
    }

    @Test func yamlAsWrittenByHand() throws {
        // Anchors and aliases, quoted scalars, flow style, comments, CR LF line ends: all read.
        let text = "# bike\r\ngps: &gps\r\n  fixed_position: [45.1, 5.7]\r\nmodem: {baud: \"9600\"}\r\nimu:\r\n  rate_hz: 200\r\n"
        let configuration = try ConfigurationFile.parse(text, source: "t.yaml")
        #expect(configuration.modem.baud == 9600 && configuration.imu.rateHz == 200)
        #expect(configuration.gps.fixedPosition == [45.1, 5.7])
        // A key given twice is refused with both lines: which one the rider meant cannot be guessed.
        #expect(problems("modem:\n  baud: 9600\n  baud: 19200\n")
                == [.init(line: 3, key: "file", reason: "not valid YAML: 'baud' appears twice (first on line 2): which one is meant?")])
        // A second document, an alias to nothing, a tab for indentation: each one error with its line.
        #expect(problems("modem:\n  baud: 9600\n---\nimu: {}\n") == [.init(line: 3, key: "file", reason: "not valid YAML: a second document (---): the configuration is one document")])
        #expect(problems("modem: *nothing\n").first?.reason == "not valid YAML: no anchor named &nothing before *nothing")
        let tab = problems("modem:\n\tbaud: 9600\n")
        #expect(tab.count == 1 && tab.first?.line == 2 && tab.first?.reason.hasPrefix("not valid YAML: found character that cannot start any token") == true, "\(tab)")
    }

    @Test func configCheckCommand() throws {
        let good = try Rideguard.temporaryFile("good.yaml", contents: Data("modem:\n  baud: 9600\n".utf8))
        let ok = Rideguard.inProcess(["config", "check", "--config", good.path])
        #expect(ok.status == 0)
        #expect(ok.stdout.contains("modem: /dev/rideguard-modem-at at 9600 baud"))
        let bad = try Rideguard.temporaryFile("bad.yaml", contents: Data("modem:\n  baud: 1234\n".utf8))
        let failed = Rideguard.inProcess(["config", "check", "--config", bad.path])
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("bad.yaml:2: modem.baud: is not a supported speed"))
        let example = Rideguard.inProcess(["config", "example"])
        #expect(example.stdout == ConfigurationFile.example)
        let missing = Rideguard.inProcess(["config", "check", "--config", "/nonexistent.yaml"])
        #expect(missing.status == 1 && missing.stderr.contains("/nonexistent.yaml: file: cannot read"))
    }
}
