// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import RideGuardAgent
import RideGuardCore
import SerialModem
import Storage
import Synchronization
import RideGuardTestSupport
import Testing
import SystemCalls

/// The real serial, AT, PDU and outbox code against a fake modem on a pseudo-terminal.
@Suite(.serialized) struct ModemTests {
    /// The modem code's and the fake's time (the spawned commands' fakes keep the wall clock).
    let clock = ManualClock(now: Date().timeIntervalSince1970)

    /// Issue 28, point 1: a command's timeout runs on the agent's clock and ends with the command.
    /// Answered commands leave no timer behind; a message the network never confirms fails after
    /// exactly its timeout of the clock's time, however long that takes in real time.
    @Test(.onOneThread) func timeoutsAreTheClocksAndEndWithTheirCommand() async throws {
        var script = FakeModem.Script()
        script.outcomes = [.silence]
        let fake = try FakeModem(script: script, clock: clock)
        let session = ATSession(port: try SerialPort(device: fake.link), clock: clock) { _ in }
        await session.start()
        for _ in 0..<20 { try await session.run("AT", timeout: 5) }
        #expect(clock.sleepers == 0, "a timer outlived its command")

        let part = try #require(SMSPDU.encode("Test", to: "+33612345678", reference: 1).first)
        let sending = Task { try await session.submit(part, timeout: 120) }
        while !fake.commands.contains(where: { $0.hasPrefix("AT+CMGS=") }) || clock.sleepers == 0 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(300))         // real time passes: no timeout
        await clock.advance(by: 119)
        try await Task.sleep(for: .milliseconds(50))
        #expect(clock.sleepers == 1, "the send ended before its timeout")
        await clock.advance(by: 2)
        await #expect(throws: ATError.timeout(command: "AT+CMGS=\(part.tpduLength)", seconds: 120)) { try await sending.value }
        #expect(clock.sleepers == 0)
        await session.close()
    }

    /// Sends what the outbox holds, time moving, until it is empty or `seconds` of the clock's time
    /// passed; returns how many are left.
    func flush(_ sender: OutboxSender, within seconds: Double) async throws -> Int {
        let clock = clock
        return try await clock.run(limit: seconds + 10) { try await sender.flush(until: clock.now() + seconds) }
    }

    func makeSender(_ fake: FakeModem, pin: String? = nil, log: LogLines = LogLines(level: .trace)) throws -> (OutboxSender, Outbox, Modem) {
        let database = try RideGuardDatabase(path: Scratch.path("rideguard-outbox.sqlite").path)
        var configuration = ModemConfiguration(device: fake.link, pin: pin)
        configuration.registrationTimeout = 20
        configuration.sendTimeout = 5
        let modem = Modem(configuration: configuration, clock: clock, logger: log.logger)
        let sender = OutboxSender(outbox: database.outbox, modem: modem, clock: clock, retryBase: 0.5, logger: log.logger)
        return (sender, database.outbox, modem)
    }

    /// Issue 43, point 4: the bring-up is a table of required and optional steps. A modem that
    /// refuses the optional ones (numbered errors, new-SMS notices) is brought up all the same, says
    /// what it does without them (log and `status`), and a contact's SMS is still read: at each health
    /// check, instead of as it comes. A required one refused fails the bring-up with its name.
    @Test(.onOneThread) func optionalBringUpStepsRefusedHaveTheirFallbacks() async throws {
        var script = FakeModem.Script()
        script.refused = ["AT+CNMI=2,1,0,0,0", "AT+CMEE=1"]
        let fake = try FakeModem(script: script, clock: clock)
        let log = LogLines(level: .trace)
        let read = Mutex<[String]>([])
        let modem = Modem(configuration: ModemConfiguration(device: fake.link), clock: clock, logger: log.logger) { message in
            read.withLock { $0.append(message.text) }
            return true
        }
        let health = try await clock.run(limit: 30) { await modem.checkHealth() }
        #expect(health.problem == nil && health.connected, "\(String(describing: health.problem))")
        #expect(health.limitations?.count == 2, "\(String(describing: health.limitations))")
        #expect(health.limitations?.contains { $0.hasPrefix("AT+CNMI") && $0.contains("read at each health check") } == true)
        #expect(log.text.contains("AT+CMEE=1 (numbered errors) failed"), "\(log.text)")
        fake.deliver(from: "+33612345678", "OK")
        _ = try await clock.run(limit: 30) { await modem.checkHealth() }
        await clock.settle(until: { read.withLock { !$0.isEmpty } })
        #expect(read.withLock { $0 } == ["OK"])
        await modem.close()

        var strict = FakeModem.Script()
        strict.refused = ["AT+CMGF=0"]
        let pduless = try FakeModem(script: strict, clock: clock)
        let strictModem = Modem(configuration: ModemConfiguration(device: pduless.link), clock: clock, logger: LogLines(level: .trace).logger)
        let refused = try await clock.run(limit: 30) { await strictModem.checkHealth() }
        #expect(refused.problem?.contains("AT+CMGF=0 (PDU mode) failed") == true, "\(String(describing: refused.problem))")
    }

    /// One operation at a time: a health check asked for while a send waits for the network runs
    /// after the send, never between its commands.
    @Test(.onOneThread) func aHealthCheckWaitsForTheSendInProgress() async throws {
        var script = FakeModem.Script()
        script.searchingQueries = 2                       // the send polls registration for about 4 s
        let fake = try FakeModem(script: script, clock: clock)
        let (_, _, modem) = try makeSender(fake)
        let sending = Task { try await modem.send("Crash detected", to: "+33612345678") }
        try await clock.advance(until: { fake.commands.contains("AT+CREG?") }, limit: 10)
        let checking = Task { await modem.checkHealth() }
        let health = try await clock.run(limit: 30) { await checking.value }
        let references = try await clock.run(limit: 30) { try await sending.value }
        #expect(references.count == 1 && health.registered)
        let commands = fake.commands
        let submit = try #require(commands.firstIndex { $0.hasPrefix("AT+CMGS=") })
        let signal = try #require(commands.firstIndex(of: "AT+CSQ"))
        #expect(signal > submit, "the health check came between the send's commands: \(commands)")
        await modem.close()
    }

    @Test(.onOneThread) func bootURCsEchoAndASlowRegistration() async throws {
        var script = FakeModem.Script()
        script.bootSeconds = 1.5
        script.searchingQueries = 3
        let fake = try FakeModem(script: script, clock: clock)
        let (sender, outbox, modem) = try makeSender(fake)
        let started = clock.now()
        let message = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "Crash detected", now: clock.now())
        let left = try await flush(sender, within: 30)
        #expect(left == 0)
        let sent = try #require(try outbox.message(message.id!))
        #expect(sent.status == .sent)
        #expect(sent.references == "41")
        #expect(fake.messages == ["Crash detected"])
        #expect(fake.received.first?.decoded.number == "+33612345678")
        #expect(fake.commands.prefix(2).allSatisfy { $0 == "AT" })          // unanswered while booting
        // One AT unanswered while it boots (its 2 s timeout), three registration polls 2 s apart, the send.
        let took = clock.now() - started
        #expect(took >= 8 && took < 9, "bring-up with a 1.5 s boot and 3 searching answers, then one send: \(took) s")
        let health = try await clock.run(limit: 30) { await modem.checkHealth() }
        #expect(health.connected && health.registration == .home && health.signalDBm == -73 && health.sim == "ready")
        #expect(health.serviceCentre == "+33609001390")
        await modem.close()
    }

    @Test(.onOneThread) func urcsInsideResponsesBeforeThePromptAndNoiseOnTheLine() async throws {
        var script = FakeModem.Script()
        script.urcInsideResponses = true
        script.urcBeforePrompt = true
        script.noiseBeforeAnswers = true
        let fake = try FakeModem(script: script, clock: clock)
        let (sender, outbox, modem) = try makeSender(fake)
        try outbox.enqueue(recipient: "+4915112345678", kind: .alert, body: "Hello", now: clock.now())
        #expect(try await flush(sender, within: 20) == 0)
        #expect(fake.messages == ["Hello"])
        await modem.close()
    }

    @Test(.onOneThread) func cmsErrorThenSuccessOnRetry() async throws {
        var script = FakeModem.Script()
        script.outcomes = [.cmsError(500)]
        let fake = try FakeModem(script: script, clock: clock)
        let log = LogLines(level: .trace)
        let (sender, outbox, modem) = try makeSender(fake, log: log)
        let message = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "Retry me", now: clock.now())
        #expect(try await flush(sender, within: 20) == 0)
        let sent = try #require(try outbox.message(message.id!))
        #expect(sent.status == .sent && sent.attempts == 2)
        #expect(log.text.contains("+CMS ERROR: 500 (unknown error)"))
        #expect(log.text.contains("+33•••••5678"))
        #expect(!log.text.contains("612345678"))          // never the full number in logs
        await modem.close()
    }

    @Test(.onOneThread) func aContactCallingBackIsNotInTheLogs() async throws {
        var script = FakeModem.Script()
        script.bootSeconds = 0.5
        script.bootURCs = ["RDY", "RING", #"+CLIP: "+4915112345678",145,,,,0"#]
        let fake = try FakeModem(script: script, clock: clock)
        let log = LogLines(level: .trace)
        let (sender, outbox, modem) = try makeSender(fake, log: log)
        _ = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "Crash detected", now: clock.now())
        #expect(try await flush(sender, within: 20) == 0)
        #expect(log.text.contains(#"modem says: +CLIP: "+49•••••••5678",145"#), "\(log.text)")
        #expect(!log.text.contains("15112345678"))
        await modem.close()
    }

    @Test(.onOneThread) func noNetworkForAWhileThenSuccess() async throws {
        var script = FakeModem.Script()
        script.networkDownUntil = Date(timeIntervalSince1970: clock.now() + 3)
        let fake = try FakeModem(script: script, clock: clock)
        let (sender, outbox, modem) = try makeSender(fake)
        let message = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "Ravine", now: clock.now())
        #expect(try await flush(sender, within: 30) == 0)
        let sent = try #require(try outbox.message(message.id!))
        #expect(sent.status == .sent && sent.attempts >= 2)
        await modem.close()
    }

    @Test(.onOneThread) func permanentFailureIsNotRetried() async throws {
        var script = FakeModem.Script()
        script.outcomes = [.cmsError(1)]
        let fake = try FakeModem(script: script, clock: clock)
        let (sender, outbox, modem) = try makeSender(fake)
        let message = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "Wrong number", now: clock.now())
        #expect(try await flush(sender, within: 10) == 0)
        let failed = try #require(try outbox.message(message.id!))
        #expect(failed.status == .failed && failed.attempts == 1)
        #expect(failed.lastError == "+CMS ERROR: 1 (unassigned number)")
        await modem.close()
    }

    @Test(.onOneThread) func deviceVanishesMidSendAndComesBack() async throws {
        var script = FakeModem.Script()
        script.outcomes = [.vanish]
        let fake = try FakeModem(script: script, clock: clock)
        let (sender, outbox, modem) = try makeSender(fake)
        let message = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "Still here", now: clock.now())
        let back = Task { [clock] in
            try await clock.sleep(until: clock.now() + 2)
            try fake.plugIn()                               // re-enumerated, same name
        }
        #expect(try await flush(sender, within: 30) == 0)
        try await back.value
        let sent = try #require(try outbox.message(message.id!))
        #expect(sent.status == .sent && sent.attempts >= 2)
        #expect(fake.messages == ["Still here", "Still here"])   // at least once: the first copy was taken before it vanished
        await modem.close()
    }

    @Test(.onOneThread, arguments: [
        String(repeating: "Crash [help] {now} € ", count: 20),
        "Chute 🏍💥 " + String(repeating: "au secours ", count: 12),
    ])
    func longAndEmojiMessagesArriveWhole(text: String) async throws {
        let fake = try FakeModem(clock: clock)
        let (sender, outbox, modem) = try makeSender(fake)
        let message = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: text, now: clock.now())
        #expect(try await flush(sender, within: 20) == 0)
        #expect(fake.messages == [text])
        let parts = fake.received.count
        #expect(parts == SMSText(text).parts.count && parts > 1)
        #expect(try outbox.message(message.id!)?.references?.split(separator: ",").count == parts)
        await modem.close()
    }

    /// A wrong PIN is entered once; the message waits for the SIM (it is not the number's fault),
    /// never given up, and the PIN is never entered again (issue 61).
    @Test(.onOneThread) func simPINIsEnteredOnceAndAWrongOneNeverRetried() async throws {
        var script = FakeModem.Script()
        script.pin = "1234"
        let good = try FakeModem(script: script, clock: clock)
        let (sender, outbox, modem) = try makeSender(good, pin: "1234")
        try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "PIN ok", now: clock.now())
        #expect(try await flush(sender, within: 20) == 0)
        #expect(good.pinAttempts == 1)
        await modem.close()

        let bad = try FakeModem(script: script, clock: clock)
        let (badSender, badOutbox, badModem) = try makeSender(bad, pin: "9999")
        let message = try badOutbox.enqueue(recipient: "+33612345678", kind: .alert, body: "PIN wrong", now: clock.now())
        _ = try await flush(badSender, within: 4)
        #expect(bad.pinAttempts == 1)                          // never a second wrong PIN
        _ = try await flush(badSender, within: 10)
        #expect(bad.pinAttempts == 1)
        let held = try #require(try badOutbox.message(message.id!))
        #expect(held.status == .pending && held.attempts >= 2)
        #expect(held.lastError?.hasPrefix("the SIM is locked by its PIN: no alert can be sent. The SIM refused modem.pin") == true,
                "\(String(describing: held.lastError))")
        await badModem.close()
    }

    /// Wavecom M1306 and Sierra SL8084TR answer AT+CPIN? with `+CPIN: READY` and no `OK`: the answer
    /// line stands once the grace period passes, for bring-up, `modem status` and a send.
    @Test func aModemThatOmitsTheOKAfterCPINStillSends() throws {
        var script = FakeModem.Script()
        script.cpinWithoutFinal = true
        let fake = try FakeModem(script: script)
        let database = Scratch.path("rideguard-cpin.sqlite").path
        let result = try Rideguard.run(["sms", "send", "--device", fake.link, "--to", "+33 6 12 34 56 78",
                                        "--text", "Sent past a quiet CPIN", "--database", database, "--timeout", "30"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(fake.messages == ["Sent past a quiet CPIN"])
        let status = try Rideguard.run(["modem", "status", "--device", fake.link, "--json"])
        #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
        #expect(status.stdout.contains("\"sim\":\"ready\"") && status.stdout.contains("\"registration\":\"home\""), "\(status.stdout)")
    }

    /// A modem whose `OK` after `+CPIN: READY` comes late (after the grace period), while the next
    /// command waits for its slow answer: that OK must not be taken as the next command's (AT+CSQ
    /// would then report no signal, AT+CREG? no registration).
    @Test(.onOneThread) func aLateFinalIsNotTheNextCommandsAnswer() async throws {
        var script = FakeModem.Script()
        script.cpinLateFinal = 0.6
        script.answerDelay = 0.5
        let fake = try FakeModem(script: script, clock: clock)
        let (sender, outbox, modem) = try makeSender(fake)
        try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "Late OK", now: clock.now())
        #expect(try await flush(sender, within: 30) == 0)
        #expect(fake.messages == ["Late OK"])
        let health = try await clock.run(limit: 30) { await modem.checkHealth() }
        #expect(health.sim == "ready" && health.signalDBm == -73 && health.registration == .home, "\(health)")
        #expect(health.serviceCentre == "+33609001390", "the answer to AT+CSCA? after AT+CMGF=0: \(health)")
        await modem.close()
    }

    @Test func smsSendCommandPrintsTheReferences() throws {
        let fake = try FakeModem()
        let database = Scratch.path("rideguard-cli.sqlite").path
        let result = try Rideguard.run(["sms", "send", "--device", fake.link, "--to", "+33 6 12 34 56 78",
                                        "--text", "Test from RideGuard", "--database", database, "--timeout", "30"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("sent to +33•••••5678: references 41"))
        #expect(fake.messages == ["Test from RideGuard"])
        let status = try Rideguard.run(["modem", "status", "--device", fake.link, "--json"])
        #expect(status.status == 0)
        #expect(status.stdout.contains("\"registration\":\"home\""))
        let missing = try Rideguard.run(["sms", "send", "--device", "/nonexistent/ttyUSB9", "--to", "+33612345678",
                                         "--text", "x", "--database", database, "--timeout", "2"])
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("/nonexistent/ttyUSB9"))
    }

    /// The sender process is killed (SIGKILL) after the modem took the message but before it
    /// answered; on restart the outbox sends it again. It arrives: twice, never zero times.
    @Test func killedMidSendTheMessageIsStillDelivered() throws {
        var script = FakeModem.Script()
        script.outcomes = [.silence]
        let fake = try FakeModem(script: script)
        let database = Scratch.path("rideguard-kill.sqlite").path
        let sender = try Spawned([Rideguard.binary.path, "sms", "send", "--device", fake.link, "--to", "+33612345678",
                                  "--text", "Crash detected, help", "--database", database, "--timeout", "60"])
        try waitFor(20) { fake.received.count == 1 }
        sender.kill(SIGKILL)
        let interrupted = try RideGuardDatabase(path: database).outbox.all()
        #expect(interrupted.map(\.status) == [.sending])

        let restart = try Rideguard.run(["sms", "flush", "--device", fake.link, "--database", database, "--timeout", "30"])
        #expect(restart.status == 0, "\(restart.stderr)")
        #expect(restart.stderr.contains("interrupted mid-send"))
        #expect(try RideGuardDatabase(path: database).outbox.all().map(\.status) == [.sent])
        #expect(fake.messages == ["Crash detected, help", "Crash detected, help"])
    }
}
