// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
import Storage
import AgentTestSupport
import RideGuardTestSupport
import Testing

extension AgentInProcessTests {
    /// A parked bike (still, no engine) knocked over: the rider's own phone gets one SMS, the contacts
    /// nothing, no countdown starts; the journal and `status` say what happened. The Pi's voltage
    /// monitor (a stand-in hwmon folder) reports under-voltage: journaled and shown too.
    @Test func aParkedBikeKnockedOverTellsTheRiderAndNobodyElse() async throws {
        let trace = try Rideguard.temporaryFile("parked-\(UUID().uuidString).csv", contents: Data(AgentTests.parkedKnockOver().utf8))
        defer { try? FileManager.default.removeItem(at: trace) }
        let modem = try FakeModem()
        let folder = try Self.folder("parked")
        var configuration = InProcessAgent.configuration(in: folder, trace: trace, modem: modem)
        configuration.detector.parkedAfterSeconds = 30
        try RideGuardDatabase(path: configuration.database).setRiderPhone("+33 7 00 00 00 01")
        let hwmon = folder.appendingPathComponent("hwmon/hwmon3")
        try FileManager.default.createDirectory(at: hwmon, withIntermediateDirectories: true)
        try Data("rpi_volt\n".utf8).write(to: hwmon.appendingPathComponent("name"))
        try Data("1\n".utf8).write(to: hwmon.appendingPathComponent("in0_lcrit_alarm"))
        setenv("RIDEGUARD_HWMON", folder.appendingPathComponent("hwmon").path, 1)
        let agent = try InProcessAgent(configuration)
        unsetenv("RIDEGUARD_HWMON")

        try await agent.advance(until: { modem.messages.count == 1 }, limit: 40)
        #expect(Set(modem.received.map(\.decoded.number)) == ["+33700000001"], "the parked fall went to the contacts")
        let sms = modem.messages[0]
        #expect(sms.contains("your parked bike fell over. Nobody was riding it: your contacts were not told."), "\(sms)")
        #expect(sms.contains("https://maps.google.com/?q=45.10000,5.70000"), "\(sms)")

        try await agent.advance(until: { (try? await AgentTests.status(folder))??.bike?.underVoltage == true }, limit: 30)
        let now = try #require(try await AgentTests.status(folder))
        #expect(now.state == .armed, "a countdown started: \(now.state)")
        let bike = try #require(now.bike)
        #expect(bike.context == "parked" && bike.lastParkedFall != nil, "\(bike)")
        let human = try await Rideguard.run(["status", "--socket", configuration.controlSocket]).stdout
        #expect(human.contains("bike: parked, supply UNDER-VOLTAGE") && human.contains("parked bike fell over at "), "\(human)")
        await agent.advance(by: 30)
        await agent.stop()
        #expect(modem.messages.count == 1, "more SMS: \(modem.received.map(\.decoded.number))")
        let detections = Self.journal(folder, kind: .detections)
        #expect(detections.contains("the bike is parked (still, no engine, no GPS speed)"), "\(detections)")
        #expect(detections.contains("parked bike fell over: bike down: lying at"), "\(detections)")
        #expect(!detections.contains("crash detected"), "\(detections)")
        #expect(Self.journal(folder, kind: .system).contains("supply: under-voltage"))
    }
}

extension AgentTests {
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

extension AgentInProcessTests {
    /// A contact but no message of the rider's own: the agent protects (it refused to, beeping
    /// "not protecting" every 30 s), and the alert starts with the default message.
    @Test func withoutAMessageOfTheRidersOwnTheAlertUsesTheDefault() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("no-message", contacts: false)
        let configuration = InProcessAgent.configuration(in: folder, modem: modem)
        _ = try RideGuardDatabase(path: configuration.database).addConfirmedContact(name: "Sam", number: "+33612345678", now: Date().timeIntervalSince1970)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .armed, limit: 20)
        try await agent.advance(until: { modem.messages.count >= 1 }, limit: 60)
        await agent.stop()
        let alert = modem.messages[0]
        #expect(alert.hasPrefix(MessageComposer.suggestedMessage(.en)), "\(alert)")
        let config = folder.appendingPathComponent("config.yaml")
        let yaml = "database: \(configuration.database)\nimu:\n  simulated: true\n  trace: \(configuration.imu.trace!)\n  speed: 8\ngpio:\n  simulated: true\ngps:\n  simulated: true\nmodem:\n  simulated: true\n"
        try Data(yaml.utf8).write(to: config)
        let doctor = try await Rideguard.run(["doctor", "--config", config.path])
        #expect(doctor.stdout.contains("! contacts: 1: Sam +33•••••5678 (confirmed); no alert message of your own"), "\(doctor.stdout)")
    }
}
