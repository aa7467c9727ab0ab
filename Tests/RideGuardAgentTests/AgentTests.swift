import Foundation
import Storage
import Testing

/// The real `rideguard run` and `rideguard demo` processes.
@Suite(.serialized) struct AgentTests {
    @Test func demoAlertsAndFollowsUp() throws {
        let result = try Rideguard.run(["demo", "--speed", "6", "--trace", Rideguard.fixtures.appendingPathComponent("example-lowside.csv").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("crash detected: bike down"))
        #expect(result.stdout.contains("buzzer: a beep every 2 s"))
        #expect(result.stdout.contains("SMS to +33•••••5678 (simulated modem):"))
        #expect(result.stdout.contains("This is Alex's RideGuard: I may have crashed."))
        #expect(result.stdout.contains("https://maps.google.com/?q=45.76420,4.83566"))
        #expect(result.stdout.contains("position update"))
        #expect(result.stdout.contains("demo over: 3 SMS sent (alert, location_update, location_update)"))
        #expect(!result.stdout.contains("612345678"))
    }

    @Test func demoWithImFineSendsNothing() throws {
        let result = try Rideguard.run(["demo", "--cancel", "--speed", "6", "--trace", Rideguard.fixtures.appendingPathComponent("example-lowside.csv").path])
        #expect(result.status == 0)
        #expect(result.stdout.contains("rider is fine: countdown cancelled, nothing sent"))
        #expect(result.stdout.contains("demo over: 0 SMS sent"))
    }

    /// An agent with its configuration: the simulated IMU plays the crash, gpsd (gpsfake) gives the
    /// position, the real modem code talks to the fake modem on a pty, contacts are in the database.
    func agent(modem: FakeModem, gps: GPSFake, folder: URL, trace: String = "example-lowside.csv",
               contacts: Bool = true) throws -> (config: URL, database: String) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let database = folder.appendingPathComponent("rideguard.sqlite").path
        let config = folder.appendingPathComponent("config.yaml")
        let yaml = """
            imu:
              simulated: true
              trace: \(Rideguard.fixtures.appendingPathComponent(trace).path)
              speed: 4
            gpio:
              simulated: true
            gps:
              gpsd: "127.0.0.1:\(gps.port)"
            modem:
              device: \(modem.link)
            workflow:
              countdown_s: 10
            database: \(database)
            control_socket: \(folder.appendingPathComponent("control.sock").path)
            """
        try Data(yaml.utf8).write(to: config)
        if contacts { try addContacts(database) }
        #expect(try Rideguard.run(["config", "check", "--config", config.path]).status == 0)
        return (config, database)
    }

    func addContacts(_ database: String) throws {
        for (name, number) in [("Sam", "+33612345678"), ("Jo", "+4915112345678")] {
            #expect(try Rideguard.run(["contacts", "add", name, number, "--database", database]).status == 0)
        }
        #expect(try Rideguard.run(["message", "set", "Crash! Call me.", "--database", database]).status == 0)
    }

    /// systemd's notification socket, as Type=notify gives it: what the agent tells systemd.
    final class NotifySocket {
        let path: String
        let fd: Int32
        private(set) var heard: [String] = []

        init(in folder: URL) {
            path = folder.appendingPathComponent("notify.sock").path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in Array(path.utf8).enumerated() { raw[i] = b } }
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// Listens until every one of `needles` was heard, or `seconds` pass.
        func listen(for needles: [String], seconds: Double) {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline && !needles.allSatisfy({ needle in heard.contains { $0.contains(needle) } }) {
                var buffer = [UInt8](repeating: 0, count: 512)
                let n = recv(fd, &buffer, buffer.count, 0)
                if n > 0 { heard.append(String(decoding: buffer[0..<n], as: UTF8.self)) }
            }
        }
    }

    @Test func withoutAContactItSaysWhyAndArmsOnceOneIsAdded() throws {
        let modem = try FakeModem()
        let gps = try GPSFake(log: NMEALog.movingRider(latitude: 45.1, longitude: 5.7, speed: 0, course: 0, seconds: 120))
        defer { gps.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-arm-\(UUID().uuidString)")
        let (config, database) = try agent(modem: modem, gps: gps, folder: folder, contacts: false)
        let notify = NotifySocket(in: folder)
        let process = try Spawned([Rideguard.binary.path, "run", "--config", config.path],
                                  environment: ["PATH=/usr/bin:/bin", "HOME=/tmp", "NOTIFY_SOCKET=\(notify.path)"])
        defer { process.kill(SIGTERM) }
        try waitForState(folder, "disarmed", seconds: 20)
        notify.listen(for: ["STATUS=not protecting: no emergency contact"], seconds: 10)
        #expect(notify.heard.contains { $0.contains("STATUS=not protecting: no emergency contact") })
        #expect(!notify.heard.contains { $0.contains("READY=1") }, "READY before the agent protects anyone")
        let journal = try Rideguard.run(["events", "--kind", "system", "--database", database])
        #expect(journal.stdout.contains("not protecting: no emergency contact"))
        try addContacts(database)
        notify.listen(for: ["READY=1"], seconds: 20)
        #expect(notify.heard.contains { $0.contains("READY=1\nSTATUS=protecting the rider") })
        try waitForState(folder, "armed", seconds: 5)
    }

    @Test func crashAlertsEveryContactWithTheMapLink() throws {
        let modem = try FakeModem()
        let gps = try GPSFake(log: NMEALog.movingRider(latitude: 45.1, longitude: 5.7, speed: 0, course: 0, seconds: 120))
        defer { gps.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-agent-\(UUID().uuidString)")
        let (config, database) = try agent(modem: modem, gps: gps, folder: folder)
        let log = folder.appendingPathComponent("agent.log").path
        let process = try Spawned([Rideguard.binary.path, "run", "--config", config.path], stdout: log, stderr: log)
        try waitFor(60) { modem.messages.count >= 2 }
        #expect(process.terminate() == 0)                    // SIGTERM: a graceful stop, exit code 0
        let texts = modem.messages
        #expect(Set(modem.received.map(\.decoded.number)) == ["+33612345678", "+4915112345678"])
        #expect(texts.allSatisfy { $0.hasPrefix("Crash! Call me.\nhttps://maps.google.com/?q=45.10000,5.70000") })
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(output.contains("] stopped"))
        #expect(!output.contains("612345678"))
        let events = try RideGuardDatabase(path: database).journal(kind: "alerts").map(\.text)
        #expect(events.contains("countdown over: alerting every contact"))
        // The trace around the crash was saved next to the database, and replays to the same verdict.
        let traces = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("traces").path)
        let saved = try #require(traces.first { $0.hasPrefix("crash-") && $0.hasSuffix(".csv") })
        let replay = try Rideguard.run(["replay", folder.appendingPathComponent("traces/\(saved)").path, "--json"])
        #expect(replay.status == 0)
        #expect(replay.stdout.contains("\"event\":\"crash_detected\""))
        #expect(try RideGuardDatabase(path: database).journal(kind: "detections").contains { $0.text.hasPrefix("saved the trace around the crash") })
    }

    @Test func killedWhileSendingEveryContactStillGetsTheAlert() throws {
        var script = FakeModem.Script()
        script.outcomes = [.silence]                                          // the first alert hangs
        let modem = try FakeModem(script: script)
        let gps = try GPSFake(log: NMEALog.movingRider(latitude: 45.1, longitude: 5.7, speed: 0, course: 0, seconds: 120))
        defer { gps.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-kill-\(UUID().uuidString)")
        let (config, database) = try agent(modem: modem, gps: gps, folder: folder)
        let first = try Spawned([Rideguard.binary.path, "run", "--config", config.path],
                                stdout: folder.appendingPathComponent("first.log").path, stderr: folder.appendingPathComponent("first.log").path)
        try waitFor(60) { modem.received.count >= 1 }
        first.kill(SIGKILL)
        #expect(try RideGuardDatabase(path: database).outbox.all().contains { $0.status == .sending })
        let second = try Spawned([Rideguard.binary.path, "run", "--config", config.path],
                                 stdout: folder.appendingPathComponent("second.log").path, stderr: folder.appendingPathComponent("second.log").path)
        try waitFor(60) { Set(modem.received.map(\.decoded.number)) == ["+33612345678", "+4915112345678"] && modem.received.count >= 3 }
        second.kill(SIGTERM)
        let alerts = try RideGuardDatabase(path: database).outbox.all().filter { $0.kind == "alert" }
        #expect(alerts.count == 2 && alerts.allSatisfy { $0.status == .sent })
        let secondLog = (try? String(contentsOfFile: folder.appendingPathComponent("second.log").path, encoding: .utf8)) ?? ""
        #expect(secondLog.contains("resumed in state emergencySending after a restart"))
    }

    func status(_ folder: URL) throws -> [String: Any] {
        let result = try Rideguard.run(["status", "--json", "--socket", folder.appendingPathComponent("control.sock").path])
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
    }

    func waitForState(_ folder: URL, _ state: String, seconds: Double = 60) throws {
        try waitFor(seconds) { ((try? status(folder))?["state"] as? String) == state }
    }

    @Test func imFineThroughTheControlSocketSendsNothing() throws {
        let modem = try FakeModem()
        let gps = try GPSFake(log: NMEALog.movingRider(latitude: 45.1, longitude: 5.7, speed: 0, course: 0, seconds: 120))
        defer { gps.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-ctl-\(UUID().uuidString)")
        let (config, _) = try agent(modem: modem, gps: gps, folder: folder)
        let process = try Spawned([Rideguard.binary.path, "run", "--config", config.path])
        defer { process.kill(SIGTERM) }
        try waitForState(folder, "armed", seconds: 20)
        let armed = try status(folder)
        #expect(armed["contacts"] as? Int == 2)
        #expect(((armed["sensor"] as? [String: Any])?["samples"] as? Int ?? 0) > 0)
        try waitForState(folder, "alertCountdown")
        let press = try Rideguard.run(["ctl", "press", "--hold", "1.5", "--socket", folder.appendingPathComponent("control.sock").path])
        #expect(press.status == 0, "\(press.stderr)")
        try waitForState(folder, "armed", seconds: 10)
        usleep(12_000_000)                                     // past the end of the countdown
        #expect(modem.received.isEmpty)
        let human = try Rideguard.run(["status", "--socket", folder.appendingPathComponent("control.sock").path])
        #expect(human.stdout.contains("state: armed") && human.stdout.contains("outbox: 0 pending; contacts: 2"))
    }

    @Test func longHoldAfterTheAlertSendsTheAllClearToEveryoneAlerted() throws {
        let modem = try FakeModem()
        let gps = try GPSFake(log: NMEALog.movingRider(latitude: 45.1, longitude: 5.7, speed: 0, course: 0, seconds: 120))
        defer { gps.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-clear-\(UUID().uuidString)")
        let (config, _) = try agent(modem: modem, gps: gps, folder: folder)
        let process = try Spawned([Rideguard.binary.path, "run", "--config", config.path])
        defer { process.kill(SIGTERM) }
        try waitForState(folder, "emergencySent")
        #expect(try Rideguard.run(["ctl", "press", "--hold", "3.5", "--socket", folder.appendingPathComponent("control.sock").path]).status == 0)
        try waitFor(30) { modem.messages.count >= 4 }
        let clears = modem.received.filter { $0.decoded.text.contains("the rider cancelled the alert") }
        #expect(Set(clears.map(\.decoded.number)) == ["+33612345678", "+4915112345678"])
        try waitForState(folder, "emergencyEnded", seconds: 10)
    }

    @Test func aNormalRideSendsNothingAndSystemdHearsFromUs() throws {
        let modem = try FakeModem()
        let gps = try GPSFake(log: NMEALog.movingRider(latitude: 45.1, longitude: 5.7, speed: 10, course: 0, seconds: 120))
        defer { gps.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rideguard-ride-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let ride = folder.appendingPathComponent("ride.csv")
        #expect(try Rideguard.run(["synth", "--out", folder.path, "--seed", "12", "--scenario", "normal_ride", "--count", "1",
                                   "--riding-scale", "0.1", "--rate", "100"]).status == 0)
        try FileManager.default.moveItem(at: folder.appendingPathComponent("0001-normal_ride.csv"), to: ride)
        var (config, _) = try agent(modem: modem, gps: gps, folder: folder, trace: "example-lowside.csv")
        let yaml = try String(contentsOf: config, encoding: .utf8)
            .replacingOccurrences(of: Rideguard.fixtures.appendingPathComponent("example-lowside.csv").path, with: ride.path)
            .replacingOccurrences(of: "speed: 4", with: "speed: 8")
        config = folder.appendingPathComponent("ride.yaml")
        try Data(yaml.utf8).write(to: config)
        let notify = NotifySocket(in: folder)
        let process = try Spawned([Rideguard.binary.path, "run", "--config", config.path],
                                  environment: ["PATH=/usr/bin:/bin", "HOME=/tmp", "NOTIFY_SOCKET=\(notify.path)"])
        notify.listen(for: ["READY=1", "WATCHDOG=1"], seconds: 20)
        #expect(notify.heard.contains { $0.contains("READY=1") })
        #expect(notify.heard.contains { $0.contains("WATCHDOG=1") })
        usleep(15_000_000)                                     // the rest of the ride at ×8
        process.kill(SIGTERM)
        #expect(modem.received.isEmpty)
    }
}
