import Foundation
import RideGuardAgent
import RideGuardCore
import Testing

extension AgentTests {
    /// A parked bike (still, no engine) knocked over: the rider's own phone gets one SMS, the contacts
    /// nothing, no countdown starts; the journal and `status` say what happened. The Pi's voltage
    /// monitor (a stand-in hwmon folder) reports under-voltage: journaled and shown too.
    @Test func aParkedBikeKnockedOverTellsTheRiderAndNobodyElse() throws {
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("parked-\(UUID().uuidString).csv")
        try Data(Self.parkedKnockOver().utf8).write(to: trace)
        defer { try? FileManager.default.removeItem(at: trace) }
        let rig = try Rig("parked", trace: trace, playback: 8, calls: "detector:\n  parkedAfterSeconds: 30")
        #expect(try Rideguard.run(["profile", "set", "--phone", "+33 7 00 00 00 01", "--database", rig.database]).status == 0)
        let hwmon = rig.folder.appendingPathComponent("hwmon/hwmon3")
        try FileManager.default.createDirectory(at: hwmon, withIntermediateDirectories: true)
        try Data("rpi_volt\n".utf8).write(to: hwmon.appendingPathComponent("name"))
        try Data("1\n".utf8).write(to: hwmon.appendingPathComponent("in0_lcrit_alarm"))

        let log = rig.folder.appendingPathComponent("agent.log").path
        let process = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path],
                                  environment: ["PATH=/usr/bin:/bin", "HOME=/tmp", "RIDEGUARD_HWMON=\(rig.folder.path)/hwmon"],
                                  stdout: log, stderr: log)
        defer { process.kill(SIGTERM) }
        do { try waitFor(40) { rig.modem.messages.count == 1 } } catch {
            Issue.record("no SMS; the agent said:\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            throw error
        }
        #expect(Set(rig.modem.received.map(\.decoded.number)) == ["+33700000001"], "the parked fall went to the contacts")
        let sms = rig.modem.messages[0]
        #expect(sms.contains("your parked bike fell over. Nobody was riding it: your contacts were not told."), "\(sms)")
        #expect(sms.contains("https://maps.google.com/?q=45.10000,5.70000"), "\(sms)")

        let now = try #require(try status(rig.folder))
        #expect(now.state == .armed, "a countdown started: \(now.state)")
        let bike = try #require(now.bike)
        #expect(bike.context == "parked" && bike.lastParkedFall != nil && bike.underVoltage == true, "\(bike)")
        let human = try Rideguard.run(["status", "--socket", rig.socket]).stdout
        #expect(human.contains("bike: parked, supply UNDER-VOLTAGE") && human.contains("parked bike fell over at "), "\(human)")
        let detections = try Rideguard.run(["events", "--kind", "detections", "--database", rig.database]).stdout
        #expect(detections.contains("the bike is parked (still, no engine, no GPS speed)"), "\(detections)")
        #expect(detections.contains("parked bike fell over: bike down: lying at"), "\(detections)")
        #expect(!detections.contains("crash detected"), "\(detections)")
        let system = try Rideguard.run(["events", "--kind", "system", "--database", rig.database]).stdout
        #expect(system.contains("supply: under-voltage"), "\(system)")
        sleep(3)
        #expect(rig.modem.messages.count == 1, "more SMS: \(rig.modem.received.map(\.decoded.number))")
    }

    /// 40 s upright on its stand (engine off, nobody on it), then it falls over as a pendulum about
    /// its tyres, lands on its side (2.5 g) and lies there: 100 Hz, accelerometer and gyro.
    static func parkedKnockOver() -> String {
        var lines = ["# rideguard-trace v1", "# rate_hz: 100", "time_s,ax,ay,az,gx,gy,gz"]
        let g = standardGravity
        var t = 0.0, angle = 0.02, rate = 0.0
        func sample(_ a: Vector3, _ roll: Double) {
            let noise = 0.02 * sin(t * 733)
            lines.append("\(String(format: "%.3f", t)),\(a.x + noise),\(a.y),\(a.z),\(roll),0,0")
            t += 0.01
        }
        func gravity(_ angle: Double) -> Vector3 { Vector3(0, g * sin(angle), g * cos(angle)) }
        while t < 40 { sample(gravity(angle), 0) }
        while angle < 85 * .pi / 180 {
            rate += g / 0.6 * sin(angle) * 0.01
            angle += rate * 0.01
            sample(gravity(angle) * 0.6, rate)
        }
        for i in 0..<6 { sample(gravity(angle) + Vector3(0, 0, 2.5 * g * sin(.pi * Double(i) / 6)), 0) }
        while t < 60 { sample(gravity(angle), 0) }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension AgentTests {
    /// A contact but no message of the rider's own: the agent protects (it refused to, beeping
    /// "not protecting" every 30 s), and the alert starts with the default message.
    @Test func withoutAMessageOfTheRidersOwnTheAlertUsesTheDefault() throws {
        let rig = try Rig("no-message", playback: 8, contacts: false)
        #expect(try Rideguard.run(["contacts", "add", "Sam", "+33612345678", "--database", rig.database]).status == 0)
        let process = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path])
        defer { process.kill(SIGTERM) }
        try waitForState(rig.folder, "armed", seconds: 20)
        try waitFor(60) { rig.modem.messages.count >= 1 }
        let alert = rig.modem.messages[0]
        #expect(alert.hasPrefix(MessageComposer.suggestedMessage(.en)), "\(alert)")
        let doctor = try Rideguard.run(["doctor", "--config", rig.config.path])
        #expect(doctor.stdout.contains("! contacts: 1: Sam +33•••••5678; no alert message of your own"), "\(doctor.stdout)")
    }
}
