// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
import Storage
import AgentTestSupport
import RideGuardTestSupport
import Testing
@testable import WebUI

/// Issue 52: every contact asked to confirm their number, the SMS path tested on a schedule, a
/// SIM's trouble named. The real agent in-process on the manual clock, the real modem code on a
/// fake modem's pty, Mosquitto for the fleet's state.
@Suite(.serialized, .onOneThread) struct ProvenTests {
    static let sam = "+33612345678", jo = "+4915112345678", rider = "+33700000001"

    /// A folder whose database has Sam and Jo, each added and asked as `contacts add` does (`language`).
    static func askedContacts(_ name: String, language: MessageLanguage = .en) throws -> (URL, RideGuardDatabase) {
        let folder = try AgentInProcessTests.folder(name, contacts: false)
        let database = try RideGuardDatabase(path: folder.appendingPathComponent("rideguard.sqlite").path)
        for (contact, number) in [("Sam", sam), ("Jo", jo)] {
            _ = try database.addContact(name: contact, number: number, now: Date().timeIntervalSince1970)
            try database.askContact(number, language: language, now: Date().timeIntervalSince1970)
        }
        try database.setMessage("Crash! Call me.")
        return (folder, database)
    }

    static func standings(_ database: RideGuardDatabase) throws -> [String] { try database.contacts().map(\.standing.name) }

    /// The self-test's "last crash" is the newest crash the journal holds, among other lines and
    /// lines that only mention a crash; none when there is none.
    @Test func theLastCrashIsTheNewestInTheJournal() throws {
        let (_, database) = try Self.askedContacts("last-crash")
        #expect(try database.lastCrashDetected() == nil)
        for (time, kind, text) in [(100.0, JournalKind.detections, "crash detected: bike down"), (300, .detections, "crash detected: collision"),
                                   (400, .detections, "impact 12.0 g: a landing"), (500, .system, "crash detected: in another kind"),
                                   (200, .detections, "crash detected: an old one written late")] {
            #expect(database.journal(JournalEntry(kind, text), at: time))
        }
        #expect(try database.lastCrashDetected() == 300)
    }

    /// Asked in French; Sam answers "oui" from his national number, Jo STOP; asked again, and
    /// confirmed by the rider by hand: each standing in `status`, the page, MQTT's state and the
    /// journal, and the protection degraded while nobody has confirmed, or once Jo declined.
    @Test func aContactConfirmsByReplyOrDeclinesAndEveryScreenSaysSo() async throws {
        let broker = try Mosquitto()
        try broker.start()
        let modem = try FakeModem()
        let (folder, database) = try Self.askedContacts("confirm", language: .fr)
        var configuration = InProcessAgent.configuration(in: folder, playback: 0.25, modem: modem)   // the crash is minutes away
        configuration.mqtt = try FleetTests.mqtt(broker, in: folder)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(until: { modem.received.count == 2 && modem.commands.contains("AT+CNMI=2,1,0,0,0") }, limit: 30)
        #expect(modem.messages == Array(repeating: MessageComposer.confirmationRequest(riderName: nil, language: .fr), count: 2))
        #expect(modem.messages[0].hasPrefix("RideGuard: Un motard vous a choisi comme contact d'urgence."))

        // Nobody has confirmed: protecting, degraded, and every screen says why.
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.protection?.level == .degraded }, limit: 20)
        var status = try #require(try await AgentTests.status(folder))
        #expect(status.protection?.reasons.first?.hasPrefix("no contact has confirmed their number yet") == true, "\(String(describing: status.protection))")
        #expect(status.contactLines?.map(\.state) == ["waiting", "waiting"])
        #expect(Pages.status(.running(status), hasMessage: true, now: 0, ScreenText(.en)).contains("2, 0 confirmed"))
        var state = try await offThread { try broker.subscribe("rideguard/bike1/state") }
        #expect(state.first?.contains(#""protection":"degraded""#) == true && state.first?.contains(#""contacts":["waiting","waiting"]"#) == true, "\(state)")

        // Sam says yes, in his language, from the number as his network gives it.
        modem.deliver(from: "0612345678", "Oui !")
        try await agent.advance(until: { try Self.standings(database) == ["confirmed", "waiting"] }, limit: 20)
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.protection == Protection(.protecting) }, limit: 20)
        status = try #require(try await AgentTests.status(folder))
        #expect(status.contactLines?.map(\.summary).first?.hasPrefix("confirmed by reply") == true, "\(String(describing: status.contactLines))")
        let printed = try await Rideguard.run(["status", "--socket", folder.appendingPathComponent("control.sock").path])
        #expect(printed.stdout.contains("contact Sam: confirmed by reply") && printed.stdout.contains("contact Jo: asked "), "\(printed.stdout)")
        let page = Pages.contacts(try database.contacts(), now: agent.clock.now(), said: nil, problem: nil, typed: ("", ""), ScreenText(.en))
        #expect(page.contains("data-state=confirmed>confirmed by reply") && page.contains("data-state=waiting>asked "), "\(page)")
        #expect(page.components(separatedBy: "value=ask>").count == 2, "only Jo can be asked again")
        state = try await offThread { try broker.subscribe("rideguard/bike1/state") }
        #expect(state.first?.contains(#""contacts":["confirmed","waiting"]"#) == true, "\(state)")

        // Jo declines: degraded, and said so.
        modem.deliver(from: Self.jo, "STOP")
        try await agent.advance(until: { try Self.standings(database) == ["confirmed", "declined"] }, limit: 20)
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.protection?.level == .degraded }, limit: 20)
        status = try #require(try await AgentTests.status(folder))
        #expect(status.protection?.reasons == ["Jo declined to be a contact: remove them, or ask again"], "\(String(describing: status.protection))")
        state = try await offThread { try broker.subscribe("rideguard/bike1/state") }
        #expect(state.first?.contains(#""contacts":["confirmed","declined"]"#) == true, "\(state)")
        // Having declined, Jo is not told where the rider is.
        modem.deliver(from: Self.jo, "WHERE")
        try await agent.advance(until: { AgentInProcessTests.journal(folder, kind: .messages).contains("WHERE from Jo (+49•••••••5678): declined to be a contact") },
                                limit: 20)
        #expect(modem.received.filter { $0.decoded.number == Self.jo }.count == 1, "Jo got an answer")

        // Asked again (as `contacts ask` and the page's button do), then confirmed by the rider.
        try database.askContact("Jo", language: .fr, now: agent.clock.now())
        try await agent.advance(until: { modem.received.filter { $0.decoded.number == Self.jo }.count == 2 }, limit: 20)
        #expect(try Self.standings(database) == ["confirmed", "waiting"])
        try database.confirmContactByHand("Jo", now: agent.clock.now())
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.contactLines?.map(\.state) == ["confirmed", "confirmed"] }, limit: 20)
        await agent.stop()

        let journal = AgentInProcessTests.journal(folder, kind: .system)
        for line in ["contact Sam (+33•••••5678) confirmed by reply", "contact Jo (+49•••••••5678) declined to be an emergency contact (replied STOP)",
                     "contact Jo (+49•••••••5678) asked to confirm by SMS", "contact Jo (+49•••••••5678) confirmed by hand by the rider",
                     "contacts fault: no contact has confirmed their number yet"] {
            #expect(journal.contains(line), "\(line) is not in the journal: \(journal)")
        }
        #expect(!AgentInProcessTests.journal(folder).contains("612345678"), "a number in full in the journal")
    }

    /// An alert goes to every contact but one who declined: Sam never answered, and is alerted.
    @Test func anAlertReachesAContactWhoHasNotConfirmedAndNotOneWhoDeclined() async throws {
        let modem = try FakeModem()
        let (folder, database) = try Self.askedContacts("unconfirmed")
        try database.setContactStanding(Self.jo, .declined(at: 1), journal: "Jo declined", now: 1)
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, modem: modem))
        try await agent.advance(until: { try database.outbox.all().contains { $0.kind == .alert && $0.status == .sent } }, limit: 120)
        await agent.advance(by: 10)
        await agent.stop()
        let alerts = try database.outbox.all().filter { $0.kind == .alert }
        #expect(alerts.map(\.recipient) == [Self.sam], "\(alerts.map(\.recipient))")
        #expect(try Self.standings(database) == ["waiting", "declined"])
    }

    /// Sam's number is not in service (+CMS ERROR: 1): Sam unreachable. Jo's SMS meets a SIM
    /// without credit (+CMS ERROR: 50): the SIM's trouble, NOT protecting until an SMS goes out.
    @Test func aWrongNumberAndASIMWithoutCreditAreToldApart() async throws {
        var script = FakeModem.Script()
        script.outcomes = [.cmsError(1, report: "Unassigned (unallocated) number"), .cmsError(50, report: "Requested facility not subscribed")]
        let modem = try FakeModem(script: script)
        let (folder, database) = try Self.askedContacts("causes")
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, playback: 0.25, modem: modem))
        try await agent.advance(until: {
            let standings = try Self.standings(database)
            return (try? await AgentTests.status(folder))??.protection?.level == .notProtecting && standings == ["unreachable", "waiting"]
        }, limit: 60)
        var status = try #require(try await AgentTests.status(folder))
        let reasons = status.protection?.reasons ?? []
        #expect(reasons.contains { $0.hasPrefix("the SIM cannot send SMS: the SIM may not send SMS (no credit, or SMS not in its plan): top it up or ask its operator (+CMS ERROR: 50") },
                "\(reasons)")
        #expect(status.contactLines?.first?.summary.hasPrefix("unreachable: the network says the number is not in service: check it with the contact (+CMS ERROR: 1 (unassigned number)") == true,
                "\(String(describing: status.contactLines))")
        // Jo asked again: the SMS goes out, the SIM works again.
        try database.askContact("Jo", language: .en, now: agent.clock.now())
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.protection?.level == .degraded }, limit: 30)
        status = try #require(try await AgentTests.status(folder))
        #expect(status.protection?.reasons == ["no contact has confirmed their number yet (a reply OK confirms; rideguard contacts confirm NAME once you have called them); "
                                                + "Sam cannot be reached: the network says the number is not in service: check it with the contact (+CMS ERROR: 1 (unassigned number); "
                                                + "the modem's report: Unassigned (unallocated) number)"], "\(String(describing: status.protection))")
        await agent.stop()
        let journal = AgentInProcessTests.journal(folder, kind: .system)
        #expect(journal.contains("sms fault: the SIM cannot send SMS") && journal.contains("sms: the SIM sends SMS again"), "\(journal)")
        #expect(journal.contains("contact Sam (+33•••••5678) unreachable: the network says the number is not in service"), "\(journal)")
        // doctor reads the last SMS: it went out.
        #expect(try database.outbox.lastTried()?.status == .sent)
    }

    /// The self-test: due 30 days after the agent first ran (here, 90 s from now), sent to the
    /// rider's phone; one refused by the SIM degrades the protection, the next that goes out clears
    /// it; never two in a day, never during an emergency; from the command line too.
    @Test func theSelfTestGoesMonthlyAndAFailureDegradesUntilOneGoesOut() async throws {
        var script = FakeModem.Script()
        script.outcomes = [.cmsError(21, report: "Short message transfer rejected")]
        let modem = try FakeModem(script: script)
        let folder = try AgentInProcessTests.folder("self-test")
        let database = try RideGuardDatabase(path: folder.appendingPathComponent("rideguard.sqlite").path)
        try database.setRiderPhone(Self.rider)
        let clock = ManualClock(now: Date().timeIntervalSince1970)
        try database.noteSelfTestFirstRun(clock.now() - 30 * 86_400 + 90)
        // The trace's crash comes after the test's 7 minutes.
        let agent = try InProcessAgent(InProcessAgent.configuration(in: folder, playback: 0.05, modem: modem), clock: clock)
        let tests = { modem.messages.filter { $0.hasPrefix("RideGuard test: ") } }
        let socket = folder.appendingPathComponent("control.sock").path
        try await agent.advance(untilState: .armed, limit: 20)
        await agent.advance(by: 60)
        #expect(modem.received.isEmpty, "sent before it was due")
        try await agent.advance(until: { modem.received.count == 1 }, limit: 90)
        let test = try #require(modem.received.first)
        #expect(test.decoded.number == Self.rider && test.decoded.text.hasPrefix("RideGuard test: protecting. Contacts confirmed: 2/2. SIM: home, "), "\(test.decoded.text)")

        // The operator refused it: NOT protecting (the SIM), and the test's own failure said.
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.protection?.level == .notProtecting }, limit: 30)
        let failed = try #require(try await AgentTests.status(folder)?.protection)
        #expect(failed.reasons.contains { $0.hasPrefix("the SIM cannot send SMS: the operator refused it") }, "\(failed)")
        #expect(AgentInProcessTests.journal(folder, kind: .system).contains("self_test fault: the self-test SMS could not be sent: +CMS ERROR: 21 (short message transfer rejected)"))

        // The SIM's refusal holds the test (issue 61): asked again by hand, it is the one waiting.
        let now = try await Rideguard.run(["selftest", "--socket", socket])
        #expect(now.status == 1 && now.stderr.contains("a self-test SMS is already waiting to be sent"), "\(now.stdout)\(now.stderr)")
        // At its retry it goes out, worded as it leaves: not the refusal its arrival disproves.
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.protection == Protection(.protecting) }, limit: 60)
        #expect(tests().count == 2 && tests()[1].hasPrefix("RideGuard test: protecting. Contacts confirmed: 2/2. SIM: home"), "\(tests())")
        // Not two in a day, whoever asks.
        let again = try await Rideguard.run(["selftest", "--socket", socket])
        #expect(again.status == 1 && again.stderr.contains("less than a day ago: at most one a day"), "\(again.stderr)")
        await agent.advance(by: 120)
        #expect(tests().count == 2, "the schedule sent another within the day: \(tests())")
        #expect(try database.selfTestRecord().problem == nil)

        // Never during an emergency: a manual SOS's countdown.
        let press = Task { await agent.agent.press(hold: 4) }        // held on the clock the test moves
        try await agent.advance(untilState: .alertCountdown, limit: 10)
        await agent.advance(by: 2)
        await press.value
        let during = try await Rideguard.run(["selftest", "--socket", socket])
        #expect(during.status == 1 && during.stderr.contains("not during an emergency"), "\(during.stderr)")
        await agent.stop()
    }
}
