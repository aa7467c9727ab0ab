// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardCore
import SerialModem
import Synchronization
import RideGuardTestSupport
import Testing
import SystemCalls
import SystemTime

/// Received SMS are read from the storage the modem puts them in (27.005 §3.2.2 +CPMS, §3.4.1 +CMTI).
@Suite(.serialized) struct ModemStorageTests {
    final class Inbox: Sendable {
        let texts = Mutex<[String]>([])
        var all: [String] { texts.withLock { $0 } }
    }

    func modem(_ fake: FakeModem, received: Inbox) -> Modem {
        var configuration = ModemConfiguration(device: fake.link)
        configuration.registrationTimeout = 20
        return Modem(configuration: configuration, clock: SystemServiceClock(), logger: LogLines(level: .trace).logger) { part in
            received.texts.withLock { $0.append(part.text) }
            return true
        }
    }

    /// A Cinterion-like modem prefers "ME","ME","SM": +CMTI names the SIM while +CMGL listed the
    /// modem's memory, so a contact's WHERE was never read. Read where new messages are stored.
    @Test func aModemPreferringTheModemsMemoryStillHasItsNewSMSRead() async throws {
        var script = FakeModem.Script()
        script.memories = ["ME", "ME", "SM"]
        let fake = try FakeModem(script: script)
        let received = Inbox()
        let modem = modem(fake, received: received)
        let health = await modem.checkHealth()
        #expect(health.messageStorage == "SM", "\(health)")
        #expect(fake.commands.contains("AT+CPMS=\"SM\""), "\(fake.commands)")
        fake.deliver(from: "+33612345678", "Where?")
        try await waitFor(10) { received.all == ["Where?"] }
        try await waitFor(5) { fake.stored == 0 }
        await modem.close()
    }

    /// A +CMTI naming another storage than the one read: that one is read (and kept from then on).
    @Test func aNoticeNamingAnotherStorageIsReadThere() async throws {
        let fake = try FakeModem()
        let received = Inbox()
        let modem = modem(fake, received: received)
        #expect(await modem.checkHealth().messageStorage == "SM")
        fake.setReceiveStorage("ME")
        fake.deliver(from: "+33612345678", "OK")
        try await waitFor(10) { received.all == ["OK"] }
        try await waitFor(5) { fake.stored == 0 }
        #expect(fake.commands.contains("AT+CPMS=\"ME\""), "\(fake.commands)")
        await modem.close()
    }
}

extension ModemStorageTests {
    /// 2000 `+CMTI` notices in a burst (a looping modem, a hostile one): a handful of reads, a handful
    /// of log lines, and the real message among them is still read.
    @Test func aFloodOfNoticesIsOneReadAndAFewLines() async throws {
        let fake = try FakeModem()
        let received = Inbox()
        let log = LogLines(level: .trace)
        var configuration = ModemConfiguration(device: fake.link)
        configuration.registrationTimeout = 20
        let modem = Modem(configuration: configuration, clock: SystemServiceClock(), logger: log.logger) { part in
            received.texts.withLock { $0.append(part.text) }
            return true
        }
        _ = await modem.checkHealth()
        for _ in 0..<2000 { fake.announce(#"+CMTI: "SM",7"#) }
        fake.deliver(from: "+33612345678", "Where?")
        for _ in 0..<2000 { fake.announce(#"+CMTI: "SM",7"#) }
        try await waitFor(20) { received.all == ["Where?"] }
        try await Task.sleep(for: .seconds(1))
        let reads = fake.commands.filter { $0 == "AT+CMGL=4" }.count
        #expect(reads < 20, "\(reads) reads for one message")
        let lines = log.all.filter { $0.contains("+CMTI") }
        #expect(lines.count <= 6, "\(lines.count) log lines: \(lines.prefix(8))")
        await modem.close()
    }

    /// Issue 27, point 1: a modem whose +CNMI ends up delivering directly (`+CMT:` and the PDU,
    /// unsolicited) has its messages handled too, even when one comes in the middle of a command.
    /// A slow modem (each answer 0.3 s late) on the test's clock.
    @Test(.onOneThread) func aMessageDeliveredDirectlyIsHandled() async throws {
        let clock = ManualClock(now: Date().timeIntervalSince1970)
        var script = FakeModem.Script()
        script.answerDelay = 0.3
        let fake = try FakeModem(script: script, clock: clock)
        let received = Inbox()
        let modem = Modem(configuration: ModemConfiguration(device: fake.link), clock: clock, logger: LogLines(level: .trace).logger) { part in
            received.texts.withLock { $0.append(part.text) }
            return true
        }
        _ = try await clock.run(limit: 30) { await modem.checkHealth() }
        fake.deliverDirectly(from: "+33612345678", "WHERE")
        await clock.settle(until: { received.all == ["WHERE"] })
        #expect(received.all == ["WHERE"])
        // During a command: its answer is unharmed, the message handled.
        let checking = Task { await modem.checkHealth() }
        let before = fake.commands.count
        try await clock.advance(until: { fake.commands.count > before }, limit: 5, step: 0.05)
        fake.deliverDirectly(from: "+4915112345678", "OK")
        #expect(try await clock.run(limit: 30) { await checking.value }.connected)
        await clock.settle(until: { received.all == ["WHERE", "OK"] })
        #expect(received.all == ["WHERE", "OK"])
        await modem.close()
    }

    /// Garbage after a `+CMT:` header is not taken for its PDU: the command running meanwhile keeps
    /// its answer.
    @Test func garbageAfterADirectDeliveryHeaderSwallowsNoAnswer() async throws {
        let fake = try FakeModem()
        let received = Inbox()
        let modem = modem(fake, received: received)
        _ = await modem.checkHealth()
        fake.announce("+CMT: ,24")
        let start = Date()
        let health = await modem.checkHealth()
        // A swallowed answer shows as a command that times out (10 s) and a session reopened.
        #expect(Date().timeIntervalSince(start) < 5, "the health check waited \(Date().timeIntervalSince(start)) s")
        #expect(health.connected && health.signalDBm == -73, "\(health)")
        #expect(received.all.isEmpty)
        await modem.close()
    }
}
