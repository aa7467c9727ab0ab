import Foundation
import RideGuardAgent
import RideGuardCore
import SerialModem
import Synchronization
import Testing

/// Received SMS are read from the storage the modem puts them in (27.005 §3.2.2 +CPMS, §3.4.1 +CMTI).
@Suite(.serialized) struct ModemStorageTests {
    final class Inbox: Sendable {
        let texts = Mutex<[String]>([])
        var all: [String] { texts.withLock { $0 } }
    }

    func modem(_ fake: FakeModem, received: Inbox) -> Modem {
        var configuration = ModemConfiguration(device: fake.link)
        configuration.registrationTimeout = 20
        return Modem(configuration: configuration, clock: SystemServiceClock(), logger: ModemTests.Log().logger) { part in
            received.texts.withLock { $0.append(part.text) }
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
        try waitFor(10) { received.all == ["Where?"] }
        try waitFor(5) { fake.stored == 0 }
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
        try waitFor(10) { received.all == ["OK"] }
        try waitFor(5) { fake.stored == 0 }
        #expect(fake.commands.contains("AT+CPMS=\"ME\""), "\(fake.commands)")
        await modem.close()
    }
}
