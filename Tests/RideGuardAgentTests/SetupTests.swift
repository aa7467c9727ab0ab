// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
import Storage
import RideGuardTestSupport
import Testing

/// `rideguard setup` answered through a pseudo-terminal, as over SSH, and scripted with flags.
extension AgentTests {
    @Test func setupAsksEverythingAndSendsAMarkedTestSMS() throws {
        let rig = try Rig("setup", contacts: false)
        let before = try String(contentsOf: rig.config, encoding: .utf8)
        let terminal = try Terminal([Rideguard.binary.path, "setup", "--config", rig.config.path])
        #expect(terminal.expect("Language of the alerts (en/fr/de/es/it) [en]:"))
        terminal.type("xx")
        #expect(terminal.expect("✗ 'xx' is not one of en, fr, de, es, it"))
        terminal.type("de")
        #expect(terminal.expect("Rider's name, as the alerts sign it:"))
        terminal.type("Alex")
        #expect(terminal.expect("Medical note for rescuers"))
        terminal.type("Blutgruppe 0+")
        #expect(terminal.expect("Emergency contact's name:"))
        terminal.type("Sam")
        #expect(terminal.expect("Sam's mobile number, with its country code"))
        terminal.type("06 12 34 56 78")
        #expect(terminal.expect("has no country code"))
        #expect(terminal.expect("Sam's mobile number"))
        terminal.type("+33 6 12 34 56 78")
        #expect(terminal.expect("added Sam +33612345678"))
        #expect(terminal.expect("Another contact's name (empty when done):"))
        terminal.type("Jo")
        #expect(terminal.expect("Jo's mobile number"))
        terminal.type("+49 151 12345678")
        #expect(terminal.expect("Another contact's name (empty when done):"))
        terminal.type("")
        #expect(terminal.expect("Alert message, first in every alert [\(MessageComposer.suggestedMessage(.de))]:"))
        terminal.type("")
        #expect(terminal.expect("Press the button now (simulated GPIO: press Enter)"))
        terminal.type("")
        #expect(terminal.expect("Did you hear the buzzer? [Y/n]:"))
        terminal.type("n")
        #expect(terminal.expect("✗ check the buzzer"))
        #expect(terminal.expect("Send a test SMS to Sam (+33•••••5678)? [y/N]:"))
        terminal.type("y")
        #expect(terminal.expect("✓ test SMS sent to Sam (+33•••••5678)", seconds: 60))
        #expect(terminal.expect("Write a rescue card for the helmet (name, medical note, contacts, QR code)? [Y/n]:"))
        terminal.type("")
        #expect(terminal.expect("Card file [rescue-card.svg]:"))
        let card = rig.folder.appendingPathComponent("card.svg")
        terminal.type(card.path)
        #expect(terminal.expect("card written to \(card.path)"))
        #expect(terminal.finish() == 0, "\(terminal.output)")
        let printed = try String(contentsOf: card, encoding: .utf8)
        #expect(printed.contains("RideGuard Notfallkarte") && printed.contains("Blutgruppe 0+") && printed.contains("+4915112345678"))

        // The language is the rider's, in the database; the configuration file is as it was.
        #expect(try String(contentsOf: rig.config, encoding: .utf8) == before)
        let database = try RideGuardDatabase(path: rig.database)
        #expect(try database.contacts().map(\.number) == ["+33612345678", "+4915112345678"])
        let profile = try database.profile()
        #expect(profile.name == "Alex" && profile.medicalNote == "Blutgruppe 0+" && profile.language == .de)
        #expect(profile.message == MessageComposer.suggestedMessage(.de))
        // Each contact asked to confirm, then one test SMS, to the first contact only, marked as a
        // test; all in the rider's language, one SMS each.
        #expect(rig.modem.received.map(\.decoded.number) == ["+33612345678", "+4915112345678", "+33612345678"])
        #expect(rig.modem.messages == [MessageComposer.confirmationRequest(riderName: "Alex", language: .de),
                                       MessageComposer.confirmationRequest(riderName: "Alex", language: .de),
                                       MessageComposer.test(riderName: "Alex", language: .de)])
        #expect(try database.contacts().map(\.standing.name) == ["waiting", "waiting"])
    }

    @Test func setupWithoutInputTakesFlags() throws {
        let rig = try Rig("setup-flags", contacts: false)
        // Nothing to ask and nothing given: it says which flag is missing.
        let missing = try Rideguard.run(["setup", "--config", rig.config.path, "--no-input"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no emergency contact: give --contact NAME=NUMBER"))
        let wrong = try Rideguard.run(["setup", "--config", rig.config.path, "--no-input", "--contact", "Sam=0612345678"])
        #expect(wrong.status != 0 && wrong.stderr.contains("--contact Sam=0612345678: '0612345678' has no country code"))
        // Asked, with nobody to answer: a clear error instead of a hang.
        let closed = try Rideguard.run(["setup", "--config", rig.config.path])
        #expect(closed.status == 1 && closed.stderr.contains("no answer (standard input closed): use --no-input"))

        let done = try Rideguard.run(["setup", "--config", rig.config.path, "--no-input", "--language", "it", "--name", "Alex",
                                      "--contact", "Sam=+33 6 12 34 56 78", "--contact", "Jo=+4915112345678",
                                      "--message", "Crash! Call me.", "--test-sms", "--card", rig.folder.appendingPathComponent("card.svg").path])
        #expect(done.status == 0, "\(done.stdout)\(done.stderr)")
        #expect(done.stdout.contains("setup done: 2 contact(s), message set, alerts in it."))
        let card = try String(contentsOf: rig.folder.appendingPathComponent("card.svg"), encoding: .utf8)
        #expect(card.contains("Scheda di soccorso") && card.contains("Sam: +33612345678"))
        #expect(try RideGuardDatabase(path: rig.database).profile().language == .it)
        #expect(rig.modem.messages == [MessageComposer.confirmationRequest(riderName: "Alex", language: .it),
                                       MessageComposer.confirmationRequest(riderName: "Alex", language: .it),
                                       MessageComposer.test(riderName: "Alex", language: .it)])
        // Run again (a scripted install re-run): nothing doubles.
        let again = try Rideguard.run(["setup", "--config", rig.config.path, "--no-input", "--contact", "Sam=+33612345678"])
        #expect(again.status == 0 && again.stdout.contains("Sam is already a contact"))
        #expect(try RideGuardDatabase(path: rig.database).contacts().count == 2)
        #expect(rig.modem.messages.count == 3)
    }
}
