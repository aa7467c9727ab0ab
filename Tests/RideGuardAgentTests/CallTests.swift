import Foundation
import RideGuardAgent
import RideGuardCore
import SerialModem
import Testing
import SystemCalls

/// Voice calls: the real modem code rings a fake modem's numbers on a pseudo-terminal.
@Suite(.serialized) struct CallTests {
    func modem(_ fake: FakeModem) -> Modem {
        Modem(configuration: ModemConfiguration(device: fake.link), clock: SystemServiceClock(), logger: ModemTests.Log().logger)
    }

    func fake(_ phones: [String: FakeModem.Phone] = [:], voice: Bool = true) throws -> FakeModem {
        var script = FakeModem.Script()
        script.phones = phones
        script.voice = voice
        return try FakeModem(script: script)
    }

    @Test func anUnansweredCallRingsItsTimeAndIsHungUp() async throws {
        let fake = try fake()
        let modem = modem(fake)
        let start = Date()
        let report = await modem.call("+33612345678", ringSeconds: 3)
        let took = Date().timeIntervalSince(start)
        #expect(report.outcome == .notAnswered("no answer in 3 s"))
        #expect(took >= 3 && took < 5, "rang \(took) s")
        let commands = fake.commands
        #expect(commands.contains("ATD+33612345678;"))
        #expect(commands.last == "AT+CHUP", "\(commands)")
        #expect(commands.filter { $0 == "AT+CLCC" }.count >= 2)
        #expect(fake.calls.count == 1 && fake.calls[0].ended != nil && !fake.calls[0].answered)
        // The port is held for the commands only, never for the ring.
        #expect(report.portSeconds < 1 && report.commands >= 6, "\(report)")
        await modem.close()
    }

    /// A NO CARRIER that belongs to no call in progress (late, from an earlier call) does not end
    /// the call: the call list says it still rings.
    @Test func aStrayNoCarrierDoesNotEndTheCall() async throws {
        let fake = try fake()
        let modem = modem(fake)
        let calling = Task { await modem.call("+33612345678", ringSeconds: 3) }
        try await waitUntil(10) { fake.calls.count == 1 }
        fake.announce("NO CARRIER")
        #expect(await calling.value.outcome == .notAnswered("no answer in 3 s"))
        await modem.close()
    }

    @Test func anAnswerAfterRingingIsAnsweredAndHungUp() async throws {
        let fake = try fake(["+33612345678": .answers(after: 1.5)])
        let modem = modem(fake)
        let report = await modem.call("+33612345678", ringSeconds: 10)
        #expect(report.outcome == .answered)
        #expect(fake.calls.count == 1 && fake.calls[0].answered)
        #expect(fake.calls[0].ended.map { $0.timeIntervalSince(fake.calls[0].placed) < 4 } == true, "hung up soon after the answer")
        #expect(fake.commands.last == "AT+CHUP")
        await modem.close()
    }

    /// A switched-off phone's voicemail picks up without the phone ever ringing: nobody heard it.
    @Test(arguments: [
        (FakeModem.Phone.voicemail(after: 1), "answered without ringing"),
        (.busy, "busy"),
        (.declines(after: 1.5), "the call ended"),
    ])
    func callsThatReachNobody(phone: FakeModem.Phone, reason: String) async throws {
        let fake = try fake(["+33612345678": phone])
        let modem = modem(fake)
        let start = Date()
        let report = await modem.call("+33612345678", ringSeconds: 10)
        guard case .notAnswered(let why) = report.outcome else {
            Issue.record("\(report)")
            return
        }
        #expect(why.hasPrefix(reason), "\(why)")
        #expect(Date().timeIntervalSince(start) < 5, "the call's end was seen at once")
        await modem.close()
    }

    @Test func aModemWithoutVoiceSaysSoAndDialsNothing() async throws {
        let fake = try fake(voice: false)
        let modem = modem(fake)
        let report = await modem.call("+33612345678", ringSeconds: 10)
        #expect(report.outcome == .noVoice)
        #expect(!fake.commands.contains { $0.hasPrefix("ATD") })
        #expect(await modem.health.voice == false)
        await modem.close()
    }

    @Test func stoppingACallHangsUpAtOnce() async throws {
        let fake = try fake()
        let modem = modem(fake)
        let calling = Task { await modem.call("+33612345678", ringSeconds: 30) }
        try await waitUntil(10) { fake.calls.count == 1 }
        try await Task.sleep(for: .seconds(1))
        let start = Date()
        calling.cancel()
        #expect(await calling.value.outcome == .stopped)
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(fake.commands.last == "AT+CHUP" && fake.calls[0].ended != nil)
        await modem.close()
    }

    /// An alert queued while a call rings goes out between two of the call's commands, at once;
    /// the call goes on being followed after it.
    @Test func anAlertIsNeverDelayedByACall() async throws {
        var script = FakeModem.Script()
        script.answerDelay = 0.2                            // a modem slow enough for the two to overlap
        script.phones = ["+33612345678": .declines(after: 3)]
        let fake = try FakeModem(script: script)
        let modem = modem(fake)
        let calling = Task { await modem.call("+33612345678", ringSeconds: 20) }
        try await waitUntil(10) { fake.calls.count == 1 }
        try await Task.sleep(for: .seconds(1))
        let start = Date()
        let references = try await modem.send("Crash detected! Position: https://maps.google.com/?q=45.1,5.7", to: "+4915112345678")
        let took = Date().timeIntervalSince(start)
        #expect(references.count == 1)
        #expect(took < 2, "the alert waited \(took) s behind the call")
        #expect(fake.calls.first?.ended == nil, "the alert went out while the phone still rang")
        let report = await calling.value
        #expect(report.outcome == .notAnswered("the call ended (rejected or out of reach)"))
        let commands = fake.commands
        let submit = try #require(commands.firstIndex { $0.hasPrefix("AT+CMGS=") })
        #expect(commands[(submit + 1)...].contains("AT+CLCC"), "the call was followed after the send: \(commands)")
        await modem.close()
    }

    /// Issue 27, point 2: picked up and hung up within the second between two looks at the list
    /// (SIMCom writes `VOICE CALL: BEGIN`, `NO CARRIER`, `VOICE CALL: END: 000001` in that second).
    /// The pick-up said unprompted is an answer, with the list reported (`AT+CLCC=1`) or not.
    @Test(arguments: [true, false]) func aShortPickUpBetweenTwoPollsIsAnAnswer(reports: Bool) async throws {
        var script = FakeModem.Script()
        script.phones = ["+33612345678": .picksUpBriefly(after: 2.3, for: 0.3)]
        script.callReports = reports
        let fake = try FakeModem(script: script)
        let modem = modem(fake)
        let report = await modem.call("+33612345678", ringSeconds: 10)
        #expect(report.outcome == .answered)
        #expect(fake.commands.contains("AT+CLCC=1"))
        await modem.close()
    }

    /// Voicemail says `VOICE CALL: BEGIN` too, but nobody heard a ring: not an answer.
    @Test func voicemailIsNotAnAnswerEvenWhenSaidUnprompted() async throws {
        let fake = try fake(["+33612345678": .voicemail(after: 1.2)])
        let modem = modem(fake)
        let report = await modem.call("+33612345678", ringSeconds: 10)
        #expect(report.outcome == .notAnswered("answered without ringing (voicemail or an announcement)"))
        await modem.close()
    }

    /// Issue 27, point 4: a call stopped while it waits for the modem (busy reading the contact's OK)
    /// is never dialled.
    @Test func aCallStoppedWhileWaitingForTheModemIsNeverDialled() async throws {
        var script = FakeModem.Script()
        script.sendSeconds = 2
        let fake = try FakeModem(script: script)
        let modem = modem(fake)
        _ = await modem.checkHealth()
        let sending = Task { try await modem.send("Crash detected!", to: "+4915112345678") }
        try await waitUntil(5) { fake.commands.contains { $0.hasPrefix("AT+CMGS=") } }
        let calling = Task { await modem.call("+33612345678", ringSeconds: 10) }
        try await Task.sleep(for: .milliseconds(300))
        calling.cancel()
        #expect(await calling.value.outcome == .stopped)
        _ = try await sending.value
        #expect(!fake.commands.contains { $0.hasPrefix("ATD") }, "\(fake.commands)")
        await modem.close()
    }

    /// Waits without holding one of the few threads the modem's tasks run on.
    func waitUntil(_ seconds: Double, _ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { throw WaitTimeout(seconds: seconds) }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
