// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import MQTTLink
import OsmAnd
@testable import RideGuardAgent
import RideGuardCore
import Storage
import AgentTestSupport
import RideGuardTestSupport
import Testing
@testable import AgentControl

/// Issue 29: the agent on a fleet's broker — Debian's Mosquitto on loopback with TLS, a password
/// file and an ACL (`Mosquitto`), read and written by Debian's mosquitto_sub and mosquitto_pub as
/// a dispatcher would.
@Suite(.serialized, .onOneThread) struct FleetTests {
    /// The `mqtt:` section for `broker`, as bike1, its password in a file of `folder`.
    static func mqtt(_ broker: Mosquitto, in folder: URL) throws -> AgentConfiguration.MQTT {
        let passwordFile = folder.appendingPathComponent("mqtt-password")
        try (Mosquitto.passwords["bike1"]! + "\n").write(to: passwordFile, atomically: true, encoding: .utf8)
        var mqtt = AgentConfiguration.MQTT()
        mqtt.url = "mqtts://localhost:\(broker.port)"
        mqtt.username = "bike1"
        mqtt.passwordFile = passwordFile.path
        mqtt.caFile = broker.caFile
        mqtt.device = "bike1"
        mqtt.keepaliveSeconds = 5
        return mqtt
    }

    /// Each line "topic payload" of mosquitto_sub, as the events' JSON objects.
    static func events(_ lines: [String]) -> [[String: Any]] {
        lines.compactMap { line in
            guard let space = line.firstIndex(of: " ") else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(line[line.index(after: space)...].utf8))) as? [String: Any]
        }
    }

    /// The real `rideguard run`: `online` retained once connected, the state retained, and the
    /// will, `offline`, published by the broker when the agent is killed (SIGKILL: no goodbye).
    @Test func theBrokerSaysOnlineWhileTheAgentRunsAndOfflineOnceItIsKilled() throws {
        let broker = try Mosquitto()
        try broker.start()
        let folder = Scratch.path("rideguard-mqtt-will")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let mqtt = try Self.mqtt(broker, in: folder)
        let section = """
            mqtt:
              url: \(mqtt.url)
              username: bike1
              password_file: \(mqtt.passwordFile!)
              ca_file: \(broker.caFile)
              device: bike1
              keepalive_s: 5
              owntracks_user: alex
            """
        let rig = try AgentTests.Rig("mqtt-will", calls: section)
        let log = rig.folder.appendingPathComponent("agent.log").path
        let agent = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path], stdout: log, stderr: log)
        defer { agent.kill(SIGKILL) }
        #expect(try broker.subscribe("rideguard/bike1/status", seconds: 20) == ["rideguard/bike1/status online"], "\(broker.log)")
        let state = try broker.subscribe("rideguard/bike1/state", seconds: 20)
        #expect(state.first?.contains("\"state\":") == true, "\(state)")
        // The position as OwnTracks reads it (gpsd puts the rider at 45.1, 5.7).
        let location = Self.events(try broker.subscribe("owntracks/alex/bike1", seconds: 20)).first
        #expect(location?["_type"] as? String == "location" && location?["lat"] as? Double == 45.1 && location?["lon"] as? Double == 5.7
                && location?["tst"] is Int, "\(String(describing: location))")
        try waitFor(20) { (try? AgentTests.status(rig.folder))??.fleet?.connected == true }
        let status = try Rideguard.run(["status", "--socket", rig.socket])
        #expect(status.stdout.contains("mqtt: bike1 on \(mqtt.url), connected since"), "\(status.stdout)")
        let doctor = try Rideguard.run(["doctor", "--config", rig.config.path])
        #expect(doctor.stdout.contains("bike1 connected to \(mqtt.url)"), "\(doctor.stdout)")
        broker.stop()
        try waitFor(20) { (try? AgentTests.status(rig.folder))??.fleet?.connected == false }
        let away = try Rideguard.run(["doctor", "--config", rig.config.path])
        #expect(away.stdout.contains("bike1 NOT connected to \(mqtt.url)") && away.stdout.contains("ip route"), "\(away.stdout)")
        try broker.start()
        try waitFor(30) { (try? AgentTests.status(rig.folder))??.fleet?.connected == true }
        agent.kill(SIGKILL)
        #expect(try broker.subscribe("rideguard/bike1/status", seconds: 20) == ["rideguard/bike1/status offline"], "\(broker.log)")
    }

    /// A crash, its alert and, while the broker is down, the rider's cancel: the dispatcher (a
    /// persistent session) gets every event once the broker is back, in `seq` order with no gap,
    /// and the cursor the agent saved is the newest event's.
    @Test func everyEventReachesTheDispatcherInOrderAcrossABrokerRestart() async throws {
        let broker = try Mosquitto()
        try broker.start()
        let session = "dispatch-\(UUID().uuidString.prefix(8))"
        _ = try broker.subscribe("rideguard/bike1/event", seconds: 1, session: session)      // the session exists from now
        let folder = try AgentInProcessTests.folder("mqtt-order")
        var configuration = InProcessAgent.configuration(in: folder)
        configuration.mqtt = try Self.mqtt(broker, in: folder)
        let agent = try InProcessAgent(configuration)
        let database = try RideGuardDatabase(path: configuration.database)
        try await agent.advance(untilState: .emergencySent, limit: 120)
        try await agent.advance(until: { try Self.allAcknowledged(database) }, limit: 30)
        try broker.shutDown()
        try await agent.advance(until: { await Self.fleet(agent)?.connected == false }, limit: 30)
        async let cancel: Void = agent.agent.press(hold: 3.5)       // the rider cancels: all-clear, emergency over
        try await agent.advance(untilState: .emergencyEnded, limit: 30)
        await agent.advance(by: 1)                                 // the button is up at 3.5 s
        await cancel
        async let resume: Void = agent.agent.press(hold: 0.3)      // and resumes protection: armed again
        try await agent.advance(untilState: .armed, limit: 30)
        await resume
        await agent.advance(by: 120, step: 1)                      // two minutes of the agent's time without the broker
        #expect(try !Self.allAcknowledged(database))
        try broker.start()
        try await agent.advance(until: { try Self.allAcknowledged(database) }, limit: 600, step: 0.5)   // the link tries again 1, 2, 4… s apart in real time
        let newest = try database.lastEventSeq()
        await agent.stop()
        #expect(try broker.subscribe("rideguard/bike1/status") == ["rideguard/bike1/status offline"], "stopped: no will, said before the goodbye")
        let received = Self.events(try broker.subscribe("rideguard/bike1/event", count: 100, seconds: 3, session: session))
        var seqs: [Int] = []
        for event in received {
            let seq = event["seq"] as? Int ?? -1
            if !seqs.contains(seq) { seqs.append(seq) }     // at least once: a duplicate is allowed, a gap is not
        }
        #expect(!seqs.isEmpty && seqs == Array(seqs[0]...seqs[0] + seqs.count - 1), "\(seqs)")
        #expect(seqs.last.map(Int64.init) == newest)
        let names = received.compactMap { $0["event"] as? String }
        let expected = ["crash_detected", "countdown_started", "alerting", "emergency_sent", "all_clear", "emergency_ended"]
        #expect(expected.allSatisfy(names.contains), "\(names)")
        #expect(expected.compactMap { names.firstIndex(of: $0) } == expected.compactMap { names.firstIndex(of: $0) }.sorted(), "\(names)")
        // Resumed during the outage, with the simulated bike still lying where the lowside left it:
        // the detector waits to see it upright, and the fleet hears that, not "armed".
        #expect(names.last == "not_protecting", "protection resumed, during the outage: \(names)")
        let resumed = try #require(received.last { $0["event"] as? String == "not_protecting" })
        #expect((resumed["summary"] as? String)?.contains("has not stood upright since the crash") == true, "\(resumed)")
        let sent = try #require(received.first { $0["event"] as? String == "emergency_sent" })
        #expect(sent["lat"] as? Double == 45.1 && sent["lon"] as? Double == 5.7, "\(sent)")
        #expect(try database.eventCursor("mqtt") == newest)
    }

    /// Issue 43, point 14: `status` names why the broker is not connected (it said only "NOT
    /// connected"): a name that does not resolve, a CA that is not the broker's; and stopping the
    /// agent never waits on a Traccar request that hangs (it waited libcurl's 15 s).
    @Test func whyTheBrokerIsAwayIsNamedAndAHungTraccarNeverHoldsTheStop() async throws {
        let broker = try Mosquitto()
        try broker.start()
        let (silent, port) = try loopbackListener()                // Traccar that never answers
        defer { close(silent) }
        for (url, ca, reason) in [("mqtts://no-such-broker.invalid:8883", nil as String?, "does not resolve"),
                                  ("mqtts://localhost:\(broker.port)", "/etc/ssl/certs/ca-certificates.crt", "TLS handshake")] {
            let folder = try AgentInProcessTests.folder("mqtt-reason")
            var configuration = InProcessAgent.configuration(in: folder)
            configuration.mqtt = try Self.mqtt(broker, in: folder)
            configuration.mqtt?.url = url
            configuration.mqtt?.caFile = ca
            var traccar = AgentConfiguration.Traccar()
            traccar.url = "http://127.0.0.1:\(port)"
            configuration.traccar = traccar
            let agent = try InProcessAgent(configuration)
            try await agent.advance(until: { await Self.fleet(agent)?.problem?.contains(reason) == true }, limit: 30, step: 0.2)
            let status = try #require(try await AgentTests.status(folder))
            #expect(status.fleet?.connected == false && status.fleet?.problem?.contains(reason) == true, "\(String(describing: status.fleet))")
            let started = Date()
            await agent.stop()
            #expect(Date().timeIntervalSince(started) < 5, "stopping waited \(Date().timeIntervalSince(started)) s")
        }
    }

    /// A broker that takes the connection and never answers (no CONNACK): the crash's countdown,
    /// alert and SMS go as without a broker, on time.
    @Test func aBrokerThatNeverAnswersDelaysNothing() async throws {
        let (silent, port) = try loopbackListener()                // connections wait in its backlog, never answered
        defer { close(silent) }
        let modem = try FakeModem()
        let folder = try AgentInProcessTests.folder("mqtt-silent")
        var configuration = InProcessAgent.configuration(in: folder, modem: modem)
        var mqtt = AgentConfiguration.MQTT()
        mqtt.url = "mqtt://127.0.0.1:\(port)"
        mqtt.device = "bike1"
        configuration.mqtt = mqtt
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .alertCountdown, limit: 60)
        let countdown = agent.clock.now()
        try await agent.advance(until: { modem.messages.count >= 2 }, limit: 60)
        #expect(agent.clock.now() - countdown < 12, "the 10 s countdown, then the SMS")
        #expect(await Self.fleet(agent)?.connected == false)
        await agent.stop()
    }

    /// A dispatcher's `{"cmd":"ack"}` acknowledges the alert as a contact's OK does: the calls stop,
    /// the journal and `status` say who. It comes at the end of 10 000 other `cmd` messages (junk,
    /// and "where"), which cost the agent nothing it needs: the alert still goes to both contacts.
    @Test func anAckOnCmdStopsTheCallsEvenAtTheEndOfAFlood() async throws {
        let broker = try Mosquitto()
        try broker.start()
        let modem = try FakeModem()
        let folder = try AgentInProcessTests.folder("mqtt-ack")
        var configuration = InProcessAgent.configuration(in: folder, modem: modem)
        configuration.mqtt = try Self.mqtt(broker, in: folder)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { await Self.fleet(agent)?.connected == true }, limit: 30)
        try await agent.advance(untilState: .alertCountdown, limit: 60)
        var lines = (0..<9_999).map { i in i % 3 == 0 ? "{\"cmd\":\"where\"}" : i % 3 == 1 ? "not json \(i)" : "{\"cmd\":\"disarm\"}" }
        lines.append("{\"cmd\":\"ack\",\"by\":\"Dispatch Anna\"}")
        let flood = lines
        try await offThread { try broker.publish("rideguard/bike1/cmd", lines: flood) }
        // Small steps: the broker delivers the flood in real time, which 0.1 s steps could outrun on
        // a loaded machine (the alert then goes out before the ack arrives).
        try await agent.advance(until: { await agent.agent.acknowledgement != nil || modem.messages.count >= 2
                                         || AgentInProcessTests.journal(folder).contains("Dispatch Anna acknowledged") }, limit: 120, step: 0.01)
        try await agent.advance(until: { modem.messages.count >= 2 }, limit: 120)
        // The flood may still be on its way: the broker delivers it in real time, and the agent answers
        // each "where". On a loaded CI machine that outlasted 60 s of the agent's time in 1 ms steps
        // (5,950 of the 6,666 lines it ignores had come). Its ack is waited for in real time, the
        // agent's clock standing still: reading MQTT takes none of it.
        let deadline = Date().addingTimeInterval(180)
        while !AgentInProcessTests.journal(folder).contains("Dispatch Anna acknowledged") && Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        // The flood's ack names no emergency: before the alert went out it has none to acknowledge,
        // after (the broker's delivery is real time, the agent's clock may outrun it) it is not this
        // one's. Either way it is said, and stops nothing.
        let journal = AgentInProcessTests.journal(folder)
        #expect(journal.contains("Dispatch Anna acknowledged over MQTT with no emergency under way: nothing to acknowledge")
                || journal.contains("Dispatch Anna acknowledged over MQTT, but not this emergency (no emergency named)"), "\(journal)\n\(agent.log.text)\n\(broker.log)")
        #expect(await agent.agent.acknowledgement == nil)
        #expect(agent.log.contains("cmd message(s) ignored"), "\(agent.log.text)")
        let state = await agent.agent.state
        #expect(state == .emergencySending || state == .emergencySent)
        // Now, with the calls ringing, the ack alone.
        try await agent.advance(until: { agent.log.contains("calls: round 1") }, limit: 60)
        let id = try #require(await agent.agent.emergencyID)
        try await offThread { try broker.publish("rideguard/bike1/cmd", lines: ["{\"cmd\":\"ack\",\"by\":\"Dispatch Anna\",\"emergency\":\(id)}"]) }
        try await agent.advance(until: { await agent.agent.acknowledgement != nil }, limit: 30)
        let acknowledgement = await agent.agent.acknowledgement
        #expect(acknowledgement?.who == "Dispatch Anna" && acknowledgement?.channel == .mqtt)
        #expect(AgentInProcessTests.journal(folder).contains("Dispatch Anna acknowledged the alert (acknowledged over MQTT): calls stopped"))
        let callsBefore = modem.calls.count
        await agent.advance(by: 300)
        #expect(modem.calls.count == callsBefore, "calls went on after the ack")
        #expect(await agent.agent.state == .emergencySent, "the ack changed nothing but the calls")
        await agent.stop()
    }

    /// Issue 43, point 11: an ack left over from before can never acknowledge a later emergency.
    /// Before, a retained `{"cmd":"ack"}` stopped the calls at the next connection, and one queued in
    /// a persistent session before the crash acknowledged it when the broker came back. Now a
    /// retained command is ignored, and an ack must name this emergency (its id, or a time after it
    /// began): the calls go on until one does.
    @Test func aStaleAckNeverAcknowledgesALaterEmergency() async throws {
        let broker = try Mosquitto()
        try broker.start()
        try broker.publish("rideguard/bike1/cmd", lines: ["{\"cmd\":\"ack\",\"by\":\"Yesterday\"}"], retain: true)
        let modem = try FakeModem()
        let folder = try AgentInProcessTests.folder("mqtt-stale-ack")
        var configuration = InProcessAgent.configuration(in: folder, modem: modem)
        configuration.mqtt = try Self.mqtt(broker, in: folder)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { await Self.fleet(agent)?.connected == true }, limit: 30)
        try await agent.advance(until: { agent.log.contains("calls: round 1") }, limit: 120)
        #expect(await agent.agent.acknowledgement == nil, "the retained ack acknowledged the emergency")
        let id = try #require(await agent.agent.emergencyID)
        let before = agent.clock.now() - 3600
        let stale = ["{\"cmd\":\"ack\",\"by\":\"Queued\"}", "{\"cmd\":\"ack\",\"by\":\"Queued\",\"t\":\(Int(before))}",
                     "{\"cmd\":\"ack\",\"by\":\"Queued\",\"emergency\":\(id - 600)}"]
        for ack in stale {
            try await offThread { try broker.publish("rideguard/bike1/cmd", lines: [ack]) }
            try await agent.advance(until: { AgentInProcessTests.journal(folder).components(separatedBy: "Queued acknowledged over MQTT, but not this emergency").count
                                             > stale.firstIndex(of: ack)! + 1 }, limit: 10, step: 0.01)
        }
        #expect(await agent.agent.acknowledgement == nil)
        #expect(AgentInProcessTests.journal(folder).contains("not taken, the calls go on (an ack names the emergency: {\"cmd\":\"ack\",\"by\":\"…\",\"emergency\":\(id)})"))
        // The state names the emergency, for the dispatcher's ack.
        let state = try await offThread { try broker.subscribe("rideguard/bike1/state") }
        #expect(state.first?.contains("\"emergency\":\(id)") == true, "\(state)")
        try await offThread { try broker.publish("rideguard/bike1/cmd", lines: ["{\"cmd\":\"ack\",\"by\":\"Anna\",\"t\":\(Int(agent.clock.now()))}"]) }
        try await agent.advance(until: { await agent.agent.acknowledgement != nil }, limit: 10, step: 0.01)
        #expect(await agent.agent.acknowledgement?.who == "Anna")
        await agent.stop()
    }

    /// `rideguard fleet watch`, as a dispatcher runs it: --json prints each bike's events as they
    /// come, with the bike's name; the view puts the bike in an emergency first, with its distance
    /// and direction from the dispatcher.
    @Test func fleetWatchShowsTheEventsAndTheBikeInAnEmergency() async throws {
        let broker = try Mosquitto()
        try broker.start()
        let folder = try AgentInProcessTests.folder("mqtt-watch")
        let passwordFile = folder.appendingPathComponent("dispatch-password").path
        try Mosquitto.passwords["dispatch"]!.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let watch = ["fleet", "watch", "--broker", "mqtts://localhost:\(broker.port)", "--user", "dispatch", "--password-file", passwordFile,
                     "--ca-file", broker.caFile]
        let jsonOutput = folder.appendingPathComponent("watch.jsonl").path
        let said = folder.appendingPathComponent("watch.err").path
        let watching = try Spawned([Rideguard.binary.path] + watch + ["--json"], stdout: jsonOutput, stderr: said)
        try await waitFor(10) { ((try? String(contentsOfFile: said, encoding: .utf8)) ?? "").contains("fleet watch: connected") }
        try broker.waitForSubscription(to: "rideguard/+/event")   // its last SUBSCRIBE reached the broker
        var configuration = InProcessAgent.configuration(in: folder)
        configuration.mqtt = try Self.mqtt(broker, in: folder)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .emergencySent, limit: 120)
        let database = try RideGuardDatabase(path: configuration.database)
        try await agent.advance(until: { try Self.allAcknowledged(database) }, limit: 30)
        try await waitFor(10) { ((try? String(contentsOfFile: jsonOutput, encoding: .utf8)) ?? "").contains("\"emergency_sent\"") }
        watching.kill(SIGTERM)
        let lines = try String(contentsOfFile: jsonOutput, encoding: .utf8).split(separator: "\n").map(String.init)
        let names = lines.compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]).flatMap { $0["device"] as? String == "bike1" ? $0["event"] as? String : nil }
        }
        #expect(["crash_detected", "countdown_started", "alerting", "emergency_sent"].allSatisfy(names.contains), "\(lines)")
        // The view, from the retained state: 45.2, 5.7 is 11 km north of the rider.
        let view = try await Rideguard.run(watch + ["--from", "45.2,5.7", "--seconds", "2"])
        await agent.stop()
        #expect(view.status == 0, "\(view.stderr)")
        #expect(view.stdout.contains("bike1        EMERGENCY emergency_sent  45.10000,5.70000") && view.stdout.contains("11.1 km S"), "\(view.stdout)")
    }

    /// A riding group: bike1 crashes and its alert goes out; bike2, 11 km north and armed, plays the
    /// group's pattern and shows who, how far, which way, and sends nothing itself; when bike1's
    /// rider cancels, bike2 falls silent.
    @Test func aGroupMemberHearsAnotherMembersAlertUntilItEnds() async throws {
        let broker = try Mosquitto()
        try broker.start()
        var sunday = AgentConfiguration.Group()
        sunday.name = "sunday"
        // bike2: upright and still, 11.1 km north of bike1.
        let folder2 = try AgentInProcessTests.folder("group-2")
        let still = folder2.appendingPathComponent("still.csv")
        var trace = "# rideguard-trace v1\n# rate_hz: 100\ntime_s,ax,ay,az,gx,gy,gz\n"
        for i in 0..<12_000 { trace += "\(Double(i) / 100),0.0100,-0.0200,9.8100,0.00100,-0.00200,0.00000\n" }
        try Data(trace.utf8).write(to: still)
        var configuration2 = InProcessAgent.configuration(in: folder2, trace: still, playback: 1)
        configuration2.gps.fixedPosition = [45.2, 5.7]
        configuration2.mqtt = try Self.mqtt(broker, in: folder2)
        configuration2.mqtt?.username = "bike2"
        configuration2.mqtt?.device = "bike2"
        try (Mosquitto.passwords["bike2"]! + "\n").write(toFile: configuration2.mqtt!.passwordFile!, atomically: true, encoding: .utf8)
        configuration2.group = sunday
        let bike2 = try InProcessAgent(configuration2)
        try await bike2.advance(untilState: .armed, limit: 60)
        try await bike2.advance(until: { await Self.fleet(bike2)?.connected == true }, limit: 30)
        let folder1 = try AgentInProcessTests.folder("group-1")
        var configuration1 = InProcessAgent.configuration(in: folder1)
        configuration1.mqtt = try Self.mqtt(broker, in: folder1)
        configuration1.group = sunday
        let bike1 = try InProcessAgent(configuration1)
        try await bike1.advance(untilState: .emergencySent, limit: 120)
        try await bike2.advance(until: { await Self.fleet(bike2)?.group?.isEmpty == false }, limit: 30)
        let member = try #require(await Self.fleet(bike2)?.group?.first)
        #expect(member.device == "bike1" && member.place == "11.1 km S, https://maps.google.com/?q=45.10000,5.70000", "\(member)")
        #expect(AgentInProcessTests.journal(folder2).contains("riding group: bike1 needs help, 11.1 km S, https://maps.google.com/?q=45.10000,5.70000"))
        #expect(bike2.log.contains("buzzer: three beeps every 5 s"), "\(bike2.log.text)")
        let status = try await AgentTests.status(folder2)
        #expect(status?.state == .armed)
        // bike1's rider cancels: its emergency ends, bike2 falls silent.
        async let cancel: Void = bike1.agent.press(hold: 3.5)
        try await bike1.advance(untilState: .emergencyEnded, limit: 30)
        await bike1.advance(by: 1)
        await cancel
        try await bike2.advance(until: { await Self.fleet(bike2)?.group?.isEmpty == true }, limit: 30)
        #expect(AgentInProcessTests.journal(folder2).contains("riding group: no member needs help any more"))
        #expect(bike2.log.contains("buzzer: silent"), "\(bike2.log.text)")
        #expect(try RideGuardDatabase(path: configuration2.database).outbox.all().isEmpty, "bike2 sent nothing")
        await bike1.stop()
        await bike2.stop()
    }

    /// A member's alert is heard for `dismiss_s` at most, and not again (retained, it comes again on
    /// each connection) until that member has reported no alert; this bike's own topic is not a
    /// member's, nor is anything outside the group.
    @Test func aGroupAlertIsDismissedAfterDismissSecondsAndOwnReportsAreNotHeard() {
        var settings = AgentConfiguration.Group()
        settings.name = "sunday"
        settings.dismissSeconds = 600
        var group = RidingGroup(settings, prefix: "rideguard", device: "bike2")
        let alert = Array(#"{"alert":true,"lat":45.1,"lon":5.7,"t":100}"#.utf8)
        #expect(group.report(topic: "rideguard/group/sunday/bike2", payload: alert) == nil)
        #expect(group.report(topic: "rideguard/group/other/bike1", payload: alert) == nil)
        #expect(group.report(topic: "rideguard/group/sunday/bike1", payload: Array("nonsense".utf8)) == nil)
        let report = try? #require(group.report(topic: "rideguard/group/sunday/bike1", payload: alert))
        #expect(report?.device == "bike1")
        guard case .groupAlert(let summary?, _) = group.update(["bike1": report!.report], now: 0, position: nil, mapLink: .geo) else {
            Issue.record("no alert")
            return
        }
        #expect(summary == "bike1 needs help, geo:45.10000,5.70000")
        #expect(group.update([:], now: 599, position: nil, mapLink: .geo) == nil)
        #expect(group.update([:], now: 600, position: nil, mapLink: .geo) == .groupAlert(summary: nil, at: 600))
        #expect(group.update(["bike1": report!.report], now: 700, position: nil, mapLink: .geo) == nil, "dismissed: heard again")
        #expect(group.update(["bike1": RidingGroup.Report(alert: false)], now: 800, position: nil, mapLink: .geo) == nil)
        // Issue 43, point 13: cleared right after its dismissal and raised again, it is not heard for
        // `dismiss_s` (a member cannot keep every buzzer sounding); after that, a new alert is.
        #expect(group.update(["bike1": report!.report], now: 900, position: nil, mapLink: .geo) == nil, "raised again at once: heard")
        #expect(group.update(["bike1": report!.report], now: 1399, position: nil, mapLink: .geo) == nil)
        #expect(group.update(["bike1": report!.report], now: 1401, position: nil, mapLink: .geo) != nil, "a new alert is heard")
        // A clock set back an hour: the alert is not dismissed early, its wait starts again.
        let setBack: Double = 1401 - 3600
        #expect(group.update([:], now: setBack, position: nil, mapLink: .geo) == nil)
        #expect(group.update([:], now: setBack + 599, position: nil, mapLink: .geo) == nil)
        #expect(group.update([:], now: setBack + 600, position: nil, mapLink: .geo) == .groupAlert(summary: nil, at: setBack + 600))
        // A member's name with a terminal escape and a newline is shown as printable text; a position
        // off the globe is no position.
        let forged = try? #require(group.report(topic: "rideguard/group/sunday/evil\u{1B}[2J\nname",
                                                payload: Array(#"{"alert":true,"lat":999,"lon":5.7}"#.utf8)))
        #expect(forged?.device == "evil[2Jname" && forged?.report == RidingGroup.Report(alert: true), "\(String(describing: forged))")
    }

    /// Issue 43, point 12: 30 000 made-up member names, 1 000 a second, keep at most
    /// `RidingGroup.maxMembers`, and each journal line says what changed, never the whole list (a
    /// line used to rewrite every member: 2.4 MB at 30 000).
    @Test func aFloodOfMemberNamesIsBounded() {
        var settings = AgentConfiguration.Group()
        settings.name = "sunday"
        var group = RidingGroup(settings, prefix: "rideguard", device: "bike2")
        var longest = 0
        for second in 0..<30 {
            var reports: [String: RidingGroup.Report] = [:]
            for i in 0..<1000 { reports["m\(second)-\(i)"] = RidingGroup.Report(alert: true, lat: 45.1, lon: 5.7) }
            if case .groupAlert(let summary?, _) = group.update(reports, now: Double(second), position: nil, mapLink: .geo) {
                longest = max(longest, summary.utf8.count)
            }
        }
        #expect(group.members.count == RidingGroup.maxMembers)
        #expect(group.unheard == 30_000 - RidingGroup.maxMembers)
        #expect(longest < 400, "a journal line of \(longest) bytes")
    }

    /// Issue 43, point 12: a control answer goes whole to a client that reads slowly, whatever its
    /// size (it was one non-blocking write: `status` failed past ~200 KB).
    @Test func aLargeControlAnswerArrivesWhole() throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        let big = String(repeating: "x", count: 1_000_000)
        let agentEnd = pair[0]
        let writer = Thread { ControlSocket.reply(.failed(big), to: agentEnd); close(agentEnd) }
        writer.start()
        usleep(200_000)                                   // the socket's buffer is full by now
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(pair[1], &chunk, chunk.count, 0)
            if n <= 0 { break }
            answer += chunk[0..<n]
        }
        let reply = try JSONDecoder().decode(ControlReply.self, from: Data(answer))
        #expect(reply.error == big)
    }

    /// The retained state: a change of its key (or `where`) at once; while riding, a moved position
    /// at most every interval; parked, a drifting position never; a clock set back, at once.
    @Test func theStateIsPublishedOnChangesAndAtMostEveryIntervalWhileRiding() {
        let last = (key: "armed", position: "45.1", at: 1000.0)
        func due(key: String = "armed", position: String = "45.1", asked: Bool = false, riding: Bool = true, at now: Double) -> Bool {
            FleetState.due(last: last, key: key, position: position, asked: asked, riding: riding, now: now, every: 30)
        }
        #expect(FleetState.due(last: nil, key: "armed", position: "", asked: false, riding: false, now: 0, every: 30))
        #expect(due(key: "alert_countdown", at: 1001))
        #expect(due(asked: true, at: 1001))
        #expect(!due(at: 1100), "nothing changed")
        #expect(!due(position: "45.2", at: 1029))
        #expect(due(position: "45.2", at: 1030))
        #expect(!due(position: "45.2", riding: false, at: 5000), "a parked bike's GPS drift")
        #expect(due(position: "45.2", at: 10), "the clock was set back")
    }

    /// A CA (or a password, a key) in a folder another user could write to is not used: they could
    /// have planted it to stand in for the broker. The agent says why and goes on protecting.
    @Test func aCAOthersCouldHavePlantedIsNotUsed() async throws {
        let folder = try AgentInProcessTests.folder("mqtt-planted")
        let open = folder.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: true)
        chmod(open.path, 0o777)
        let ca = open.appendingPathComponent("ca.crt")
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: ca)
        var configuration = InProcessAgent.configuration(in: folder)
        var mqtt = AgentConfiguration.MQTT()
        mqtt.url = "mqtts://127.0.0.1:1"
        mqtt.caFile = ca.path
        mqtt.device = "bike1"
        configuration.mqtt = mqtt
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { await Self.fleet(agent)?.problem != nil }, limit: 30)
        let problem = await Self.fleet(agent)?.problem ?? ""
        #expect(problem.contains("not using \(ca.path)") && problem.contains("writable by every user"), "\(problem)")
        #expect(AgentInProcessTests.journal(folder).contains("not using \(ca.path)"))
        try await agent.advance(untilState: .alertCountdown, limit: 60)      // still protecting: the crash is seen
        await agent.stop()
    }

    static func fleet(_ agent: InProcessAgent) async -> AgentStatus.Fleet? {
        agent.agent.fleetStatus
    }

    /// The broker acknowledged every event there is.
    static func allAcknowledged(_ database: RideGuardDatabase) throws -> Bool {
        try database.eventCursor("mqtt") == database.lastEventSeq()
    }
}

/// Issue 29, point 3: the bike on a Traccar server, through its OsmAnd protocol (`OsmAndReceiver`).
@Suite(.serialized, .onOneThread) struct TraccarTests {
    /// The crash's alert gives one `alarm=fallDown` with the position, even when Traccar is down
    /// when it goes out (it waits, in order, and goes once Traccar answers); positions go too; the
    /// rider's SOS gives one `alarm=sos`.
    @Test func theAlarmsReachTraccarOnceEvenWhenItIsDownAndPositionsGoToo() async throws {
        let traccar = try OsmAndReceiver()
        traccar.answer(503)
        let folder = try AgentInProcessTests.folder("traccar")
        var configuration = InProcessAgent.configuration(in: folder)
        var settings = AgentConfiguration.Traccar()
        settings.url = "http://127.0.0.1:\(traccar.port)"
        settings.device = "bike1"
        configuration.traccar = settings
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .emergencySent, limit: 120)
        try await agent.advance(until: { traccar.refused.contains { $0["alarm"] == "fallDown" } }, limit: 180)
        #expect(traccar.reports.isEmpty)
        traccar.answer(200)
        try await agent.advance(until: { traccar.reports.contains { $0["alarm"] != nil } }, limit: 120)
        await agent.advance(by: 120)
        let alarms = traccar.reports.filter { $0["alarm"] != nil }
        #expect(alarms.map { $0["alarm"] } == ["fallDown"], "\(traccar.reports)")
        #expect(alarms.first?["id"] == "bike1" && alarms.first?["lat"] == "45.100000" && alarms.first?["lon"] == "5.700000", "\(alarms)")
        #expect(traccar.reports.contains { $0["alarm"] == nil && $0["lat"] == "45.100000" && $0["timestamp"] != nil }, "no position: \(traccar.reports)")
        // The rider cancels, resumes, then raises an SOS (a 3.5 s hold): one alarm=sos.
        async let cancel: Void = agent.agent.press(hold: 3.5)
        try await agent.advance(untilState: .emergencyEnded, limit: 30)
        await agent.advance(by: 1)
        await cancel
        async let resume: Void = agent.agent.press(hold: 0.3)
        try await agent.advance(untilState: .armed, limit: 30)
        await resume
        async let sos: Void = agent.agent.press(hold: 3.5)
        try await agent.advance(untilState: .emergencySent, limit: 60)
        await sos
        try await agent.advance(until: { traccar.reports.contains { $0["alarm"] == "sos" } }, limit: 60)
        await agent.advance(by: 60)
        await agent.stop()
        #expect(traccar.reports.compactMap { $0["alarm"] } == ["fallDown", "sos"], "\(traccar.reports)")
    }
}

/// What an OsmAnd report says, parameter by parameter.
@Suite struct OsmAndReportTests {
    @Test func aReportCarriesItsPositionOrSaysItHasNone() {
        let full = OsmAndReport(device: "bike 1/é", time: 1795658131.7, latitude: -45.1, longitude: 5.7, speedKnots: 21.6, bearing: 93.4,
                                altitude: 210, accuracy: 4.6, alarm: "fallDown")
        #expect(full.query == "id=bike%201%2F%C3%A9&timestamp=1795658131&lat=-45.100000&lon=5.700000&speed=21.6&bearing=93&altitude=210&accuracy=5&alarm=fallDown")
        // An alarm before any fix: never 0, 0 (a point in the Gulf of Guinea on the dispatcher's map).
        let none = OsmAndReport(device: "bike1", time: 100, latitude: nil, longitude: nil, alarm: "sos")
        #expect(none.query == "id=bike1&timestamp=100&valid=false&alarm=sos")
    }
}

/// Issue 64, point 2: the events as the publishers read them (typed, once, in Storage), the one
/// cursor MQTT and Traccar share, and a fleet path's failures said once and when over.
@Suite struct FleetEventContractTests {
    static func database(_ name: String) throws -> RideGuardDatabase {
        try RideGuardDatabase(path: Scratch.folder("events-\(name)").appendingPathComponent("rideguard.sqlite").path)
    }

    /// What the workflow writes is what a publisher reads: the alert's trigger and its place.
    @Test func anEventIsReadTypedAsTheWorkflowWroteIt() throws {
        let database = try Self.database("typed")
        let fix = Fix(time: 990, latitude: 45.1, longitude: 5.7, accuracy: 12)
        database.recordEvent(FleetEvent.alerting(.sos).json(at: 1000, position: fix), at: 1000)
        database.recordEvent(FleetEvent.alerting(.crash).json(at: 1001, position: nil), at: 1001)
        database.recordEvent(#"{"event":"from_a_later_version","t":1002}"#, at: 1002)
        let events = try database.events(after: 0, limit: 10)
        #expect(events.map(\.name) == [.alerting, .alerting, nil])
        #expect(events.map(\.trigger) == [.sos, .crash, nil])
        let place = try #require(events[0].place)
        #expect(events[0].t == 1000 && place.latitude == 45.1 && place.longitude == 5.7 && place.accuracy == 12, "\(events[0])")
        #expect(events[1].place == nil)
        // An event this version does not know is published all the same, whole.
        #expect(events[2].published == #"{"seq":3,"event":"from_a_later_version","t":1002}"#)
        #expect(StoredEvent(seq: 4, json: "not an event") == nil && StoredEvent(seq: 5, json: #"{"event":"armed"}"#) == nil)
    }

    /// A publisher never used starts at the newest event; a move forward is kept across a restart,
    /// a move back is not made.
    @Test func theCursorStartsAtTheNewestAndKeepsWhatItWasMovedTo() async throws {
        let database = try Self.database("cursor")
        for t in 1...3 { database.recordEvent(FleetEvent(.armed).json(at: Double(t), position: nil), at: Double(t)) }
        let clock = ManualClock()
        var cursor = try await EventCursor.start("traccar", database: database, clock: clock, logger: Logger(label: "test"))
        #expect(cursor.seq == 3 && cursor.events(limit: 10, at: clock.now()).isEmpty)
        database.recordEvent(FleetEvent(.degraded, summary: "weak signal").json(at: 4, position: nil), at: 4)
        database.recordEvent(FleetEvent(.armed).json(at: 5, position: nil), at: 5)
        #expect(cursor.events(limit: 10, at: clock.now()).map(\.name) == [.degraded, .armed])
        #expect(cursor.events(after: 4, limit: 10, at: clock.now()).map(\.seq) == [5])
        cursor.move(to: 4, at: clock.now())
        cursor.move(to: 2, at: clock.now())
        #expect(cursor.seq == 4)
        let again = try await EventCursor.start("traccar", database: database, clock: clock, logger: Logger(label: "test"))
        #expect(again.seq == 4)
        // Each publisher has its own.
        #expect(try await EventCursor.start("mqtt", database: database, clock: clock, logger: Logger(label: "test")).seq == 5)
    }

    /// A failure is journaled when it starts and when its reason changes, not at every retry, and
    /// its end is journaled too.
    @Test func aFleetFailureIsSaidOnceAndWhenItIsOver() throws {
        struct Refused: Error, CustomStringConvertible { var description: String }
        let database = try Self.database("trouble")
        var trouble = FleetTrouble("mqtt", database: database, logger: Logger(label: "test"))
        trouble.worked("subscribing to fleet/bike1/cmd", at: 1)
        for t in 2...4 { trouble.failed("subscribing to fleet/bike1/cmd", Refused(description: "not connected"), at: Double(t)) }
        trouble.failed("subscribing to fleet/bike1/cmd", Refused(description: "not authorised"), at: 5)
        trouble.worked("subscribing to fleet/bike1/cmd", at: 6)
        trouble.worked("subscribing to fleet/bike1/cmd", at: 7)
        let lines = try database.journal(kind: .system).reversed().map { "\(Int($0.time)) \($0.text)" }
        #expect(lines == [
            "2 mqtt: subscribing to fleet/bike1/cmd failed: not connected (SMS alerts are not affected)",
            "5 mqtt: subscribing to fleet/bike1/cmd failed: not authorised (SMS alerts are not affected)",
            "6 mqtt: subscribing to fleet/bike1/cmd works again",
        ], "\(lines)")
    }
}
