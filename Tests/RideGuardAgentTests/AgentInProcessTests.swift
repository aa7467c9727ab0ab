// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
@testable import Storage
import AgentTestSupport
import RideGuardTestSupport
import Testing

/// The agent's end-to-end paths, in-process on a manual clock (`InProcessAgent`): the crash in the
/// trace, the countdown, the SMS to a fake modem on a pty, the calls, the journal. Time is moved by
/// the test, so a 10 s countdown or a 60 s round of calls costs no real seconds.
@Suite(.serialized, .onOneThread) struct AgentInProcessTests {
    /// A folder with a database holding Sam and Jo and the rider's message (unless `contacts` is false).
    /// The database is `database` when given, else `rideguard.sqlite` in the folder.
    static func folder(_ name: String, contacts: Bool = true, database path: String? = nil) throws -> URL {
        let folder = try Scratch.folder(name)
        if contacts {
            let database = try RideGuardDatabase(path: path ?? folder.appendingPathComponent("rideguard.sqlite").path)
            _ = try database.addConfirmedContact(name: "Sam", number: "+33612345678", now: Date().timeIntervalSince1970)
            _ = try database.addConfirmedContact(name: "Jo", number: "+4915112345678", now: Date().timeIntervalSince1970)
            try database.setMessage("Crash! Call me.")
        }
        return folder
    }

    /// The contacts' table renamed away, as a damaged or hand-edited database would have it; waits
    /// for the agent's writes (SQLite's busy timeout).
    static func hideContacts(_ path: String) async throws {
        try SQLiteConnection(path: path, busySeconds: 5).transaction { try $0.execute("ALTER TABLE contacts RENAME TO contacts_away") }
    }

    /// The whole journal (a flood can write more than the 200 lines `events` shows), newest first.
    static func journal(_ folder: URL, kind: JournalKind? = nil) -> String {
        let database = try? RideGuardDatabase(path: folder.appendingPathComponent("rideguard.sqlite").path)
        return ((try? database?.journal(kind: kind, limit: 1_000_000)) ?? []).map(\.text).joined(separator: "\n")
    }

    /// After an emergency the journal alone answers "who got what, when, and what failed": each
    /// send, each failure with its reason and each retry, with the numbers masked.
    @Test func theJournalTellsWhoGotWhatAndWhatFailed() async throws {
        var script = FakeModem.Script()
        script.outcomes = [.cmsError(38), .cmsError(1)]       // Sam: network out of order (retried); Jo: unassigned number
        let modem = try FakeModem(script: script)
        let folder = try Self.folder("journal")
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, modem: modem))
        let sam = PhoneNumber.mask("+33612345678"), jo = PhoneNumber.mask("+4915112345678")
        try await agent.advance(until: { Self.journal(folder, kind: .messages).contains("sent alert to \(sam) (attempt 2)") }, limit: 120)
        await agent.stop()
        let journal = Self.journal(folder, kind: .messages)
        #expect(modem.received.count == 3)
        #expect(journal.contains("alert queued for 2 contacts: \(sam), \(jo)"), "\(journal)")
        #expect(journal.contains("could not send alert to \(sam) (attempt 1): +CMS ERROR: 38 (network out of order); retrying in"), "\(journal)")
        #expect(journal.contains("gave up on alert to \(jo) after 1 attempt: "), "\(journal)")
        #expect(journal.contains("sent alert to \(sam) (attempt 2): reference "), "\(journal)")
        let everything = Self.journal(folder)
        #expect(!everything.contains("612345678") && !everything.contains("15112345678"), "a number in full: \(everything)")
    }

    /// The recorded lowside: every contact gets the alert with the map link, the agent stops
    /// gracefully, no number is logged in full, and the trace around the crash is saved next to the
    /// database and replays to the same verdict.
    @Test func aCrashAlertsEveryContactWithTheMapLink() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("crash")
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, modem: modem))
        try await agent.advance(until: { modem.messages.count >= 2 && Self.journal(folder, kind: .detections).contains("saved the trace around the crash") },
                                limit: 120)
        await agent.stop()
        #expect(Set(modem.received.map(\.decoded.number)) == ["+33612345678", "+4915112345678"])
        #expect(modem.messages.allSatisfy { $0.hasPrefix("Crash! Call me.\nhttps://maps.google.com/?q=45.10000,5.70000") }, "\(modem.messages)")
        #expect(Self.journal(folder, kind: .alerts).contains("countdown over: alerting every contact"))
        #expect(agent.log.contains("stopped") && !agent.log.text.contains("612345678"), "\(agent.log.text)")
        let traces = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("traces").path)
        let saved = try #require(traces.first { $0.hasPrefix("crash-") && $0.hasSuffix(".csv") })
        let replay = Rideguard.inProcess(["replay", folder.appendingPathComponent("traces/\(saved)").path, "--json"])
        #expect(replay.status == 0 && replay.stdout.contains("\"event\":\"crash_detected\""), "\(replay.stdout)\(replay.stderr)")
    }

    /// Stopped during a crash's countdown, then again while the first alert was being sent (the
    /// modem never answered it): each time the next agent goes on from where the emergency was, on
    /// the same deadline, every contact gets the alert, and the alert still tells the crash's time
    /// and evidence, from the persisted emergency. (The state is saved before every step; the kill -9
    /// of the binary, mid-countdown and mid-send, is `killedMidCountdownTheRestartGoesOn` and
    /// `killedMidSendEveryContactStillGetsTheAlert`.)
    @Test func anEmergencyGoesOnAcrossRestartsWithTheCrashsEvidence() async throws {
        var script = FakeModem.Script()
        script.outcomes = [.silence]                                        // the first alert hangs
        let modem = try FakeModem(script: script)
        let folder = try Self.folder("restarts")
        let crashing = InProcessAgent.configuration(in: folder, modem: modem)
        let first = try InProcessAgent(crashing)
        try await first.advance(untilState: .alertCountdown, limit: 120)
        let countdownStarted = first.clock.now()
        await first.stop()
        // After the restart the bike lies where it fell: still, on its side, no new fall to detect.
        let lying = folder.appendingPathComponent("lying.csv")
        var trace = "# rideguard-trace v1\n# rate_hz: 100\ntime_s,ax,ay,az,gx,gy,gz\n"
        for i in 0..<6000 { trace += "\(Double(i) / 100),9.7900,0.1200,0.3100,0.00100,-0.00200,0.00000\n" }
        try Data(trace.utf8).write(to: lying)
        let lyingStill = InProcessAgent.configuration(in: folder, trace: lying, playback: 1, modem: modem)
        let second = try InProcessAgent(lyingStill, clock: first.clock)
        try await second.advance(until: { modem.received.count >= 1 }, limit: 60)
        #expect(second.clock.now() - countdownStarted >= 10, "the countdown kept its deadline")
        await second.stop()
        #expect(try RideGuardDatabase(path: folder.appendingPathComponent("rideguard.sqlite").path).outbox.all().contains { $0.status != .sent })
        let third = try InProcessAgent(lyingStill, clock: second.clock)
        try await third.advance(until: { Set(modem.received.map(\.decoded.number)) == ["+33612345678", "+4915112345678"] && modem.received.count >= 3 },
                                limit: 120)
        await third.stop()
        #expect(modem.messages.allSatisfy { $0.contains("Crash at") && $0.contains("impact") }, "\(modem.messages)")
        #expect(third.log.contains("resumed in state emergencySending after a restart"), "\(third.log.text)")
    }

    /// A crash, "I'm fine", then a manual SOS: the SOS's alert says SOS, with none of the
    /// cancelled crash's time, impact or posture.
    @Test func aManualSOSAfterACancelledCrashTellsNothingOfThatCrash() async throws {
        let modem = try FakeModem()
        let agent = try InProcessAgent(InProcessAgent.configuration(in: try Self.folder("sos-after-crash"), modem: modem))
        try await agent.advance(untilState: .alertCountdown, limit: 60)
        async let fine: Void = agent.agent.press(hold: 1.5)
        try await agent.advance(untilState: .armed, limit: 10)
        await agent.advance(by: 2)                             // "I'm fine" at 1 s; the button is up at 1.5 s
        await fine
        async let sos: Void = agent.agent.press(hold: 3.5)
        try await agent.advance(until: { modem.messages.count >= 2 }, limit: 60)
        await sos
        await agent.stop()
        let alerts = modem.messages.prefix(2)
        #expect(alerts.allSatisfy { $0.contains("SOS raised by the rider at") && !$0.contains("Crash at") && !$0.contains("impact") }, "\(alerts)")
    }

    /// Issue 27, point 5: the contacts cannot be read when the calls start (their table is away):
    /// the contacts read last are rung, never "no contacts, so no calls".
    @Test func contactsThatCannotBeReadWhenTheCallsStartAreStillRung() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("calls-db")
        var configuration = InProcessAgent.configuration(in: folder, modem: modem)
        configuration.calls.ringSeconds = 10
        configuration.calls.intervalSeconds = 60
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .alertCountdown, limit: 60)
        try await Self.hideContacts(configuration.database)
        try await agent.advance(until: { !modem.calls.isEmpty }, limit: 60)
        await agent.stop()
        #expect(modem.calls[0].number == "+33612345678")
        #expect(modem.messages.count == 2)
    }

    /// The contacts cannot be read when the countdown runs out (the table is gone for a while): the
    /// alert is not "sent to nobody", nor delayed: it goes to the contacts the agent read last (it
    /// reads them every 10 s).
    @Test func contactsThatCannotBeReadAreTheOnesReadLast() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("db-failure")
        let configuration = InProcessAgent.configuration(in: folder, modem: modem)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .alertCountdown, limit: 60)
        try await Self.hideContacts(configuration.database)
        try await agent.advance(until: { Set(modem.received.map(\.decoded.number)) == ["+33612345678", "+4915112345678"] }, limit: 30)
        await agent.stop()
        #expect(!agent.log.contains("could not queue the alert"), "\(agent.log.text)")
    }

    /// Issue 27's wording fault: with a modem that cannot call, nothing says a contact is being
    /// rung; the output and `status` say the modem cannot make calls.
    @Test func aModemWithoutVoiceNeverSaysRinging() async throws {
        var script = FakeModem.Script()
        script.voice = false
        let modem = try FakeModem(script: script)
        let folder = try Self.folder("no-voice")
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, modem: modem))
        try await agent.advance(until: { modem.messages.count == 2 && agent.log.contains("the modem cannot make voice calls") }, limit: 60)
        #expect(!agent.log.contains("ringing"), "\(agent.log.text)")
        #expect(try await AgentTests.status(folder)?.calls == "off (the modem cannot make voice calls)")
        await agent.stop()
        #expect(!modem.commands.contains { $0.hasPrefix("ATD") })
    }

    /// "I'm fine" through the control socket, as `rideguard ctl press` sends it: the countdown
    /// stops and nothing is sent, even well past its end.
    @Test func imFineThroughTheControlSocketSendsNothing() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("ctl")
        let configuration = InProcessAgent.configuration(in: folder, modem: modem)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .armed, limit: 20)
        let armed = try #require(try await AgentTests.status(folder))
        #expect(armed.contacts == 2)
        #expect(armed.sensor.samples > 0 && !armed.sensor.blind)
        try await agent.advance(untilState: .alertCountdown, limit: 60)
        // The buzzer's check (the phone's) never plays over a countdown.
        let buzz = try await Rideguard.run(["ctl", "buzz", "--socket", configuration.controlSocket])
        #expect(buzz.status == 1 && buzz.stderr.contains("not during an emergency (alertCountdown)"), "\(buzz.stderr)")
        let press = try await Rideguard.run(["ctl", "press", "--hold", "1.5", "--socket", configuration.controlSocket])
        #expect(press.status == 0, "\(press.stderr)")
        try await agent.advance(untilState: .armed, limit: 10)
        await agent.advance(by: 12)                          // past the end of the countdown
        #expect(modem.received.isEmpty)
        let human = try await Rideguard.run(["status", "--socket", configuration.controlSocket])
        #expect(human.stdout.contains("state: armed") && human.stdout.contains("outbox: 0 pending; contacts: 2"), "\(human.stdout)")
        // Armed, it plays, and status has seen the press.
        #expect(try await Rideguard.run(["ctl", "buzz", "--socket", configuration.controlSocket]).status == 0)
        let pressed = try #require(try await AgentTests.status(folder))
        #expect(pressed.gpio.lastPress != nil && pressed.gpio.buttonDown == false)
        await agent.stop()
    }

    /// A normal ride, start to end (synthesised: riding, stops, turns, bumps): nothing is sent,
    /// nothing is detected as a crash.
    @Test func aNormalRideSendsNothing() async throws {
        let synth = Scratch.path("rideguard-synth")
        #expect(try await Rideguard.run(["synth", "--out", synth.path, "--seed", "12", "--scenario", "normal_ride", "--count", "1",
                                   "--riding-scale", "0.1", "--rate", "100"]).status == 0)
        let modem = try FakeModem()
        let folder = try Self.folder("ride")
        let trace = synth.appendingPathComponent("0001-normal_ride.csv")
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, trace: trace, modem: modem))
        try await agent.advance(until: { agent.log.contains("simulated IMU: end of the trace") }, limit: 600, step: 0.5)
        let samples = try #require(try await AgentTests.status(folder)).sensor.samples
        await agent.stop()
        let rows = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }.count - 1
        #expect(samples == rows, "the whole ride was played")
        #expect(modem.received.isEmpty)
        #expect(await agent.agent.state == .armed)
        #expect(!Self.journal(folder, kind: .detections).contains("crash detected"))
    }

    /// Calls after the alert SMS: Sam's phone rings out, so Jo's is rung next. While Sam's rings,
    /// Sam texts WHERE: the answer goes out before the call ends (a call never holds up a
    /// message). While Jo's rings, Jo texts OK: that acknowledgement hangs up Jo's call at once,
    /// and Ana is never rung.
    @Test func anUnansweredCallMovesOnAndAnOKStopsTheCalls() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("calls")
        var configuration = InProcessAgent.configuration(in: folder, modem: modem)
        configuration.calls.ringSeconds = 10
        configuration.calls.intervalSeconds = 60
        _ = try RideGuardDatabase(path: configuration.database).addConfirmedContact(name: "Ana", number: "+34600000003", now: Date().timeIntervalSince1970)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { modem.calls.count == 1 }, limit: 60)
        #expect(modem.messages.count == 3, "every alert went out before the first call")
        let firstCall = modem.calls[0]
        #expect(try #require(modem.received.map(\.at).max()) < firstCall.placed, "a call came before an alert SMS")
        let samRung = agent.clock.now()
        await agent.advance(by: 1)
        modem.deliver(from: "+33612345678", "WHERE")
        try await agent.advance(until: { modem.messages.count == 4 }, limit: 5)
        #expect(modem.calls.count == 1 && modem.calls[0].ended == nil, "the answer waited for the call to end")

        try await agent.advance(until: { modem.calls.count == 2 }, limit: 20)
        let rang = agent.clock.now() - samRung
        let sam = modem.calls[0]
        #expect(sam.number == "+33612345678" && !sam.answered && sam.ended != nil)
        #expect(rang >= 9.5 && rang < 12, "Sam's phone rang \(rang) s")
        #expect(modem.calls[1].number == "+4915112345678")
        await agent.advance(by: 1)
        modem.deliver(from: "+4915112345678", "ok!")
        let joOK = agent.clock.now()
        await agent.clock.settle(until: { Self.journal(folder, kind: .alerts).contains("acknowledged the alert") })
        try await agent.advance(until: { modem.calls[1].ended != nil }, limit: 10)
        #expect(agent.clock.now() - joOK < 3, "Jo's phone rang on after the OK: \(agent.log.text)")
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.acknowledgement != nil }, limit: 10)
        let human = try await Rideguard.run(["status", "--socket", configuration.controlSocket]).stdout
        #expect(human.contains("acknowledged: by Jo (+49•••••••5678), replying OK at "), "\(human)")
        #expect(human.contains("calls: stopped"), "\(human)")
        await agent.advance(by: 120, step: 1)
        await agent.stop()
        #expect(modem.calls.count == 2, "Ana was rung after the OK")
        let alerts = Self.journal(folder, kind: .alerts)
        #expect(alerts.contains("call to Sam (+33•••••5678): no answer in 10 s (AT port held "), "\(alerts)")
        #expect(alerts.contains("Jo (+49•••••••5678) acknowledged the alert (replied OK): calls stopped"), "\(alerts)")
        #expect(!alerts.contains("612345678") && !alerts.contains("15112345678"))
    }

    /// A bike pinned upright by a collision whose pulse the accelerometer barely shows (bumps, no
    /// horizontal delta-v): only GPS tells it, the speed gone from 15 m/s to 0 faster than brakes
    /// can. The same ride is a collision with that speed on its samples, and nothing with a speed
    /// of 0 throughout. (gpsd's speed reaching the samples: `theSamplesCarryGpsdsSpeed`.)
    @Test(arguments: [true, false])
    func aCollisionOnlyGPSSpeedReveals(speedDrops: Bool) async throws {
        // 40 s upright at 100 Hz; a 4 g vertical bump every 0.5 s from 2 to 16 s, then still. The
        // receiver's speed, as gpsd gives it 5 times a second: 15 m/s, then 0 from 8 s.
        var trace = "# rideguard-trace v1\n# rate_hz: 100\ntime_s,ax,ay,az,gx,gy,gz,speed_mps\n"
        for i in 0..<4000 {
            let t = Double(i) / 100
            let bump = t >= 2 && t < 16 && i % 50 < 3
            let noise = i % 2 == 0 ? 0.02 : -0.02
            let speed = speedDrops && t < 8 ? 15.0 : 0
            trace += "\(t),\(0.12 + noise),\(-0.03 - noise),\(bump ? 49.0 : 9.79 + noise),0.00100,-0.00200,0.00000,\(speed)\n"
        }
        let file = try Rideguard.temporaryFile("pinned-\(UUID().uuidString).csv", contents: Data(trace.utf8))
        let folder = try Self.folder("gps-collision-\(speedDrops)")
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, trace: file, playback: 1))
        let detections = { Self.journal(folder, kind: .detections) }
        if speedDrops {
            try await agent.advance(until: { detections().contains("crash detected") }, limit: 40)
            #expect(detections().split(separator: "\n").contains { $0.hasPrefix("crash detected") && $0.contains("collision") }, "\(detections())")
        } else {
            try await agent.advance(until: { agent.log.contains("simulated IMU: end of the trace") }, limit: 60, step: 0.5)
            await agent.advance(by: 5)
            #expect(!detections().contains("crash detected"), "\(detections())")
        }
        await agent.stop()
    }

    /// Issue 27, point 4: Sam's OK arrives while the last alert is being sent (a network that takes
    /// a second to accept each): it is read before any call is dialled, so nobody is ever rung.
    @Test func anOKReadBeforeTheCallsStartWinsTheRace() async throws {
        var script = FakeModem.Script()
        script.sendSeconds = 1
        let modem = try FakeModem(script: script)
        let folder = try Self.folder("ok-race")
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, modem: modem))
        let sends = { modem.commands.filter { $0.hasPrefix("AT+CMGS=") }.count }
        try await agent.advance(until: { sends() == 1 }, limit: 60)
        // The network's second is a real one: the clock stands still while the modem sends.
        await agent.clock.settle(until: { sends() == 2 }, seconds: 10)
        #expect(sends() == 2)
        modem.deliver(from: "+33612345678", "OK")
        await agent.clock.settle(until: { (try? await AgentTests.status(folder))??.acknowledgement != nil }, seconds: 10)
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.acknowledgement != nil && modem.stored == 0 }, limit: 10)
        await agent.advance(by: 60, step: 1)
        await agent.stop()
        #expect(modem.messages.count == 2)
        #expect(!modem.commands.contains { $0.hasPrefix("ATD") }, "a call was dialled after the OK: \(modem.commands.suffix(12))")
    }

    /// After the alert, Sam picks up the first call: that acknowledges the alert, and Jo is not
    /// rung. Then the rider holds the button 3 s: the all-clear goes to both.
    @Test func anAnsweredCallStopsTheRoundAndTheLongHoldSendsTheAllClear() async throws {
        var script = FakeModem.Script()
        script.phones = ["+33612345678": .answers(after: 1)]
        let modem = try FakeModem(script: script)
        let folder = try Self.folder("clear")
        let configuration = InProcessAgent.configuration(in: folder, modem: modem)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { modem.calls.count == 1 }, limit: 60)
        await agent.clock.settle(until: { modem.calls[0].answered })          // Sam picks up a second (real time) after it rings
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.acknowledgement != nil }, limit: 20)
        let calls = modem.calls
        #expect(calls.count == 1 && calls[0].number == "+33612345678" && calls[0].answered && calls[0].ended != nil, "\(calls)")
        #expect(try await AgentTests.status(folder)?.calls == "answered by Sam (+33•••••5678)")
        let alerts = Self.journal(folder, kind: .alerts)
        #expect(alerts.contains("call to Sam (+33•••••5678): answered (AT port held "), "\(alerts)")
        #expect(alerts.contains("Sam (+33•••••5678) acknowledged the alert (answered the call): calls stopped"), "\(alerts)")
        #expect(!alerts.contains("nobody answered round 1"), "the round went on after the answer: \(alerts)")
        #expect(try await Rideguard.run(["ctl", "press", "--hold", "3.5", "--socket", configuration.controlSocket]).status == 0)
        try await agent.advance(until: { modem.messages.count >= 4 }, limit: 30)
        let clears = modem.received.filter { $0.decoded.text.contains("the rider cancelled the alert") }
        #expect(Set(clears.map(\.decoded.number)) == ["+33612345678", "+4915112345678"])
        try await agent.advance(untilState: .emergencyEnded, limit: 10)
        await agent.advance(by: 600, step: 5)
        await agent.stop()
        #expect(modem.calls.count == 1, "Jo was rung after Sam answered")
    }

    /// No contact: the agent says why it does not protect, and arms by itself once one is added.
    @Test func withoutAContactItSaysWhyAndArmsOnceOneIsAdded() async throws {
        let folder = try Self.folder("arm", contacts: false)
        let configuration = InProcessAgent.configuration(in: folder, playback: 0.25)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .disarmed, limit: 20)
        try await agent.advance(until: { agent.log.contains("not protecting: no emergency contact") }, limit: 20)
        #expect(Self.journal(folder, kind: .system).contains("not protecting: no emergency contact"))
        await agent.advance(by: 30)
        #expect(await agent.agent.state == .disarmed)
        let database = try RideGuardDatabase(path: configuration.database)
        _ = try database.addConfirmedContact(name: "Sam", number: "+33612345678", now: agent.clock.now())
        try await agent.advance(untilState: .armed, limit: 30)
        await agent.stop()
    }

    /// Two-way SMS: the fake modem stores SMS-DELIVER PDUs and announces them (+CMTI); the agent
    /// reads (+CMGL), answers a contact's WHERE through the outbox, ignores strangers, and deletes.
    @Test func aContactsWhereIsAnsweredAndAStrangersIsNot() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("sms-in")
        let configuration = InProcessAgent.configuration(in: folder, playback: 0.25, modem: modem)   // the crash is minutes away
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { await agent.agent.state == .armed && modem.commands.contains("AT+CNMI=2,1,0,0,0") }, limit: 20)
        let replies = { (number: String) in modem.received.filter { $0.decoded.number == number }.map(\.decoded.text) }

        modem.deliver(from: "+33612345678", "Where?")
        try await agent.advance(until: { replies("+33612345678").count == 1 }, limit: 20)
        let answer = replies("+33612345678")[0]
        #expect(answer.hasPrefix("RideGuard - ") && answer.contains("protecting the rider"), "\(answer)")
        #expect(answer.contains("https://maps.google.com/?q=45.10000,5.70000"), "\(answer)")

        // A stranger gets nothing; Jo's "Où ?" in UCS2, in two parts, is put back together and answered.
        modem.deliver(from: "+447700900123", "WHERE")
        modem.deliver(from: "+4915112345678", "Où ?" + String(repeating: " ", count: 80), parts: 2)
        try await agent.advance(until: { replies("+4915112345678").count == 1 }, limit: 20)
        // Sam again within the minute: not answered twice. Sam's OK with no emergency: journaled only.
        modem.deliver(from: "0612345678", "where")       // Sam, as some networks give a sender of their own country
        modem.deliver(from: "+33612345678", "OK")
        try await agent.advance(until: { modem.stored == 0 && Self.journal(folder, kind: .messages).contains("Sam (+33•••••5678) replied OK") },
                                limit: 20)
        await agent.advance(by: 10)
        #expect(replies("+447700900123").isEmpty, "a stranger got an answer")
        #expect(replies("+33612345678").count == 1, "answered twice within a minute")
        let events = Self.journal(folder, kind: .messages)
        #expect(events.contains("SMS from +44••••••0123 (not a contact), 5 characters: not answered"), "\(events)")
        #expect(events.contains("WHERE from Sam (+33•••••5678): answered less than a minute ago"), "\(events)")
        #expect(!events.contains("7700900") && !events.contains("612345678"), "numbers are masked in the journal")

        // STATUS: answered to the rider's own phone only, not to a contact.
        try RideGuardDatabase(path: configuration.database).setRiderPhone("+33 7 00 00 00 01")
        modem.deliver(from: "+4915112345678", "status")
        modem.deliver(from: "+33700000001", "État")
        try await agent.advance(until: { replies("+33700000001").count == 1 && modem.stored == 0 }, limit: 20)
        let report = replies("+33700000001")[0]
        #expect(report.contains("protecting the rider\nIMU OK, ") && report.contains("SMS waiting: 0"), "\(report)")
        #expect(report.contains("https://maps.google.com/?q=45.10000,5.70000"), "\(report)")
        await agent.advance(by: 5)
        await agent.stop()
        #expect(replies("+4915112345678").count == 1, "a contact's STATUS was answered")
        let later = Self.journal(folder, kind: .messages)
        #expect(later.contains("STATUS from Jo (+49•••••••5678): only the rider's own phone may ask"), "\(later)")
    }

    /// PAIR from the rider's own phone: a one-time link to the web page comes back by SMS, and it
    /// pairs once; a contact's PAIR is refused (a sender's number can be spoofed, but only to the
    /// rider's phone does the link go).
    @Test func theRidersPairGetsALinkThatPairsOnce() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("sms-pair")
        var configuration = InProcessAgent.configuration(in: folder, playback: 0.25, modem: modem)
        configuration.web.address = "192.168.4.1"
        let database = try RideGuardDatabase(path: configuration.database)
        try database.setRiderPhone("+33 7 00 00 00 01")
        try database.setLanguage(.fr)          // the rider's, over the configuration's (en)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { await agent.agent.state == .armed && modem.commands.contains("AT+CNMI=2,1,0,0,0") }, limit: 20)
        let replies = { (number: String) in modem.received.filter { $0.decoded.number == number }.map(\.decoded.text) }
        modem.deliver(from: "+4915112345678", "PAIR")
        modem.deliver(from: "+33700000001", "pair")
        try await agent.advance(until: { replies("+33700000001").count == 1 && modem.stored == 0 }, limit: 20)
        await agent.advance(by: 5)
        await agent.stop()
        let answer = replies("+33700000001")[0]
        #expect(answer.hasPrefix("RideGuard: ouvrez ce lien sur ce téléphone") && answer.contains("http://192.168.4.1:8080/pair?code="), "\(answer)")
        let code = String(try #require(answer.components(separatedBy: "code=").last))
        #expect(try database.redeemPairingCode(code, label: "test", now: agent.clock.now(), maxIdle: 86_400) != nil, "the link pairs")
        #expect(try database.redeemPairingCode(code, label: "test", now: agent.clock.now(), maxIdle: 86_400) == nil, "once")
        #expect(replies("+4915112345678").isEmpty, "a contact got a pairing link")
        let journal = Self.journal(folder, kind: .messages)
        #expect(journal.contains("PAIR from Jo (+49•••••••5678): only the rider's own phone may pair"), "\(journal)")
        #expect(!journal.contains(code), "the code is never journaled")
    }

    /// Issue 27, point 3: part 2 of Jo's WHERE in two parts arrives, the agent restarts, then part
    /// 1 arrives: the part kept in the database meets it, and Jo gets the answer.
    @Test func aLongSMSSplitByARestartIsStillPutTogether() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("sms-parts")
        let configuration = InProcessAgent.configuration(in: folder, playback: 0.25, modem: modem)   // the crash is minutes away
        let replies = { modem.received.filter { $0.decoded.number == "+4915112345678" }.map(\.decoded.text) }
        let text = "Où ?" + String(repeating: " ", count: 80)
        let first = try InProcessAgent(configuration)
        try await first.advance(until: { await first.agent.state == .armed && modem.commands.contains("AT+CNMI=2,1,0,0,0") }, limit: 20)
        modem.deliver(from: "+4915112345678", text, parts: 2, only: [2], reference: 0x4242)
        try await first.advance(until: { modem.stored == 0 }, limit: 20)            // read, kept in the database, deleted from the SIM
        await first.stop()

        let second = try InProcessAgent(configuration, clock: first.clock)
        await second.clock.settle(until: { modem.commands.filter { $0 == "AT+CNMI=2,1,0,0,0" }.count == 2 })   // the modem's bring-up: real I/O
        try await second.advance(until: { await second.agent.state == .armed && modem.commands.filter { $0 == "AT+CNMI=2,1,0,0,0" }.count == 2 },
                                 limit: 20)
        modem.deliver(from: "+4915112345678", text, parts: 2, only: [1], reference: 0x4242)
        try await second.advance(until: { replies().count == 1 }, limit: 20)
        await second.stop()
        #expect(replies()[0].hasPrefix("RideGuard - "), "\(replies())")
    }
}
