// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
import RideGuardTestSupport
import Testing
import AgentControl

/// The control socket's typed protocol: the same types on both ends, in the JSON lines a shell
/// user can also type (`{"cmd":"status"}`).
@Suite struct ControlProtocolTests {
    @Test(arguments: [ControlRequest.status, .press(hold: 1.5), .record(name: "ride1", seconds: 600), .stopRecording, .buzz])
    func requestsRoundTrip(request: ControlRequest) throws {
        let text = try JSONEncoder().encode(request)
        #expect(try JSONDecoder().decode(ControlRequest.self, from: text) == request)
    }

    @Test func requestsAsAPersonTypesThem() throws {
        let decode = { (line: String) in try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8)) }
        #expect(try decode(#"{"cmd":"status"}"#) == .status)
        #expect(try decode(#"{"cmd":"press"}"#) == .press(hold: 0.3))
        #expect(try decode(#"{"cmd":"record","stop":true}"#) == .stopRecording)
        #expect(try decode(#"{"cmd":"buzz"}"#) == .buzz)
        do {
            _ = try decode(#"{"cmd":"reboot"}"#)
            Issue.record("an unknown command was accepted")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.debugDescription == "unknown command 'reboot': use status, press, record, buzz or selftest")
        }
    }

    @Test func aStatusReplyIsTheStatusItself() throws {
        let status = AgentStatus(
            state: .alertCountdown, countdownSeconds: 41.5, buzzer: .countdownSlow,
            sensor: .init(simulated: false, samples: 1200, rateHz: 400, lastSampleAgeSeconds: 2.5, gravityG: 1.01, lastFault: "stalled"),
            gpio: .init(simulated: false, problem: nil), fix: .init(latitude: 45.1, longitude: 5.7, ageSeconds: 3),
            modem: .init(real: true, connected: true, registration: "home", signalDBm: -71), pendingMessages: 0, contacts: 2)
        let data = try JSONEncoder().encode(ControlReply(status: status))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["state"] as? String == "alertCountdown" && object["countdown_s"] as? Double == 41.5)
        #expect((object["sensor"] as? [String: Any])?["last_sample_age_s"] as? Double == 2.5)
        #expect((object["modem"] as? [String: Any])?["signal_dbm"] as? Int == -71)
        let back = try JSONDecoder().decode(ControlReply.self, from: data)
        #expect(back.status == status && back.error == nil)
        #expect(status.sensor.blind, "no sample for 2.5 s: blind")
        let refused = try JSONDecoder().decode(ControlReply.self, from: Data(#"{"error":"no recording is running"}"#.utf8))
        #expect(refused.status == nil && refused.error == "no recording is running")
    }
}
