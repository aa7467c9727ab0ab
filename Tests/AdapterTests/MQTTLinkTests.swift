// SPDX-License-Identifier: Apache-2.0
import Foundation
import MQTTLink
import Synchronization
import RideGuardTestSupport
import Testing

/// The MQTT link (libmosquitto) against Debian's Mosquitto on loopback, with TLS, a password file
/// and an ACL; what the broker delivers is read by Debian's mosquitto_sub, not by our code.
@Suite(.serialized) struct MQTTLinkTests {
    /// What the link reported, in order, and a way to wait for one.
    final class Events: Sendable {
        private let seen = Mutex<[MQTTLinkEvent]>([])
        func add(_ event: MQTTLinkEvent) { seen.withLock { $0.append(event) } }
        var all: [MQTTLinkEvent] { seen.withLock { $0 } }
        func wait(seconds: Double = 10, for match: (MQTTLinkEvent) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if all.contains(where: match) { return true }
                usleep(10_000)
            }
            return false
        }
    }

    static func settings(_ broker: Mosquitto, password: String = Mosquitto.passwords["bike1"]!) -> MQTTSettings {
        MQTTSettings(host: "localhost", port: broker.port, tls: true, caFile: broker.caFile, username: "bike1", password: password,
                     clientID: "rideguard-bike1", keepaliveSeconds: 5,
                     will: MQTTMessage(topic: "rideguard/bike1/status", payload: Array("offline".utf8), qos: 1, retain: true))
    }

    /// A link for bike1 that connected and said "online" (retained, QoS 1), the broker's PUBACK seen.
    static func online(_ broker: Mosquitto) throws -> MQTTLink {
        let events = Events()
        let link = try MQTTLink(settings(broker), onEvent: events.add)
        #expect(events.wait { $0 == .connected }, "\(events.all) \(broker.log)")
        let id = try link.publish(MQTTMessage(topic: "rideguard/bike1/status", payload: Array("online".utf8), qos: 1, retain: true))
        #expect(events.wait { $0 == .acknowledged(messageID: id) }, "\(events.all)")
        return link
    }

    /// Over TLS with a password: connected, a retained QoS 1 message acknowledged by the broker
    /// (PUBACK, with the id `publish` returned), and another client sees it retained.
    @Test func aRetainedMessageIsAcknowledgedAndKept() throws {
        let broker = try Mosquitto()
        try broker.start()
        let link = try Self.online(broker)
        defer { link.stop() }
        #expect(try broker.subscribe("rideguard/bike1/status") == ["rideguard/bike1/status online"])
    }

    /// A connection lost without a goodbye (power cut, kill -9): the broker publishes the will,
    /// retained, so a dispatcher sees the bike offline. A goodbye publishes none.
    @Test func aDroppedConnectionLeavesTheWillAndAGoodbyeDoesNot() throws {
        let broker = try Mosquitto()
        try broker.start()
        try Self.online(broker).drop()
        #expect(try broker.subscribe("rideguard/bike1/status") == ["rideguard/bike1/status offline"])
        try Self.online(broker).stop()
        #expect(try broker.subscribe("rideguard/bike1/status") == ["rideguard/bike1/status online"])
    }

    /// A wrong password is refused, in words, and never counts as connected.
    @Test func aWrongPasswordIsRefused() throws {
        let broker = try Mosquitto()
        try broker.start()
        let events = Events()
        let link = try MQTTLink(Self.settings(broker, password: "wrong"), onEvent: events.add)
        defer { link.stop() }
        #expect(events.wait { if case .refused = $0 { true } else { false } }, "\(events.all)")
        #expect(!events.all.contains(.connected))
    }

    /// A broker down when the link starts, and down again later: the link keeps trying by itself,
    /// and a message published while it was away goes out after the reconnection, acknowledged.
    @Test func aBrokerDownAtStartAndLaterIsReachedWhenItComesBack() throws {
        let broker = try Mosquitto()
        let events = Events()
        let link = try MQTTLink(Self.settings(broker), onEvent: events.add)
        defer { link.stop() }
        // It tried while the broker was down, and was refused.
        #expect(events.wait(seconds: 30) { if case .failed = $0 { true } else { false } }, "\(events.all)")
        #expect(!events.all.contains(.connected))
        try broker.start()
        #expect(events.wait(seconds: 15) { $0 == .connected }, "\(events.all)")
        broker.stop()
        #expect(events.wait { $0 == .disconnected })
        let id = try link.publish(MQTTMessage(topic: "rideguard/bike1/event", payload: Array("{\"event\":\"crash_detected\"}".utf8), qos: 1))
        try broker.start()
        #expect(events.wait(seconds: 70) { $0 == .acknowledged(messageID: id) }, "\(events.all) \(broker.log)")
    }

    /// A password file: its first line, without the blanks around it; one that cannot be read is
    /// an error naming it and why.
    @Test func aPasswordFileIsReadOrNamed() throws {
        let file = Scratch.path("rideguard-password")
        defer { try? FileManager.default.removeItem(at: file) }
        try "  s3cret \r\nsecond line\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try MQTTSettings.password(fromFile: file.path) == "s3cret")
        try "s3cret\n".write(to: file, atomically: true, encoding: .utf8)
        #expect(try MQTTSettings.password(fromFile: file.path) == "s3cret")
        #expect(throws: MQTTError("cannot read the password file /nonexistent/pw: No such file or directory")) {
            try MQTTSettings.password(fromFile: "/nonexistent/pw")
        }
    }

    /// Issue 43, point 14: a host that takes the connection and never answers it (no CONNACK) is
    /// named as such, and that reason is not overwritten by the disconnect that follows.
    @Test func aSilentBrokerIsNamed() throws {
        let (silent, port) = try loopbackListener()                // connections wait in its backlog
        defer { close(silent) }
        var settings = MQTTSettings(host: "127.0.0.1", port: port, clientID: "rideguard-silent")
        settings.answerSeconds = 1
        let events = Events()
        let link = try MQTTLink(settings, onEvent: events.add)
        defer { link.stop() }
        #expect(events.wait(seconds: 5) { $0 == .failed("127.0.0.1:\(port) took the connection but has not answered in 1 s (not an MQTT broker, or a stuck one)") },
                "\(events.all)")
        usleep(300_000)
        let failures = events.all.compactMap { if case .failed(let reason) = $0 { reason } else { nil } }
        #expect(failures.allSatisfy { $0.contains("has not answered") }, "\(failures)")
    }

    /// Settings the library refuses are an error naming the part, not a crash.
    @Test func aMissingCAFileIsNamed() throws {
        let broker = try Mosquitto()
        var settings = Self.settings(broker)
        settings.caFile = "/nonexistent/ca.crt"
        #expect(throws: MQTTError.self) { try MQTTLink(settings) { _ in } }
        do { _ = try MQTTLink(settings) { _ in } } catch { #expect(error.description.contains("/nonexistent/ca.crt"), "\(error)") }
    }
}
