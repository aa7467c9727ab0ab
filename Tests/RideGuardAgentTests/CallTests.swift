// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
import SerialModem
import RideGuardTestSupport
import Testing

/// Voice calls: the real modem code rings a fake modem's numbers on a pseudo-terminal. The modem
/// code and the fake's phones keep the test's manual clock: a ring takes none of the test's time,
/// only the AT exchanges' real I/O does. (What each list of calls means is `CallProgressTests`'.)
@Suite(.serialized) struct CallTests {
    let clock = ManualClock(now: Date().timeIntervalSince1970)

    func modem(_ fake: FakeModem) -> Modem {
        Modem(configuration: ModemConfiguration(device: fake.link), clock: clock, logger: LogLines(level: .trace).logger)
    }

    func fake(_ phones: [String: FakeModem.Phone] = [:], voice: Bool = true, _ change: (inout FakeModem.Script) -> Void = { _ in }) throws -> FakeModem {
        var script = FakeModem.Script()
        script.phones = phones
        script.voice = voice
        change(&script)
        return try FakeModem(script: script, clock: clock)
    }

    @Test(.onOneThread) func anUnansweredCallRingsItsTimeAndIsHungUp() async throws {
        let fake = try fake()
        let modem = modem(fake)
        let start = clock.now()
        let report = try await clock.run(limit: 30) { await modem.call("+33612345678", ringSeconds: 3) }
        let took = clock.now() - start
        #expect(report.outcome == .notAnswered("no answer in 3 s"))
        #expect(took >= 3 && took < 4, "rang \(took) s")
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
    @Test(.onOneThread) func aStrayNoCarrierDoesNotEndTheCall() async throws {
        let fake = try fake()
        let modem = modem(fake)
        let calling = Task { await modem.call("+33612345678", ringSeconds: 3) }
        try await clock.advance(until: { fake.calls.count == 1 }, limit: 10)
        fake.announce("NO CARRIER")
        let report = try await clock.run(limit: 30) { await calling.value }
        #expect(report.outcome == .notAnswered("no answer in 3 s"))
        await modem.close()
    }

    @Test(.onOneThread) func anAnswerAfterRingingIsAnsweredAndHungUp() async throws {
        let fake = try fake(["+33612345678": .answers(after: 1.5)])
        let modem = modem(fake)
        let report = try await clock.run(limit: 30) { await modem.call("+33612345678", ringSeconds: 10) }
        #expect(report.outcome == .answered)
        #expect(fake.calls.count == 1 && fake.calls[0].answered)
        #expect(fake.calls[0].ended.map { $0.timeIntervalSince(fake.calls[0].placed) < 4 } == true, "hung up soon after the answer")
        #expect(fake.commands.last == "AT+CHUP")
        await modem.close()
    }

    /// A switched-off phone's voicemail picks up without the phone ever ringing: nobody heard it.
    @Test(.onOneThread, arguments: [
        (FakeModem.Phone.voicemail(after: 1), "answered without ringing"),
        (.busy, "busy"),
        (.declines(after: 1.5), "the call ended"),
    ])
    func callsThatReachNobody(phone: FakeModem.Phone, reason: String) async throws {
        let fake = try fake(["+33612345678": phone])
        let modem = modem(fake)
        let start = clock.now()
        let report = try await clock.run(limit: 30) { await modem.call("+33612345678", ringSeconds: 10) }
        guard case .notAnswered(let why) = report.outcome else {
            Issue.record("\(report)")
            return
        }
        #expect(why.hasPrefix(reason), "\(why)")
        #expect(clock.now() - start < 5, "the call's end was seen at once")
        await modem.close()
    }

    @Test(.onOneThread) func aModemWithoutVoiceSaysSoAndDialsNothing() async throws {
        let fake = try fake(voice: false)
        let modem = modem(fake)
        let report = try await clock.run(limit: 30) { await modem.call("+33612345678", ringSeconds: 10) }
        #expect(report.outcome == .noVoice)
        #expect(!fake.commands.contains { $0.hasPrefix("ATD") })
        #expect(await modem.health.voice == false)
        await modem.close()
    }

    @Test(.onOneThread) func stoppingACallHangsUpAtOnce() async throws {
        let fake = try fake()
        let modem = modem(fake)
        let calling = Task { await modem.call("+33612345678", ringSeconds: 30) }
        try await clock.advance(until: { fake.calls.count == 1 }, limit: 10)
        try await clock.advance(until: { fake.commands.filter { $0 == "AT+CLCC" }.count >= 1 }, limit: 5)
        let start = clock.now()
        calling.cancel()
        let report = try await clock.run(limit: 10) { await calling.value }
        #expect(report.outcome == .stopped)
        #expect(clock.now() - start < 1)
        #expect(fake.commands.last == "AT+CHUP" && fake.calls[0].ended != nil)
        await modem.close()
    }

    /// An alert queued while a call rings goes out between two of the call's commands, at once;
    /// the call goes on being followed after it.
    @Test(.onOneThread) func anAlertIsNeverDelayedByACall() async throws {
        // A modem slow enough for the two to overlap.
        let fake = try fake(["+33612345678": .declines(after: 3)]) { $0.answerDelay = 0.2 }
        let modem = modem(fake)
        let calling = Task { await modem.call("+33612345678", ringSeconds: 20) }
        try await clock.advance(until: { fake.calls.count == 1 }, limit: 10)
        try await clock.advance(until: { fake.commands.filter { $0 == "AT+CLCC" }.count >= 1 }, limit: 5)
        let start = clock.now()
        let references = try await clock.run(limit: 10) {
            try await modem.send("Crash detected! Position: https://maps.google.com/?q=45.1,5.7", to: "+4915112345678")
        }
        let took = clock.now() - start
        #expect(references.count == 1)
        #expect(took < 2, "the alert waited \(took) s behind the call")
        #expect(fake.calls.first?.ended == nil, "the alert went out while the phone still rang")
        let report = try await clock.run(limit: 30) { await calling.value }
        #expect(report.outcome == .notAnswered("the call ended (rejected or out of reach)"))
        let commands = fake.commands
        let submit = try #require(commands.firstIndex { $0.hasPrefix("AT+CMGS=") })
        #expect(commands[(submit + 1)...].contains("AT+CLCC"), "the call was followed after the send: \(commands)")
        await modem.close()
    }

    /// Issue 27, point 2: picked up and hung up within the second between two looks at the list
    /// (SIMCom writes `VOICE CALL: BEGIN`, `NO CARRIER`, `VOICE CALL: END: 000001` in that second).
    /// The pick-up said unprompted is an answer, with the list reported (`AT+CLCC=1`) or not.
    @Test(.onOneThread, arguments: [true, false]) func aShortPickUpBetweenTwoPollsIsAnAnswer(reports: Bool) async throws {
        let fake = try fake(["+33612345678": .picksUpBriefly(after: 2.3, for: 0.3)]) { $0.callReports = reports }
        let modem = modem(fake)
        // Steps of 0.05 s: the pick-up and the hang-up are 0.3 s apart, within one look's second.
        let report = try await clock.run(limit: 30, step: 0.05) { await modem.call("+33612345678", ringSeconds: 10) }
        #expect(report.outcome == .answered)
        #expect(fake.commands.contains("AT+CLCC=1"))
        await modem.close()
    }

    /// Voicemail says `VOICE CALL: BEGIN` too, but nobody heard a ring: not an answer.
    @Test(.onOneThread) func voicemailIsNotAnAnswerEvenWhenSaidUnprompted() async throws {
        let fake = try fake(["+33612345678": .voicemail(after: 1.2)])
        let modem = modem(fake)
        let report = try await clock.run(limit: 30) { await modem.call("+33612345678", ringSeconds: 10) }
        #expect(report.outcome == .notAnswered("answered without ringing (voicemail or an announcement)"))
        await modem.close()
    }

    /// Issue 27, point 4: a call stopped while it waits for the modem (busy reading the contact's OK)
    /// is never dialled.
    @Test(.onOneThread) func aCallStoppedWhileWaitingForTheModemIsNeverDialled() async throws {
        let fake = try fake { $0.sendSeconds = 2 }
        let modem = modem(fake)
        _ = try await clock.run(limit: 10) { await modem.checkHealth() }
        let sending = Task { try await modem.send("Crash detected!", to: "+4915112345678") }
        try await clock.advance(until: { fake.commands.contains { $0.hasPrefix("AT+CMGS=") } }, limit: 5)
        let calling = Task { await modem.call("+33612345678", ringSeconds: 10) }
        try await clock.advance(until: { fake.received.count == 1 }, limit: 1)     // the fake holds the PDU 2 s
        calling.cancel()
        let report = try await clock.run(limit: 10) { await calling.value }
        #expect(report.outcome == .stopped)
        _ = try await clock.run(limit: 10) { try await sending.value }
        #expect(!fake.commands.contains { $0.hasPrefix("ATD") }, "\(fake.commands)")
        await modem.close()
    }
}
