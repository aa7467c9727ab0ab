// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardTestSupport
import Testing
import IIOSensor
import RideGuardCore
@testable import RideGuardDoctor
import DoctorHardware
import AgentControl
import Storage
import Synchronization

/// `rideguard doctor` against the same fakes the agent tests use: iiod on loopback, gpsd fed by
/// gpsfake, the modem on a pty.
extension AgentTests {
    @Test func doctorPassesWhenEverythingAnswers() throws {
        let iiod = try FakeIIOD()
        defer { iiod.stop() }
        let rig = try Rig("doctor", imu: "  uri: \"ip:127.0.0.1:\(iiod.port)\"\n  rate_hz: 200")
        let result = try Rideguard.run(["doctor", "--config", rig.config.path, "--gps-wait", "20"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let lines = result.lines
        // In boot order, each part once.
        #expect(lines.compactMap { line in ["configuration", "database", "agent", "IMU", "GPIO", "gpsd", "modem", "contacts"].first { line.hasPrefix("✓ \($0):") || line.hasPrefix("! \($0):") } }
                == ["configuration", "database", "agent", "IMU", "GPIO", "gpsd", "modem", "contacts"])
        #expect(lines.contains("! agent: not running: checking the hardware directly"))
        let imu = try #require(lines.first { $0.hasPrefix("✓ IMU:") })
        #expect(imu.contains("mpu6050 with gyro") && imu.contains("(configured 200)") && imu.contains("1.01 g at rest"), "\(imu)")
        #expect(lines.contains { $0.hasPrefix("✓ gpsd: fix 45.10000, 5.70000") })
        #expect(lines.contains { $0.hasPrefix("✓ modem: \(rig.modem.link): SIM ready, network home") })
        #expect(lines.contains("✓ contacts: 2: Sam +33•••••5678 (confirmed), Jo +49•••••••5678 (confirmed); alert message set"))
        #expect(lines.contains("✓ sms: no SMS tried yet"))
        #expect(lines.last == "RideGuard can protect the rider.")
        #expect(!result.stdout.contains("612345678"))
    }

    /// The page's checks (its service sees no devices) with the agent down: the agent's absence is
    /// the failure, and the IMU, GPIO and modem are said to be unchecked, never judged, though the
    /// IMU answers here.
    @Test func thePagesChecksWithTheAgentDownJudgeNoHardware() async throws {
        let iiod = try FakeIIOD()
        defer { iiod.stop() }
        let rig = try Rig("page-doctor", imu: "  uri: \"ip:127.0.0.1:\(iiod.port)\"\n  rate_hz: 200")
        var doctor = Doctor(configurationPath: rig.config.path, hardware: nil)
        doctor.fixWait = 0
        let reported = Mutex<[DoctorCheck]>([])
        let canProtect = await doctor.run { check in reported.withLock { $0.append(check) } }
        let checks = reported.withLock { $0 }
        #expect(!canProtect)
        let agent = try #require(checks.first { $0.part == "agent" })
        #expect(agent.outcome == .failed && agent.detail == "not running: nothing protects the rider", "\(agent)")
        for part in ["IMU", "GPIO", "modem"] {
            let check = try #require(checks.first { $0.part == part })
            #expect(check.outcome == .warning && check.detail.hasPrefix("not checked: the agent, which reads it, is not running"), "\(check)")
        }
    }

    /// No IMU on this machine (no IIO at all, no I²C bus to look at): doctor, and setup which shows
    /// its line, say first what Raspberry Pi OS's kernel drives with one config.txt line.
    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/sys/bus/iio"), "this machine has IIO devices"))
    func noIMUGivesTheLinesRaspberryPiOSTakes() throws {
        var imu = AgentConfiguration().imu
        imu.device = "mpu6050"
        let check = LocalHardware().imu(imu)
        #expect(check.outcome == .failed && check.detail.contains("the IMU's driver is not loaded"), "\(check)")
        let fix = try #require(check.fix)
        #expect(fix.contains("Raspberry Pi OS's kernel drives these with one line in /boot/firmware/config.txt: MPU-6050, MPU-6500: `dtoverlay=i2c-sensor,mpu6050,int_pin=4`"), "\(fix)")
        #expect(fix.contains("BNO055: `dtoverlay=i2c-sensor,bno055`") && fix.hasSuffix("others need a module built (boards/imus.md)"), "\(fix)")
    }

    /// An IMU read polled through a driver that powers the chip up for every read (10 ms a read:
    /// about 16 samples a second): the agent protects, degraded, and says why and what to do, in
    /// `status`; the IMU line says how it is read.
    @Test func aSlowPolledIMUDegradesProtectionAndSaysWhy() throws {
        let iiod = try FakeIIOD()
        defer { iiod.stop() }
        iiod.state.withLock {
            $0.untriggered = true
            $0.rawReadSeconds = 0.01
        }
        let rig = try Rig("slow-imu", imu: "  uri: \"ip:127.0.0.1:\(iiod.port)\"\n  rate_hz: 100")
        let agent = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path])
        defer { agent.kill(SIGTERM) }
        try waitFor(20) { (try? Self.status(rig.folder))??.protection?.summary.contains("the IMU gives") == true }
        let text = try Rideguard.run(["status", "--socket", rig.socket]).stdout
        #expect(text.contains("Protecting, degraded: the IMU gives 1"), "\(text)")
        #expect(text.contains("samples a second of the 100 asked (polled: INT not wired: the driver's trigger comes from the chip's interrupt line): a short impact may be missed; wire the IMU's INT line (boards/imus.md)"), "\(text)")
        #expect(text.contains("IMU: mpu6050, polled: INT not wired"), "\(text)")
        // Recording beside it is refused, before anything is opened or written.
        let out = rig.folder.appendingPathComponent("beside.csv").path
        let record = try Rideguard.run(["record", "--out", out, "--uri", "ip:127.0.0.1:\(iiod.port)", "--duration", "1", "--socket", rig.socket])
        #expect(record.status == 1 && record.stderr.contains("the agent is running and reads the IMU (mpu6050): recording beside it would change"),
                "\(record.stdout)\(record.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        // An agent that does not answer (a socket whose listener never accepts) may hold the IMU too.
        let hung = rig.folder.appendingPathComponent("hung.sock").path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in Array(hung.utf8).enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(bound == 0 && listen(listener, 4) == 0)
        let unanswered = try Rideguard.run(["record", "--out", out, "--uri", "ip:127.0.0.1:\(iiod.port)", "--duration", "1", "--socket", hung])
        #expect(unanswered.status == 1 && unanswered.stderr.contains("the agent's control socket \(hung) is there but cannot be asked"),
                "\(unanswered.stdout)\(unanswered.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        // The reads get fast again: the next 5 s window at the rate clears it, without a reopening.
        iiod.state.withLock { $0.rawReadSeconds = 0 }
        try waitFor(15) { (try? Self.status(rig.folder))??.protection?.summary.contains("the IMU gives") != true }
        let after = try Rideguard.run(["status", "--socket", rig.socket]).stdout
        #expect(!after.contains("degraded"), "\(after)")
    }

    @Test func doctorSaysWhatIsMissingAndFails() throws {
        let folder = Scratch.path("rideguard-doctor")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let config = folder.appendingPathComponent("config.yaml")
        try Data("""
            imu:
              uri: "ip:127.0.0.1:9"
            gpio:
              buzzer: NO_SUCH_LINE
            gps:
              gpsd: "127.0.0.1:9"
            modem:
              device: \(folder.path)/no-modem
            database: \(folder.path)/rideguard.sqlite
            control_socket: \(folder.path)/control.sock
            """.utf8).write(to: config)
        let result = try Rideguard.run(["doctor", "--config", config.path, "--gps-wait", "1", "--modem-wait", "2"])
        #expect(result.status == 1)
        let out = result.stdout
        #expect(out.contains("✗ IMU: ip:127.0.0.1:9 (any known IMU): opening IIO context ip:127.0.0.1:9:"))
        #expect(out.contains("    → is iiod running and reachable at 127.0.0.1:9?"))
        #expect(out.contains("✗ GPIO: buzzer NO_SUCH_LINE:"))
        #expect(out.contains("! gpsd: cannot reach gpsd at 127.0.0.1:9"))
        #expect(out.contains("✗ modem: \(folder.path)/no-modem: opening \(folder.path)/no-modem: No such file or directory"))
        #expect(out.contains("✗ contacts: no emergency contact\n    → sudo rideguard setup, or rideguard contacts add NAME NUMBER"))
        #expect(out.hasSuffix("RideGuard cannot protect the rider yet: fix each ✗ above.\n"))

        // A broken configuration is named by file:line:key, and every other part is still checked,
        // with the defaults.
        try Data("imu:\n  rate_hz: fast\n".utf8).write(to: config)
        let broken = try Rideguard.run(["doctor", "--config", config.path, "--json", "--gps-wait", "0", "--modem-wait", "1"])
        #expect(broken.status == 1)
        let checks = broken.lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String] }
        #expect(checks.map { $0["part"] ?? "" } == ["configuration", "database", "agent", "IMU", "GPIO", "gpsd", "modem", "contacts", "sms", "self-test", "web page"])
        #expect(checks.first?["outcome"] == "failed")
        #expect(checks.first?["detail"] == "\(config.path):2: imu.rate_hz: 'fast' is not a number; checking the rest with the defaults")
    }

    @Test func doctorWithoutAConfigurationChecksEverythingWithTheDefaults() throws {
        let missing = Scratch.path("rideguard-no-config.yaml").path
        let result = try Rideguard.run(["doctor", "--config", missing, "--gps-wait", "0", "--modem-wait", "1"])
        let lines = result.lines
        #expect(lines.first == "! configuration: no \(missing): using the defaults")
        #expect(lines.dropFirst().first == "    → rideguard config example > \(missing) to write one")
        // Every part is checked; what fails is what this machine lacks, never the missing file.
        for part in ["database", "agent", "IMU", "GPIO", "gpsd", "modem", "contacts"] {
            #expect(lines.contains { $0.dropFirst(2).hasPrefix("\(part):") }, "no \(part) line in \(result.stdout)")
        }
        #expect(lines.contains { $0.hasPrefix("✗ IMU:") } && lines.contains { $0.hasPrefix("✗ GPIO:") })
        #expect(!result.stdout.contains("could not be completed") && !result.stdout.contains("doesn’t exist"))
        #expect(result.status == 1)
    }

    @Test func anUnreadableConfigurationSaysWhyInTheSystemsWords() throws {
        let folder = Scratch.path("rideguard-folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let result = try Rideguard.run(["config", "check", "--config", folder.path])
        #expect(result.status != 0)
        #expect((result.stdout + result.stderr).contains("\(folder.path): file: is a folder, not a file"), "\(result.stdout)\(result.stderr)")
    }

    @Test func doctorAsksTheRunningAgentForTheHardwareItHolds() throws {
        let rig = try Rig("doctor-agent")
        let process = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path])
        defer { process.kill(SIGTERM) }
        try waitForState(rig.folder, "armed", seconds: 20)
        // The agent checks its modem as soon as it is idle.
        try waitFor(20) { (try? status(rig.folder))??.modem.registration == "home" }
        let result = try Rideguard.run(["doctor", "--config", rig.config.path, "--gps-wait", "20"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.lines.contains { $0.hasPrefix("✓ agent: running, armed") })
        #expect(result.lines.contains { $0.hasPrefix("✓ IMU: simulated: ") && $0.contains("example-lowside.csv playing") })
        #expect(result.lines.contains("✓ GPIO: simulated: presses come from rideguard ctl press"))
        #expect(result.lines.contains { $0.hasPrefix("✓ modem: SIM ready, network home") })
        let journal = try Rideguard.run(["events", "--kind", "system", "--database", rig.database])
        #expect(journal.stdout.contains("modem: ready, network home"))
        // And told to the fleet: the events table a broker or Traccar is fed from.
        let events = try RideGuardDatabase(path: rig.database).events(after: 0, limit: 100).map(\.json)
        #expect(events.contains { $0.hasPrefix(#"{"event":"modem_ready","#) && $0.contains(#""summary":"ready, network home""#) }, "\(events)")

        // Clients that hang up before the answer (Ctrl-C on `rideguard status`) do not kill the agent.
        for _ in 0..<20 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in Array(rig.socket.utf8).enumerated() { raw[i] = b } }
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            _ = Array(#"{"cmd":"status"}"#.utf8 + [0x0A]).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(fd)
        }
        usleep(500_000)
        #expect(process.wait(0) == nil, "the agent died")
        // Still answering (the example trace's crash, 31 s in, may have started the countdown by now
        // on a slow machine: any state will do).
        let after = try Rideguard.run(["status", "--socket", rig.socket])
        #expect(after.status == 0 && after.stdout.contains("state: "), "\(after.stdout)\(after.stderr)")
    }

    /// An armed agent whose IMU stops sending tells systemd it is blind, and says so again when the
    /// samples come back (`systemctl status` shows it; the buzzer plays the fault pattern).
    @Test func systemdHearsWhenTheIMUGoesBlindAndWhenItSeesAgain() throws {
        let iiod = try FakeIIOD()
        defer { iiod.stop() }
        let rig = try Rig("blind", imu: "  uri: \"ip:127.0.0.1:\(iiod.port)\"\n  rate_hz: 200")
        let notify = NotifySocket(in: rig.folder)
        let process = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path],
                                  environment: ["PATH=/usr/bin:/bin", "HOME=/tmp", "NOTIFY_SOCKET=\(notify.path)"])
        defer { process.kill(SIGTERM) }
        notify.listen(for: ["READY=1\nSTATUS=protecting the rider"], seconds: 20)
        #expect(notify.heard.contains("READY=1\nSTATUS=protecting the rider"))
        iiod.state.withLock { $0.stalled = true }
        notify.listen(for: ["STATUS=NOT protecting: the IMU sends no sample"], seconds: 10)
        let blind = try #require(notify.heard.firstIndex { $0.hasPrefix("STATUS=NOT protecting: the IMU sends no sample") })
        var status = try Rideguard.run(["status", "--socket", rig.socket])
        try? waitFor(30) {
            status = (try? Rideguard.run(["status", "--socket", rig.socket])) ?? status
            return status.stdout.contains("NOT protecting: the IMU sends no sample")
        }
        #expect(status.stdout.contains("NOT protecting: the IMU sends no sample"), "\(status.stdout)")
        #expect(status.stdout.contains("state: armed"), "\(status.stdout)")
        iiod.state.withLock { $0.stalled = false }
        try waitFor(20) {
            notify.listen(for: ["(wait)"], seconds: 0.5)
            return notify.heard.lastIndex(of: "STATUS=protecting the rider").map { $0 > blind } ?? false
        }
        let journal = try Rideguard.run(["events", "--kind", "system", "--database", rig.database])
        #expect(journal.stdout.contains("imu fault: the IMU sends no sample (stalled"))
        #expect(journal.stdout.contains("imu: the IMU sends samples again"))
    }
}

/// What doctor adds from sysfs for a local IMU: the driver bound to the chip and its mount matrix,
/// read from a tree laid out as the kernel lays out an I2C IMU (the bus's device links into the
/// I2C client's folder, whose `driver` link names the driver).
@Suite struct IIOSysfsTests {
    func tree(matrix: String?) throws -> String {
        let root = Scratch.path("iio-sysfs-\(UUID().uuidString)").path
        let fm = FileManager.default
        let client = "\(root)/devices/platform/i2c-1/1-0068"
        try fm.createDirectory(atPath: "\(client)/iio:device3", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(root)/bus/i2c/drivers/inv-mpu6050-i2c", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: "\(root)/bus/iio/devices", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: "\(client)/driver", withDestinationPath: "../../../bus/i2c/drivers/inv-mpu6050-i2c")
        try "mpu6050\n".write(toFile: "\(client)/iio:device3/name", atomically: true, encoding: .utf8)
        if let matrix { try "\(matrix)\n".write(toFile: "\(client)/iio:device3/in_accel_mount_matrix", atomically: true, encoding: .utf8) }
        try fm.createSymbolicLink(atPath: "\(root)/bus/iio/devices/iio:device3", withDestinationPath: "../../../devices/platform/i2c-1/1-0068/iio:device3")
        return "\(root)/bus/iio/devices"
    }

    @Test func theDriverAndMountMatrixAreRead() throws {
        let root = try tree(matrix: "0, 1, 0; -1, 0, 0; 0, 0, 1")
        let found = try #require(IIOSysfs(deviceNamed: "mpu6050", root: root))
        #expect(found == IIOSysfs(driver: "inv-mpu6050-i2c", mountMatrix: "0, 1, 0; -1, 0, 0; 0, 0, 1"))
        #expect(found.summary == "driver inv-mpu6050-i2c, mount matrix 0, 1, 0; -1, 0, 0; 0, 0, 1 (RideGuard learns the bike's axes itself)")
        #expect(IIOSysfs(deviceNamed: "mpu6050 with gyro", root: root)?.driver == "inv-mpu6050-i2c")
        #expect(IIOSysfs(deviceNamed: "mpu6050, accelerometer only", root: root)?.driver == "inv-mpu6050-i2c")
        #expect(IIOSysfs(deviceNamed: "bmi160", root: root) == nil)
    }

    @Test func anIdentityMatrixAndNoMatrixAreSaidPlainly() throws {
        #expect(try IIOSysfs(deviceNamed: "mpu6050", root: tree(matrix: IIOSysfs.identity))?.summary
                == "driver inv-mpu6050-i2c, mount matrix identity")
        let bare = try #require(IIOSysfs(deviceNamed: "mpu6050", root: tree(matrix: nil)))
        #expect(bare.mountMatrix == nil && bare.summary == "driver inv-mpu6050-i2c")
        #expect(IIOSysfs(deviceNamed: "mpu6050", root: "/nonexistent") == nil)
    }
}

/// Issue 62, point 3: an ADXL345 that Raspberry Pi OS's overlay bound to its input driver (adxl34x:
/// evdev, not IIO) is said plainly, with what to buy instead.
@Suite struct InputOnlyIMUTests {
    @Test func anADXL345OnItsInputDriverIsSaidPlainly() throws {
        let root = try Scratch.folder("adxl34x-root")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("sys/bus/i2c/drivers/adxl34x/1-0053"), withIntermediateDirectories: true)
        let (chips, _) = IMUOnTheBus(root: root.path).look()
        let chip = try #require(chips.first)
        #expect(chip.found == "ADXL345 at 0x53 on i2c-1 is bound to adxl34x, an input (evdev) driver: no IIO device, which is what RideGuard reads")
        #expect(chip.advice.hasPrefix("this kernel has no IIO driver for the ADXL345"), "\(chip.advice)")
        #expect(chip.advice.contains("use an MPU-6050"))
        // Without it, and without any I²C bus, doctor says there is none.
        let bare = try Scratch.folder("no-i2c-root")
        #expect(IMUOnTheBus(root: bare.path).look().unreadable?.hasPrefix("no I²C bus") == true)
    }
}

/// Issue 64, point 4: what the running agent says of its IMU, read by the doctor from typed fields
/// (a dead axis is its own field, not a fault whose words are searched for "axis").
@Suite struct DoctorFromTheAgentTests {
    static func status(lastFault: String?, deadAxis: String?) -> AgentStatus {
        AgentStatus(state: .armed, countdownSeconds: nil, buzzer: .off,
                    sensor: .init(simulated: false, samples: 4000, rateHz: 200, lastSampleAgeSeconds: 0.01, gravityG: 1.0, lastFault: lastFault,
                                  device: "mpu6050", readMode: "buffer, trigger mpu6050-dev0; driver inv-mpu6050-i2c", deadAxis: deadAxis),
                    gpio: .init(simulated: false, problem: nil), fix: nil,
                    modem: .init(real: true, connected: true, registration: "home", signalDBm: -71), pendingMessages: 0, contacts: 1)
    }

    @Test func aDeadAxisFailsTheIMUCheckAndAFaultThatNamesAnAxisDoesNot() {
        let doctor = Doctor(configurationPath: "/nonexistent/config.yaml", hardware: nil)
        var configuration = AgentConfiguration()
        configuration.imu.rateHz = 200
        let dead = doctor.imuFromAgent(Self.status(lastFault: "axis z shows no signal", deadAxis: "axis z shows no signal"), configuration)
        #expect(dead.outcome == .failed && dead.detail.hasPrefix("mpu6050 (buffer, trigger mpu6050-dev0; driver inv-mpu6050-i2c): 200 Hz (configured 200); axis z shows no signal: a dead axis"), "\(dead)")
        // A gap's or a dropped sample's words are not a dead axis, whatever they say.
        let gap = doctor.imuFromAgent(Self.status(lastFault: "no sample for 0.6 s on every axis", deadAxis: nil), configuration)
        #expect(gap.outcome == .ok && gap.detail == "mpu6050 (buffer, trigger mpu6050-dev0; driver inv-mpu6050-i2c): 200 Hz (configured 200), 1.00 g at rest", "\(gap)")
    }
}
