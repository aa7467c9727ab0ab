// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardCore
import AgentTestSupport
import RideGuardTestSupport
import Storage
import Testing
@testable import RideGuardAgent

/// Issue 61, "The SIM's truth": the real agent on the fake modem (27.007 §8.3 +CPIN, §9.2.1 +CME
/// ERROR 10–16, §8.65 +CPINR) through the states a rider's SIM falls into.
extension AgentInProcessTests {
    /// A bike standing still for `seconds` at 100 Hz: the agent arms and stays armed, no crash.
    static func stillTrace(in folder: URL, seconds: Int = 240) throws -> URL {
        let trace = folder.appendingPathComponent("still.csv")
        var text = "# rideguard-trace v1\n# rate_hz: 100\ntime_s,ax,ay,az,gx,gy,gz\n"
        for i in 0..<(seconds * 100) { text += "\(Double(i) / 100),0.0100,-0.0200,9.8100,0.00100,-0.00200,0.00000\n" }
        try Data(text.utf8).write(to: trace)
        return trace
    }

    /// An agent on `modem`, its bike standing still, the configured PIN `pin`.
    static func simAgent(_ folder: URL, _ modem: FakeModem, pin: String? = nil) throws -> InProcessAgent {
        var configuration = InProcessAgent.configuration(in: folder, trace: try stillTrace(in: folder), playback: 1, modem: modem)
        configuration.modem.pin = pin
        return try InProcessAgent(configuration)
    }

    static func protection(_ folder: URL) async throws -> Protection? { try await AgentTests.status(folder)?.protection }

    /// What the agent says of the SIM: NOT protecting, the reason, the buzzer and the modem's line.
    func expectSIMProblem(_ folder: URL, _ agent: InProcessAgent, _ what: String, advice: String,
                          sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await agent.advance(until: { try await Self.protection(folder)?.reasons.contains { $0.contains(what) } == true }, limit: 60,
                                sourceLocation: sourceLocation)
        let status = try #require(try await AgentTests.status(folder), sourceLocation: sourceLocation)
        #expect(status.protection?.level == .notProtecting, "\(String(describing: status.protection))", sourceLocation: sourceLocation)
        #expect(status.buzzer == .fault, sourceLocation: sourceLocation)
        #expect(status.modem.simProblem?.contains(what) == true, "\(status.modem)", sourceLocation: sourceLocation)
        #expect(status.modem.simProblem?.contains(advice) == true, "\(String(describing: status.modem.simProblem))", sourceLocation: sourceLocation)
        // The modem answers: it is not said not to.
        #expect(status.protection?.reasons.contains { $0.contains("does not answer") } == false, "\(String(describing: status.protection))",
                sourceLocation: sourceLocation)
    }

    /// Point 1: no SIM is not "Protecting"; a SIM inserted while the agent runs is found without a restart.
    @Test func noSIMIsNotProtectingAndASIMInsertedIsFound() async throws {
        var script = FakeModem.Script()
        script.simInserted = false
        let modem = try FakeModem(script: script)
        let folder = try Self.folder("sim-none")
        let agent = try Self.simAgent(folder, modem)
        try await expectSIMProblem(folder, agent, "no SIM card in the modem", advice: "Insert one")
        let socket = folder.appendingPathComponent("control.sock").path
        let line = try await offThread { try Rideguard.run(["status", "--socket", socket]).stdout }
        #expect(line.contains("modem: SIM not inserted: no SIM card in the modem: no alert can be sent; Insert one"), "\(line)")
        #expect(Self.journal(folder, kind: .system).contains("sim fault: no SIM card in the modem"))

        modem.update { $0.simInserted = true }
        try await agent.advance(until: { try await Self.protection(folder) == Protection(.protecting) }, limit: 30)
        #expect(Self.journal(folder, kind: .system).contains("sim: the SIM is ready again"))
        await agent.stop()
    }

    /// Point 1: a SIM locked by its PIN, none configured: NOT protecting, said as a lock (the modem
    /// answers), no PIN tried. A SIM that wants its PUK says so, and no PIN is tried either.
    @Test(arguments: [(3, "the SIM is locked by its PIN", "Set its PIN as modem.pin"),
                      (0, "it wants its PUK", "Unlock it in a phone with the PUK")])
    func aLockedSIMIsNotProtecting(left: Int, what: String, advice: String) async throws {
        var script = FakeModem.Script()
        script.pin = "1234"
        script.pinAttemptsLeft = left
        let modem = try FakeModem(script: script)
        let folder = try Self.folder("sim-locked")
        let agent = try Self.simAgent(folder, modem, pin: left == 0 ? "1234" : nil)
        try await expectSIMProblem(folder, agent, what, advice: advice)
        await agent.stop()
        #expect(modem.pinAttempts == 0, "\(modem.commands)")
    }

    /// Point 2: a wrong PIN is entered once, and never again over three restarts (a reboot, an
    /// upgrade): the SIM keeps two attempts. The right PIN, once configured, is entered.
    @Test func aWrongPINIsNeverEnteredAgainAcrossRestarts() async throws {
        var script = FakeModem.Script()
        script.pin = "1234"
        let modem = try FakeModem(script: script)
        let folder = try Self.folder("sim-wrong-pin")
        for start in 1...3 {
            let agent = try Self.simAgent(folder, modem, pin: "9999")
            try await expectSIMProblem(folder, agent, "the SIM is locked by its PIN", advice: start == 1 ? "refused modem.pin" : "will not enter it again")
            await agent.advance(by: 25)             // health checks go on: still never a second try
            await agent.stop()
            #expect(modem.pinAttempts == 1, "start \(start): \(modem.commands.filter { $0.hasPrefix("AT+CPIN=") })")
        }
        #expect(modem.commands.contains("AT+CPINR=\"SIM PIN\""))
        let agent = try Self.simAgent(folder, modem, pin: "1234")
        try await agent.advance(until: { try await Self.protection(folder) == Protection(.protecting) }, limit: 60)
        await agent.stop()
        #expect(modem.pinAttempts == 2)
    }

    /// Point 2: never with fewer than two attempts left, and never where the modem does not say
    /// how many are left (a wrong PIN then could lock the SIM).
    @Test(arguments: [(1, "AT+CPINR=\"SIM PIN\"", "Only 1 attempt left"), (3, nil, "does not say how many PIN attempts are left"),
                      (1, "AT+QPINC?", "Only 1 attempt left"), (1, "AT^CPIN?", "Only 1 attempt left"), (1, "AT+SPIC", "Only 1 attempt left")])
    func aPINIsNotRiskedWhenAWrongOneCouldLockTheSIM(left: Int, query: String?, advice: String) async throws {
        var script = FakeModem.Script()
        script.pin = "1234"
        script.pinAttemptsLeft = left
        script.attemptsQuery = query
        let modem = try FakeModem(script: script)
        let folder = try Self.folder("sim-few")
        let agent = try Self.simAgent(folder, modem, pin: "1234")
        try await expectSIMProblem(folder, agent, "the SIM is locked by its PIN", advice: advice)
        await agent.stop()
        #expect(modem.pinAttempts == 0)
    }

    /// Points 3 and 6: a contact added while the SIM is locked waits for it: `contacts` says "not
    /// sent yet" and why, and once the SIM is unlocked (in a phone, the PIN removed) the question
    /// goes out, signed with the name the rider gave after adding the contact.
    @Test func aConfirmationHeldByALockedSIMGoesOnceItIsUnlocked() async throws {
        let (modem, folder, database) = try Self.lockedSIM("sim-confirmation")
        let now = Date().timeIntervalSince1970
        _ = try database.addContact(name: "Lou", number: "+33698765432", now: now)
        try database.askContact("Lou", language: .en, now: now)
        let agent = try Self.simAgent(folder, modem)
        try await expectSIMProblem(folder, agent, "the SIM is locked by its PIN", advice: "Set its PIN as modem.pin")
        try await agent.advance(until: { try Self.lou(database)?.standing.summary(now: now).hasPrefix("not sent yet: the SIM is locked") == true }, limit: 30)
        try database.setRiderName("Jérôme")            // after the contact, as docs/installer.md's order has it

        modem.update { $0.pin = nil }                   // unlocked in a phone, the PIN removed
        try await agent.advance(until: { modem.messages.contains { $0.contains("emergency contact") } }, limit: 40)
        await agent.stop()
        let question = try #require(modem.messages.first { $0.contains("emergency contact") })
        #expect(question.hasPrefix("RideGuard: Jérôme made you an emergency contact."), "\(question)")
        let lou = try #require(try Self.lou(database))
        guard case .waiting(_, nil) = lou.standing else { Issue.record("\(lou.standing)"); return }
        #expect(lou.standing.summary(now: lou.standing.since!).hasPrefix("asked 0 s ago"))
    }

    /// A modem whose SIM is locked by its PIN 1234, and a folder with the contacts Sam and Jo.
    static func lockedSIM(_ name: String) throws -> (FakeModem, URL, RideGuardDatabase) {
        var script = FakeModem.Script()
        script.pin = "1234"
        let folder = try Self.folder(name)
        return (try FakeModem(script: script), folder, try RideGuardDatabase(path: folder.appendingPathComponent("rideguard.sqlite").path))
    }

    static func lou(_ database: RideGuardDatabase) throws -> Contact? { try database.contacts().first { $0.name == "Lou" } }

    /// Point 4: the self-test that a locked SIM held back is worded as it leaves: protecting, not
    /// the lock its arrival disproves, and no word cut.
    @Test func theSelfTestIsWordedWhenItLeaves() async throws {
        let (modem, folder, database) = try Self.lockedSIM("sim-selftest")
        try database.setRiderPhone("+33611223344")
        let agent = try Self.simAgent(folder, modem)
        try await expectSIMProblem(folder, agent, "the SIM is locked by its PIN", advice: "Set its PIN as modem.pin")
        let socket = folder.appendingPathComponent("control.sock").path
        let asked = try await offThread { try Rideguard.run(["selftest", "--socket", socket]) }
        #expect(asked.status == 0, "\(asked.stderr)")
        let queued = try #require(try database.outbox.all().first { $0.kind == .selfTest })
        #expect(queued.body.contains("NOT protecting: the SIM is locked"), "\(queued.body)")

        modem.update { $0.pin = nil }
        try await agent.advance(until: { modem.received.contains { $0.decoded.number == "+33611223344" } }, limit: 40)
        try await agent.advance(until: { modem.messages.contains { $0.hasPrefix("RideGuard test:") } }, limit: 10)
        await agent.stop()
        let test = try #require(modem.messages.first { $0.hasPrefix("RideGuard test:") })
        // The network's name is asked as it leaves: a modem slow to answer on a loaded machine
        // (the agent's clock runs ahead of it here) says "unknown", which is no reason of the SIM's.
        #expect(test.hasPrefix("RideGuard test: protecting. Contacts confirmed: 2/2. SIM: "), "\(test)")
        #expect(!test.contains("SIM is locked") && !test.contains("..."), "\(test)")
        #expect(try database.outbox.message(queued.id!)?.body == test)
    }

    /// Point 5: what people write. "Ok merci !" confirms, "Arrêt" declines and is shown as written,
    /// "nein danke" declines; a reply that does neither is answered once with the words that do.
    @Test func repliesAsPeopleWriteThem() async throws {
        let modem = try FakeModem()
        let folder = try Self.folder("sim-replies", contacts: false)
        let database = try RideGuardDatabase(path: folder.appendingPathComponent("rideguard.sqlite").path)
        let now = Date().timeIntervalSince1970
        let numbers = ["Ana": "+33611111111", "Ben": "+33622222222", "Cem": "+4915133333333", "Dee": "+33644444444"]
        for (name, number) in numbers.sorted(by: { $0.key < $1.key }) {
            _ = try database.addContact(name: name, number: number, now: now)
            try database.askContact(name, language: .en, now: now)
        }
        try database.setMessage("Crash! Call me.")
        let agent = try Self.simAgent(folder, modem)
        try await agent.advance(until: { modem.messages.filter { $0.contains("emergency contact") }.count == 4 }, limit: 30)
        modem.deliver(from: numbers["Ana"]!, "Ok merci !")
        modem.deliver(from: numbers["Ben"]!, "Arrêt")
        modem.deliver(from: numbers["Cem"]!, "nein danke")
        modem.deliver(from: numbers["Dee"]!, "Thanks, who is this?")
        try await agent.advance(until: { modem.received.contains { $0.decoded.number == numbers["Dee"]! && $0.decoded.text.contains("reply OK") } }, limit: 30)
        let standing = { (name: String) in try #require(try database.contacts().first { $0.name == name }).standing }
        #expect(try standing("Ana").isConfirmed)
        let ben = try standing("Ben")
        #expect(ben.summary(now: now).contains("(replied Arrêt)"), "\(ben)")
        #expect(try standing("Cem").isDeclined)
        #expect(try standing("Dee").name == "waiting")
        let hint = try #require(modem.messages.last { $0.contains("reply OK") })
        #expect(hint.hasPrefix("RideGuard: A motorcyclist asked you to be an emergency contact."), "\(hint)")
        #expect(hint.contains("STOP") && hint.contains("NEIN"), "\(hint)")

        // Told once: a second such reply is journaled, not answered.
        modem.deliver(from: numbers["Dee"]!, "??")
        try await agent.advance(until: { Self.journal(folder, kind: .messages).contains("already told the words that do") }, limit: 30)
        await agent.stop()
        #expect(modem.received.filter { $0.decoded.number == numbers["Dee"]! && $0.decoded.text.contains("reply OK") }.count == 1)
    }
}

/// Issue 61, point 8: `doctor` names the SIM's state and what to do, and does not tell a failure the
/// SIM caused as if it still held once the SIM is ready.
extension AgentTests {
    @Test func doctorNamesTheSIMAndDoesNotTellAFaultThatIsOver() throws {
        var script = FakeModem.Script()
        script.simInserted = false
        let modem = try FakeModem(script: script)
        let folder = try Scratch.folder("doctor-sim")
        let database = folder.appendingPathComponent("rideguard.sqlite").path
        let config = folder.appendingPathComponent("config.yaml")
        try Data("""
            imu:
              simulated: true
              trace: \(Rideguard.fixtures.appendingPathComponent("example-lowside.csv").path)
            gpio:
              simulated: true
            gps:
              simulated: true
              fixed_position: [45.1, 5.7]
            modem:
              device: \(modem.link)
            database: \(database)
            control_socket: \(folder.appendingPathComponent("control.sock").path)
            """.utf8).write(to: config)
        try AgentTests.addContacts(database)
        let records = try RideGuardDatabase(path: database)
        let held = try records.outbox.enqueue(recipient: "+33612345678", kind: .selfTest, body: "RideGuard test", now: 1)
        _ = try records.outbox.claimNext(now: 2)
        let problem = try #require(SIMState.notInserted.problem())
        try records.outbox.markRetry(held.id!, error: problem, at: 100, now: 3)

        let none = try Rideguard.run(["doctor", "--config", config.path, "--gps-wait", "0", "--modem-wait", "1"])
        #expect(none.status == 1)
        #expect(none.stdout.contains("✗ modem: \(modem.link): no SIM card in the modem: no alert can be sent"), "\(none.stdout)")
        #expect(none.stdout.contains("Insert one (the modem powered off)"), "\(none.stdout)")
        #expect(none.stdout.contains("sms: the last SMS (the self-test, to +33•••••5678) failed, and is retried at"), "\(none.stdout)")
        #expect(!none.stdout.contains("self_test"), "an internal name: \(none.stdout)")
        #expect(none.stdout.contains("self-test: "), "\(none.stdout)")

        modem.update { $0.simInserted = true }
        let ready = try Rideguard.run(["doctor", "--config", config.path, "--gps-wait", "0", "--modem-wait", "1"])
        #expect(ready.stdout.contains("✓ modem: \(modem.link): SIM ready, network home"), "\(ready.stdout)")
        #expect(ready.stdout.contains("(no SIM card in the modem); the SIM is ready now"), "\(ready.stdout)")
        #expect(!ready.stdout.contains("Insert one"), "a fault that is over: \(ready.stdout)")
    }
}
