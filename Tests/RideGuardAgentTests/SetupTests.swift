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
        // From here on, in German: the language chosen first is the one set-up speaks.
        #expect(terminal.expect("Sprache: de"))
        #expect(terminal.expect("Name des Fahrers, mit dem die Alarme unterschrieben werden:"))
        terminal.type("Alex")
        #expect(terminal.expect("Medizinischer Hinweis für Retter"))
        terminal.type("Blutgruppe 0+")
        #expect(terminal.expect("Name des Notfallkontakts:"))
        terminal.type("Sam")
        #expect(terminal.expect("Handynummer von Sam, mit Ländervorwahl"))
        terminal.type("06 12 34 56 78")
        #expect(terminal.expect("✗ „06 12 34 56 78“ hat keine Ländervorwahl"))
        #expect(terminal.expect("Handynummer von Sam"))
        terminal.type("+33 6 12 34 56 78")
        #expect(terminal.expect("hinzugefügt: Sam +33612345678"))
        #expect(terminal.expect("eine SMS bittet um Bestätigung"))
        #expect(terminal.expect("Name eines weiteren Kontakts (leer, wenn fertig):"))
        terminal.type("Jo")
        #expect(terminal.expect("Handynummer von Jo"))
        terminal.type("+49 151 12345678")
        #expect(terminal.expect("Name eines weiteren Kontakts (leer, wenn fertig):"))
        terminal.type("")
        #expect(terminal.expect("Alarmnachricht, zuerst in jedem Alarm [\(MessageComposer.suggestedMessage(.de))]:"))
        terminal.type("")
        #expect(terminal.expect("Jetzt den Knopf drücken (simuliertes GPIO: Enter drücken)"))
        terminal.type("")
        #expect(terminal.expect("Haben Sie den Summer gehört? [J/n]:"))
        terminal.type("vielleicht")
        #expect(terminal.expect("✗ mit j oder n antworten"))
        terminal.type("n")
        #expect(terminal.expect("✗ Summer prüfen"))
        #expect(terminal.expect("Sensor (IMU): ✓ simulated: "))
        #expect(terminal.expect("Eine Test-SMS an Sam (+33•••••5678) senden? [j/N]:"))
        terminal.type("j")
        #expect(terminal.expect("✓ Test-SMS an Sam (+33•••••5678) gesendet", seconds: 60))
        #expect(terminal.expect("Eine Notfallkarte für den Helm schreiben (Name, medizinischer Hinweis, Kontakte, QR-Code)? [J/n]:"))
        terminal.type("")
        #expect(terminal.expect("Datei der Karte [rescue-card.svg]:"))
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

    /// In French, with the refusals a rider meets: a number too short, a message too short, a wrong
    /// answer to a choice; the questions after the language, and their colons, are French.
    @Test func setupSpeaksFrenchOnceChosen() throws {
        let rig = try Rig("setup-fr", contacts: false)
        let terminal = try Terminal([Rideguard.binary.path, "setup", "--config", rig.config.path, "--skip-hardware"])
        #expect(terminal.expect("Language of the alerts (en/fr/de/es/it) [en]:"))
        terminal.type("fr")
        #expect(terminal.expect("langue : fr"))
        #expect(terminal.expect("Nom du motard, qui signe les alertes :"))
        terminal.type("Camille")
        #expect(terminal.expect("Note médicale pour les secours"))
        terminal.type("-")
        #expect(terminal.expect("Nom du contact d'urgence :"))
        terminal.type("Léa")
        #expect(terminal.expect("Numéro de portable de Léa, avec l'indicatif du pays"))
        terminal.type("+33 612")
        #expect(terminal.expect("✗ « +33 612 » a 5 chiffres ; un numéro international en a de 8 à 15"))
        terminal.type("+33 6 98 76 54 32")
        #expect(terminal.expect("ajouté : Léa +33698765432"))
        #expect(terminal.expect("Nom d'un autre contact (vide pour finir) :"))
        terminal.type("")
        #expect(terminal.expect("Message d'alerte, en tête de chaque alerte [\(MessageComposer.suggestedMessage(.fr))] :"))
        terminal.type("Aïe")
        #expect(terminal.expect("✗ le message d'alerte doit avoir au moins 5 caractères"))
        terminal.type("")
        #expect(terminal.expect("Envoyer un SMS de test à Léa (+33•••••5432) ? [o/N] :"))
        terminal.type("peut-être")
        #expect(terminal.expect("✗ répondez o ou n"))
        terminal.type("n")
        #expect(terminal.expect("Écrire une carte de secours pour le casque (nom, note médicale, contacts, QR code) ? [O/n] :"))
        terminal.type("non")
        #expect(terminal.expect("configuration terminée : 1 contact(s), message défini, alertes en fr."))
        #expect(terminal.expect("ensuite : rideguard doctor --config"))
        #expect(terminal.finish() == 0, "\(terminal.output)")
        let database = try RideGuardDatabase(path: rig.database)
        #expect(try database.profile().message == MessageComposer.suggestedMessage(.fr))
        // Léa is asked in French (queued: no test SMS was sent, so nothing flushed the outbox).
        #expect(try database.outbox.all().map(\.body) == [MessageComposer.confirmationRequest(riderName: "Camille", language: .fr)])
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
        #expect(done.stdout.contains("configurazione finita: 2 contatto/i, messaggio impostato, allarmi in it."), "\(done.stdout)")
        let card = try String(contentsOf: rig.folder.appendingPathComponent("card.svg"), encoding: .utf8)
        #expect(card.contains("Scheda di soccorso") && card.contains("Sam: +33612345678"))
        #expect(try RideGuardDatabase(path: rig.database).profile().language == .it)
        #expect(rig.modem.messages == [MessageComposer.confirmationRequest(riderName: "Alex", language: .it),
                                       MessageComposer.confirmationRequest(riderName: "Alex", language: .it),
                                       MessageComposer.test(riderName: "Alex", language: .it)])
        // Run again (a scripted install re-run): nothing doubles.
        let again = try Rideguard.run(["setup", "--config", rig.config.path, "--no-input", "--contact", "Sam=+33612345678"])
        #expect(again.status == 0 && again.stdout.contains("Sam è già un contatto"), "\(again.stdout)")
        #expect(try RideGuardDatabase(path: rig.database).contacts().count == 2)
        #expect(rig.modem.messages.count == 3)
    }
}
