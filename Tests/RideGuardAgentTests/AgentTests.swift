// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
import Storage
import AgentTestSupport
import RideGuardTestSupport
import Testing
import AgentControl

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
        // After the alert, the simulated call round: Sam's phone rings out, and again next round.
        #expect(result.stdout.contains("calling +33•••••5678 (simulated modem): ringing for 4 s"))
        #expect(result.stdout.contains("call to Sam (+33•••••5678): no answer in 4 s (simulated)"))
        #expect(result.stdout.contains("calls: nobody answered round 1 of 3; the next in 2 s"))
        #expect(result.stdout.contains("demo over: 3 SMS sent (alert, location_update, location_update)"))
        #expect(!result.stdout.contains("612345678"))
    }

    @Test func demoWithImFineSendsNothing() throws {
        let result = try Rideguard.run(["demo", "--cancel", "--speed", "20", "--trace", Rideguard.fixtures.appendingPathComponent("example-lowside.csv").path])
        #expect(result.status == 0)
        #expect(result.stdout.contains("rider is fine: countdown cancelled, nothing sent"))
        #expect(result.stdout.contains("demo over: 0 SMS sent"))
    }

    /// An agent's surroundings: the simulated IMU plays `trace` at ×`playback`, gpsd (fed by
    /// gpsfake) puts the rider at 45.1, 5.7, the real modem code talks to `modem` on a pty, and two
    /// contacts and a message are in the database unless `contacts` is false. gpsd stops with it.
    final class Rig {
        let modem: FakeModem
        let gps: GPSFake
        let folder: URL
        let config: URL
        let database: String
        var socket: String { folder.appendingPathComponent("control.sock").path }

        init(_ name: String, modem: FakeModem? = nil, riderSpeed: Double = 0,
             trace: URL = Rideguard.fixtures.appendingPathComponent("example-lowside.csv"), playback: Double = 4,
             contacts: Bool = true, imu: String? = nil, calls: String = "", database: String? = nil) throws {
            self.modem = try modem ?? FakeModem()
            gps = try GPSFake.serving(log: NMEALog.movingRider(latitude: 45.1, longitude: 5.7, speed: riderSpeed, course: 0, seconds: 120))
            folder = try Scratch.folder(name)
            self.database = database ?? folder.appendingPathComponent("rideguard.sqlite").path
            config = folder.appendingPathComponent("config.yaml")
            let yaml = """
                imu:
                \(imu ?? "  simulated: true\n  trace: \(trace.path)\n  speed: \(playback)")
                gpio:
                  simulated: true
                gps:
                  gpsd: "127.0.0.1:\(gps.port)"
                modem:
                  device: \(self.modem.link)
                workflow:
                  countdown_s: 10
                \(calls)
                database: \(self.database)
                control_socket: \(folder.appendingPathComponent("control.sock").path)
                """
            try Data(yaml.utf8).write(to: config)
            if contacts { try AgentTests.addContacts(self.database) }
            #expect(Rideguard.inProcess(["config", "check", "--config", config.path]).status == 0)
        }

        deinit { gps.stop() }
    }

    static func addContacts(_ database: String) throws {
        let records = try RideGuardDatabase(path: database)
        for (name, number) in [("Sam", "+33612345678"), ("Jo", "+4915112345678")] {
            try records.addConfirmedContact(name: name, number: number, now: 0)
        }
        #expect(Rideguard.inProcess(["message", "set", "Crash! Call me.", "--database", database]).status == 0)
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

        func forget() { heard = [] }

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

    /// Under systemd (Type=notify, journald's stream): with no contact and no IMU the agent says
    /// READY at once (the boot never waits on the rider's set-up), says why it does not protect in
    /// STATUS=, and feeds the watchdog (a missing part is said, never a restart loop); with contacts
    /// it says it protects; every line carries its syslog priority. (Arming once a contact is added:
    /// in-process.)
    @Test func systemdHearsReadyAtOnceAndWhyItDoesNotProtect() throws {
        // No IMU either: a device no kernel has, through libiio's local backend.
        let rig = try Rig("arm", contacts: false, imu: "  uri: \"local:\"\n  device: rideguard-absent-imu")
        let notify = NotifySocket(in: rig.folder)
        let log = rig.folder.appendingPathComponent("agent.log").path
        let environment = ["PATH=/usr/bin:/bin", "HOME=/tmp", "NOTIFY_SOCKET=\(notify.path)", "JOURNAL_STREAM=8:12345"]
        let unprotected = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path], environment: environment, stdout: log, stderr: log)
        try waitForState(rig.folder, "disarmed", seconds: 20)
        notify.listen(for: ["READY=1\nSTATUS=NOT protecting: no emergency contact", "WATCHDOG=1"], seconds: 10)
        #expect(notify.heard.contains { $0.contains("READY=1\nSTATUS=NOT protecting: no emergency contact") }, "\(notify.heard)")
        notify.listen(for: ["the next 3 s"], seconds: 3)
        // Why the IMU cannot be read, with where to look (no IIO here, or none that is an IMU).
        #expect(notify.heard.contains { $0.hasPrefix("STATUS=NOT protecting") && $0.contains("the IMU cannot be read") && $0.contains("boards/imus.md") },
                "\(notify.heard)")
        #expect(notify.heard.filter { $0 == "WATCHDOG=1" }.count >= 3, "the watchdog is fed without a contact or an IMU: \(notify.heard)")
        let journal = try Rideguard.run(["events", "--kind", "system", "--database", rig.database])
        #expect(journal.stdout.contains("not protecting: no emergency contact"))
        #expect(unprotected.terminate() == 0)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>system: not protecting: no emergency contact") }, "\(lines)")
        #expect(!lines.contains { $0.contains("gpsd: ") && $0.contains("retrying") && !$0.hasPrefix("<4>") }, "a retry is a warning: \(lines)")
        #expect(lines.allSatisfy { $0.wholeMatch(of: /<[0-7]>.*/) != nil }, "\(lines)")

        try Self.addContacts(rig.database)
        let withIMU = try String(contentsOf: rig.config, encoding: .utf8).replacingOccurrences(
            of: "  uri: \"local:\"\n  device: rideguard-absent-imu",
            with: "  simulated: true\n  trace: \(Rideguard.fixtures.appendingPathComponent("example-lowside.csv").path)")
        try Data(withIMU.utf8).write(to: rig.config)
        let protected = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path], environment: environment, stdout: log, stderr: log)
        defer { protected.kill(SIGTERM) }
        notify.forget()
        notify.listen(for: ["READY=1", "WATCHDOG=1"], seconds: 20)
        #expect(notify.heard.contains { $0.contains("READY=1\nSTATUS=protecting the rider") }, "\(notify.heard)")
        #expect(notify.heard.contains { $0.contains("WATCHDOG=1") })
        try waitForState(rig.folder, "armed", seconds: 5)
    }

    /// Killed (SIGKILL) during a crash's countdown: the restarted binary goes on with the same
    /// emergency, on the same deadline (a smoke test of the real binary; the whole path through the
    /// alert is `anEmergencyGoesOnAcrossRestartsWithTheCrashsEvidence`, in-process).
    @Test func killedMidCountdownTheRestartGoesOn() throws {
        let rig = try Rig("kill", playback: 30)
        let log = { (name: String) in rig.folder.appendingPathComponent(name).path }
        let first = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path], stdout: log("first.log"), stderr: log("first.log"))
        try waitForState(rig.folder, "alertCountdown")
        let left = try #require(try Self.status(rig.folder)?.countdownSeconds)
        first.kill(SIGKILL)
        let second = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path], stdout: log("second.log"), stderr: log("second.log"))
        defer { second.kill(SIGTERM) }
        try waitForState(rig.folder, "alertCountdown", seconds: 10)
        let resumed = try #require(try Self.status(rig.folder)?.countdownSeconds)
        #expect(resumed < left && resumed > left - 5, "the countdown went on from \(left) s: \(resumed) s")
        try waitFor(10) { ((try? String(contentsOfFile: log("second.log"), encoding: .utf8)) ?? "").contains("resumed in state alertCountdown") }
        // SIGTERM mid-countdown: a graceful stop (exit 0, said), the state saved, no number in full.
        #expect(second.terminate() == 0)
        let output = (try? String(contentsOfFile: log("second.log"), encoding: .utf8)) ?? ""
        #expect(output.contains("] stopped") && !output.contains("612345678"), "\(output)")
    }

    /// Killed (SIGKILL) while the alert is being sent (the modem never answers it): the restarted
    /// binary sends it again, to every contact. A manual SOS, whose countdown is the shortest the
    /// configuration allows (5 s).
    @Test func killedMidSendEveryContactStillGetsTheAlert() throws {
        var script = FakeModem.Script()
        script.outcomes = [.silence]                                          // the first alert hangs
        let rig = try Rig("kill-send", modem: try FakeModem(script: script), playback: 0.5)
        let yaml = try String(contentsOf: rig.config, encoding: .utf8).replacingOccurrences(of: "  countdown_s: 10", with: "  countdown_s: 10\n  manual_countdown_s: 5")
        try Data(yaml.utf8).write(to: rig.config)
        let log = { (name: String) in rig.folder.appendingPathComponent(name).path }
        let first = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path], stdout: log("first.log"), stderr: log("first.log"))
        try waitForState(rig.folder, "armed", seconds: 20)
        #expect(try Rideguard.run(["ctl", "press", "--hold", "3.5", "--socket", rig.socket]).status == 0)
        try waitFor(20) { rig.modem.received.count >= 1 }
        first.kill(SIGKILL)
        #expect(try RideGuardDatabase(path: rig.database).outbox.all().contains { $0.status == .sending })
        let second = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path], stdout: log("second.log"), stderr: log("second.log"))
        defer { second.kill(SIGTERM) }
        try waitFor(30) { Set(rig.modem.received.map(\.decoded.number)) == ["+33612345678", "+4915112345678"] && rig.modem.received.count >= 3 }
        let alerts = try RideGuardDatabase(path: rig.database).outbox.all().filter { $0.kind == .alert }
        #expect(alerts.count == 2 && alerts.allSatisfy { $0.status == .sent }, "\(alerts)")
        let secondLog = (try? String(contentsOfFile: log("second.log"), encoding: .utf8)) ?? ""
        #expect(secondLog.contains("resumed in state emergencySending after a restart"), "\(secondLog)")
    }

    /// The agent's status as `rideguard status --json` prints it, read with the shared types.
    static func status(_ folder: URL) throws -> AgentStatus? {
        let result = try Rideguard.run(["status", "--json", "--socket", folder.appendingPathComponent("control.sock").path])
        return try? JSONDecoder().decode(ControlReply.self, from: Data(result.stdout.utf8)).status
    }

    /// `status`, waited for on a thread of its own (an in-process agent must answer meanwhile).
    static func status(_ folder: URL) async throws -> AgentStatus? {
        try await offThread { try status(folder) }
    }

    func status(_ folder: URL) throws -> AgentStatus? { try Self.status(folder) }

    func waitForState(_ folder: URL, _ state: String, seconds: Double = 60) throws {
        try waitFor(seconds) { (try? Self.status(folder))??.state.rawValue == state }
    }

    @Test func theAgentRecordsWhileItProtects() throws {
        let rig = try Rig("record")
        let process = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path])
        defer { process.kill(SIGTERM) }
        try waitForState(rig.folder, "armed", seconds: 20)
        let started = try Rideguard.run(["ctl", "record", "--name", "ride1", "--duration", "3", "--socket", rig.socket])
        let path = rig.folder.appendingPathComponent("recordings/ride1.csv").path
        #expect(started.status == 0 && started.stdout.contains("recording 3 s to \(path)"), "\(started.stderr)")
        let again = try Rideguard.run(["ctl", "record", "--name", "ride2", "--socket", rig.socket])
        #expect(again.status == 1 && again.stderr.contains("a recording is already running"))
        let badName = try Rideguard.run(["ctl", "record", "--name", "../etc/x", "--socket", rig.socket])
        #expect(badName.status == 1 && badName.stderr.contains("a recording's name is letters"))
        // 3 s of trace time (played ×4), then the file is complete and replays.
        try waitFor(20) { (try? RideGuardDatabase(path: rig.database).journal(kind: .system))?.contains { $0.text.hasPrefix("recording saved: \(path)") } ?? false }
        let replay = try Rideguard.run(["replay", path])
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stdout.contains("accelerometer and gyro"))
        let rows = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(rows.first == "time_s,ax,ay,az,gx,gy,gz,speed_mps")
        #expect(rows.count > 100)
        #expect(try Rideguard.run(["ctl", "record", "--name", "ride1", "--socket", rig.socket]).stderr.contains("exists already"))
        #expect(process.wait(0) == nil)
    }

    /// gpsd's speed (gpsfake: a rider at 12 m/s) rides on every sample the agent's detector gets:
    /// the recording, written from those samples, carries it.
    @Test func theSamplesCarryGpsdsSpeed() throws {
        let rig = try Rig("speed", riderSpeed: 12)
        let process = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path])
        defer { process.kill(SIGTERM) }
        try waitForState(rig.folder, "armed", seconds: 20)
        try waitFor(20) { (try? status(rig.folder))??.fix != nil }
        #expect(try Rideguard.run(["ctl", "record", "--name", "fast", "--duration", "6", "--socket", rig.socket]).status == 0)
        let path = rig.folder.appendingPathComponent("recordings/fast.csv").path
        try waitFor(20) { (try? RideGuardDatabase(path: rig.database).journal(kind: .system))?.contains { $0.text.hasPrefix("recording saved: \(path)") } ?? false }
        let rows = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst()
        let speeds = rows.map { $0.split(separator: ",", omittingEmptySubsequences: false).last.flatMap { Double($0) } }
        // gpsd's first fix can come from a GGA sentence, which has no speed; from the first speed on,
        // every sample carries one (fixes come every 0.2 s, a speed stays fresh for 3 s).
        let first = try #require(speeds.firstIndex { $0 != nil }, "no speed in \(rows.prefix(3))")
        #expect(speeds[first...].count > 300 && speeds[first...].allSatisfy { $0 != nil }, "\(speeds.count) rows")
        #expect(speeds.compactMap { $0 }.allSatisfy { abs($0 - 12) < 0.5 }, "\(Set(speeds.compactMap { $0 }))")
    }
}
