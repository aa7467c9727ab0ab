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
    func agent(modem: FakeModem, gps: GPSFake, folder: URL, trace: String = "example-lowside.csv") throws -> (config: URL, database: String) {
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
            """
        try Data(yaml.utf8).write(to: config)
        for (name, number) in [("Sam", "+33612345678"), ("Jo", "+4915112345678")] {
            #expect(try Rideguard.run(["contacts", "add", name, number, "--database", database]).status == 0)
        }
        #expect(try Rideguard.run(["message", "set", "Crash! Call me.", "--database", database]).status == 0)
        #expect(try Rideguard.run(["config", "check", "--config", config.path]).status == 0)
        return (config, database)
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
        process.kill(SIGTERM)
        let texts = modem.messages
        #expect(Set(modem.received.map(\.decoded.number)) == ["+33612345678", "+4915112345678"])
        #expect(texts.allSatisfy { $0.hasPrefix("Crash! Call me.\nhttps://maps.google.com/?q=45.10000,5.70000") })
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(output.contains("stopped"))                                  // graceful on SIGTERM
        #expect(!output.contains("612345678"))
        let events = try RideGuardDatabase(path: database).journal(kind: "alerts").map(\.text)
        #expect(events.contains("countdown over: alerting every contact"))
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
}
