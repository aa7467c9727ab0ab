// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardCore
@testable import Storage
import AgentTestSupport
import RideGuardTestSupport
import Testing

/// Contacts, message, profile and journal on a database on disk, through the command line.
@Suite struct RecordsCommandTests {
    func database() -> String {
        Scratch.path("rideguard-records.sqlite").path
    }

    @Test func contactsAreAddedCleanedListedAndRemoved() throws {
        let db = database()
        let empty = Rideguard.inProcess(["contacts", "list", "--database", db])
        #expect(empty.stdout.contains("no contact yet"))
        #expect(Rideguard.inProcess(["contacts", "add", "Sam", "0033 6 12.34.56.78", "--database", db]).stdout
                == "added Sam +33612345678\nan SMS asks them to confirm: they reply OK, or STOP to decline (rideguard contacts shows their answer)\n")
        #expect(Rideguard.inProcess(["contacts", "add", "Jo", "+49 151 1234 5678", "--database", db]).status == 0)
        let duplicate = Rideguard.inProcess(["contacts", "add", "Sam again", "+33612345678", "--database", db])
        #expect(duplicate.status == 1 && duplicate.stderr.contains("+33•••••5678 is already a contact"))
        let national = Rideguard.inProcess(["contacts", "add", "Pat", "06 12 34 56 78", "--database", db])
        #expect(national.status == 1 && national.stderr.contains("has no country code"))
        // Each was asked by SMS, in the configuration's language (English with the database alone).
        let asked = try RideGuardDatabase(path: db).outbox.all()
        #expect(asked.map(\.kind) == [.confirmation, .confirmation] && asked.map(\.recipient) == ["+33612345678", "+4915112345678"])
        #expect(asked[0].body == "RideGuard: A motorcyclist made you an emergency contact. After a crash you get an SMS with the position. Reply OK to confirm, STOP to decline.")
        let json = Rideguard.inProcess(["contacts", "list", "--json", "--database", db])
        #expect(json.stdout.hasPrefix(#"[{"name":"Sam","number":"+33612345678","state":"waiting","since":""#), "\(json.stdout)")
        #expect(Rideguard.inProcess(["contacts", "list", "--database", db]).stdout.contains("Sam  +33612345678  SMS queued, not sent yet"))
        // Asked again, and confirmed by hand: each journaled as such.
        #expect(Rideguard.inProcess(["contacts", "ask", "Jo", "--database", db]).stdout.hasPrefix("asked Jo again: an SMS asks them to confirm"))
        #expect(try RideGuardDatabase(path: db).outbox.all().count == 3)
        #expect(Rideguard.inProcess(["contacts", "confirm", "Jo", "--database", db]).stdout == "Jo marked confirmed by you (journaled as such)\n")
        #expect(try RideGuardDatabase(path: db).contacts().map(\.standing.name) == ["waiting", "confirmed"])
        #expect(Rideguard.inProcess(["contacts", "remove", "+33 6 12 34 56 78", "--database", db]).stdout == "removed Sam +33612345678\n")
        let missing = Rideguard.inProcess(["contacts", "remove", "Nobody", "--database", db])
        #expect(missing.status == 1 && missing.stderr.contains("no contact named or numbered 'Nobody'"))
        #expect(try RideGuardDatabase(path: db).contacts().map(\.name) == ["Jo"])
        let journal = try RideGuardDatabase(path: db).journal(kind: .system).map(\.text)
        #expect(journal == ["contact removed: Sam +33•••••5678", "contact Jo (+49•••••••5678) confirmed by hand by the rider",
                            "contact Jo (+49•••••••5678) asked to confirm by SMS", "contact Jo (+49•••••••5678) asked to confirm by SMS",
                            "contact added: Jo +49•••••••5678", "contact Sam (+33•••••5678) asked to confirm by SMS", "contact added: Sam +33•••••5678"])
    }

    /// Issue 43, point 9: a name with ESC or BEL (a terminal obeys them, XML cannot hold them) or a
    /// right-to-left override (it reverses the number after it on the card) is refused wherever it
    /// comes in, with what is wrong; a row stored before is shown neutralised, never raw.
    @Test func controlAndDirectionCharactersAreRefusedAndNeverPrinted() throws {
        let db = database()
        for name in ["Sam\u{1B}[31m", "Bel\u{07}", "Eve\u{202E}"] {
            let added = Rideguard.inProcess(["contacts", "add", name, "+33612345678", "--database", db])
            #expect(added.status == 1 && added.stderr.contains("the contact's name holds a"), "\(added.stderr)")
        }
        let rtl = Rideguard.inProcess(["contacts", "add", "Eve\u{202E}", "+33612345678", "--database", db])
        #expect(rtl.stderr.contains("a direction override (U+202E)"), "\(rtl.stderr)")
        let rider = Rideguard.inProcess(["profile", "set", "--name", "Al\u{1B}x", "--database", db])
        #expect(rider.status == 1 && rider.stderr.contains("the rider's name holds a control character (U+001B)"), "\(rider.stderr)")
        let note = try RideGuardDatabase(path: db)
        #expect(throws: RecordError.self) { try note.setMedicalNote("O+\u{1B}]0;pwned\u{07}") }
        try note.setMedicalNote("Blood group O+\nallergic to penicillin")     // a line break is fine in a note
        #expect(try RideGuardDatabase(path: db).contacts().isEmpty)

        // Stored before this check (an older version, sqlite3 by hand): shown neutralised.
        try SQLiteConnection(path: db).execute("INSERT INTO contacts (name, number, created_at) VALUES (?, '+33612345678', 1)",
                                               [SQLValue("Sam\u{1B}[2J\u{202E}")])
        let listed = Rideguard.inProcess(["contacts", "list", "--database", db])
        #expect(!listed.stdout.contains("\u{1B}") && !listed.stdout.contains("\u{202E}") && listed.stdout.contains("Sam\u{FFFD}[2J\u{FFFD}"), "\(listed.stdout)")
        #expect(Markup.escaped("Sam\u{1B}\u{202E}<") == "Sam\u{FFFD}\u{FFFD}&lt;")
        let svg = Scratch.path("card.svg")
        #expect(Rideguard.inProcess(["card", "--out", svg.path, "--database", db]).status == 0)
        let card = try String(contentsOf: svg, encoding: .utf8)
        #expect(!card.contains("\u{1B}") && !card.contains("\u{202E}"))
        let parsed = try Rideguard.run(["-c", "import sys, xml.dom.minidom; print(xml.dom.minidom.parse(sys.argv[1]).documentElement.tagName)", svg.path],
                                       program: URL(fileURLWithPath: "/usr/bin/python3"))
        #expect(parsed.stdout == "svg\n", "the card is well-formed XML: \(parsed.stderr)")
    }

    /// Without --database, the commands use the database the configuration names: the agent's.
    @Test func theDatabaseComesFromTheConfiguration() throws {
        let db = database()
        let config = try Rideguard.temporaryFile("records-\(UUID().uuidString).yaml",
                                                 contents: Data("database: \(db)\ncontrol_socket: \(db).sock\n".utf8))
        #expect(Rideguard.inProcess(["contacts", "add", "Sam", "+33612345678", "--config", config.path]).status == 0)
        #expect(try RideGuardDatabase(path: db).contacts().map(\.name) == ["Sam"])
        #expect(Rideguard.inProcess(["message", "set", "Crash! Call me.", "--config", config.path]).status == 0)
        #expect(Rideguard.inProcess(["events", "--config", config.path]).stdout.contains("contact added: Sam +33•••••5678"))
        // The control socket too: nobody listens on this one, and the error names it.
        let status = try Rideguard.run(["status", "--config", config.path])
        #expect(status.status == 2 && status.stderr.contains("control socket \(db).sock:"))
        // A broken configuration is an error, not a silent fallback to another database.
        try Data("database: [\n".utf8).write(to: config)
        let broken = Rideguard.inProcess(["contacts", "list", "--config", config.path])
        #expect(broken.status == 1 && broken.stderr.contains("\(config.path):"))
    }

    @Test func messageAndProfile() throws {
        let db = database()
        #expect(Rideguard.inProcess(["message", "--database", db]).stdout.contains("no message of your own yet: alerts start with the default one"))
        let short = Rideguard.inProcess(["message", "set", " hi ", "--database", db])
        #expect(short.status == 1 && short.stderr.contains("at least 5 characters"))
        #expect(Rideguard.inProcess(["message", "set", "I may have crashed. Please call me.", "--database", db]).status == 0)
        #expect(Rideguard.inProcess(["message", "show", "--database", db]).stdout == "I may have crashed. Please call me.\n")
        #expect(Rideguard.inProcess(["profile", "set", "--name", "Alex", "--medical", "diabetic", "--database", db]).status == 0)
        #expect(Rideguard.inProcess(["profile", "--database", db]).stdout
                == "name: Alex\nmedical note: diabetic\nrider's phone: not set (a STATUS SMS is answered only from it)\nlanguage: en (the configuration's messages.language)\n")
        // The rider's phone, cleaned like a contact's; one without its country code is refused; empty removes it.
        let national = Rideguard.inProcess(["profile", "set", "--phone", "06 12 34 56 78", "--database", db])
        #expect(national.status == 1 && national.stderr.contains("no country code"), "\(national.stderr)")
        #expect(Rideguard.inProcess(["profile", "set", "--phone", "0033 7.00.00.00.01", "--database", db]).status == 0)
        #expect(try RideGuardDatabase(path: db).profile().phone == "+33700000001")
        #expect(Rideguard.inProcess(["profile", "set", "--phone", "", "--database", db]).status == 0)
        #expect(try RideGuardDatabase(path: db).profile().phone == nil)
        #expect(Rideguard.inProcess(["profile", "set", "--medical", "", "--database", db]).status == 0)
        #expect(try RideGuardDatabase(path: db).profile().medicalNote == nil)
        #expect(Rideguard.inProcess(["profile", "set", "--database", db]).status == 64)
    }

    @Test func journalNewestFirstByKindAndTime() throws {
        let db = database()
        let database = try RideGuardDatabase(path: db)
        let now = Date().timeIntervalSince1970
        database.journal(.init(.detections, "crash detected"), at: now - 7200)
        database.journal(.init(.alerts, "countdown started"), at: now - 60)
        database.journal(.init(.alerts, "rider is fine"), at: now - 30)
        let all = Rideguard.inProcess(["events", "--database", db])
        let order = all.stdout.split(separator: "\n")
        #expect(order.count == 3)
        #expect(order[0].hasSuffix("alerts  rider is fine") && order[1].hasSuffix("alerts  countdown started")
                && order[2].hasSuffix("detections  crash detected"))
        let recent = Rideguard.inProcess(["events", "--kind", "alerts", "--since", "1h", "--json", "--database", db])
        let lines = recent.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains("\"text\":\"rider is fine\"") == true)
        let bad = Rideguard.inProcess(["events", "--since", "yesterday", "--database", db])
        #expect(bad.status == 64 && bad.stderr.contains("--since must be like 30m"))
    }
}
