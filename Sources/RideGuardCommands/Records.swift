// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import SystemCalls
import RideGuardCore
import RideGuardAgent
import Storage
import SystemTime

/// `--database`, shared by the commands that work on the agent's database (running or not). By
/// default it is the one the configuration file names, so that these commands and the agent share it.
struct DatabaseOption: ParsableArguments {
    @Option(help: "The RideGuard database (default: the configuration's `database`).")
    var database: String?

    @OptionGroup var configuration: ConfigurationOption

    var path: String {
        get throws { try database ?? configuration.load().database }
    }

    /// The messages' language before the rider chose one: the configuration's (English when the
    /// file cannot be read: the database given alone).
    var language: MessageLanguage { (try? configuration.load().messages.language) ?? .en }

    func open() throws -> RideGuardDatabase {
        let path = try self.path
        do {
            return try RideGuardDatabase(path: path)
        } catch {
            Output.error("cannot open the database \(path): \(error)")
            throw ExitCode(2)
        }
    }
}

/// Runs a change and turns a refusal into one clear line and exit code 1.
func refusing<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as RecordError {
        Output.error(error.reason)
        throw ExitCode(1)
    }
}

struct Contacts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The emergency contacts who get the alert.", subcommands: [List.self, Add.self, Remove.self, Ask.self, Confirm.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The emergency contacts and their numbers.")
        @OptionGroup var db: DatabaseOption
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let contacts = try db.open().contacts()
            let now = Date().timeIntervalSince1970
            if json {
                Output.line("[" + contacts.map { c in
                    var line = JSONLine()
                    line.add("name", c.name)
                    line.add("number", c.number)
                    line.add("state", c.standing.name)
                    if let since = c.standing.since { line.add("since", Times.iso8601(since)) }
                    return line.text
                }.joined(separator: ",") + "]")
            } else if contacts.isEmpty {
                Output.line("no contact yet: add one with rideguard contacts add NAME NUMBER (RideGuard will not arm without one)")
            } else {
                for c in contacts {
                    Output.line("\(DisplayText.neutralised(c.name, lineBreaks: false))  \(c.number)  \(c.standing.summary(now: now))")
                }
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a contact: a name and a number with its country code.")
        @Argument(help: "The contact's name.") var name: String
        @Argument(help: "The number, e.g. \"+33 6 12 34 56 78\" or 0033612345678.") var number: String
        @OptionGroup var db: DatabaseOption

        func run() throws {
            let database = try db.open()
            let now = Date().timeIntervalSince1970
            let contact = try refusing { try database.addContact(name: name, number: number, now: now) }
            Output.line("added \(DisplayText.neutralised(contact.name, lineBreaks: false)) \(contact.number)")
            try refusing { try database.askContact(contact.number, language: db.language, now: now) }
            Output.line(Contacts.asked)
        }
    }

    /// What asking a contact does, as the commands say it.
    static let asked = ScreenText(.en)(.setupAsked)

    struct Ask: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Ask a contact again, by SMS, to confirm they are one.")
        @Argument(help: "The contact's name or number.") var nameOrNumber: String
        @OptionGroup var db: DatabaseOption

        func run() throws {
            let database = try db.open()
            let contact = try refusing { try database.askContact(nameOrNumber, language: db.language, now: Date().timeIntervalSince1970) }
            Output.line("asked \(DisplayText.neutralised(contact.name, lineBreaks: false)) again: " + Contacts.asked)
        }
    }

    struct Confirm: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark a contact confirmed by hand, once you have called them.")
        @Argument(help: "The contact's name or number.") var nameOrNumber: String
        @OptionGroup var db: DatabaseOption

        func run() throws {
            let database = try db.open()
            let contact = try refusing { try database.confirmContactByHand(nameOrNumber, now: Date().timeIntervalSince1970) }
            Output.line("\(DisplayText.neutralised(contact.name, lineBreaks: false)) marked confirmed by you (journaled as such)")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a contact by name or number.")
        @Argument(help: "The contact's name or number.") var nameOrNumber: String
        @OptionGroup var db: DatabaseOption

        func run() throws {
            let database = try db.open()
            let contact = try refusing { try database.removeContact(nameOrNumber, now: Date().timeIntervalSince1970) }
            Output.line("removed \(DisplayText.neutralised(contact.name, lineBreaks: false)) \(contact.number)")
            if (try? database.contacts())?.isEmpty == true {
                Output.error("no contact left: RideGuard cannot alert anyone and stops protecting (two long beeps every 30 s) until one is added (rideguard contacts add NAME NUMBER)")
            }
        }
    }
}

struct Message: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The rider's own words, first in every alert.", subcommands: [Show.self, Set.self], defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The rider's own words, as alerts begin with them.")
        @OptionGroup var db: DatabaseOption
        func run() throws {
            if let message = try db.open().profile().message { Output.line(DisplayText.neutralised(message)) } else {
                Output.line("no message of your own yet: alerts start with the default one; set yours with rideguard message set \"...\"")
            }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the rider's own words, first in every alert.")
        @Argument(help: "At least 5 characters, e.g. \"I may have crashed. Please call me.\"") var text: String
        @OptionGroup var db: DatabaseOption
        func run() throws {
            let database = try db.open()
            try refusing { try database.setMessage(text) }
            let parts = SMSText(text).parts.count
            Output.line("message set (\(text.count) characters\(parts > 1 ? ", \(parts) SMS parts on its own" : ""))")
        }
    }
}

struct Profile: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The rider's name, an optional medical note included in alerts, the rider's own phone and language.",
        subcommands: [Show.self, Set.self], defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The rider's name, medical note, own phone and language.")
        @OptionGroup var db: DatabaseOption
        func run() throws {
            let profile = try db.open().profile()
            Output.line("name: \(profile.name.map { DisplayText.neutralised($0, lineBreaks: false) } ?? "not set")")
            Output.line("medical note: \(profile.medicalNote.map { DisplayText.neutralised($0) } ?? "none")")
            Output.line("rider's phone: \(profile.phone ?? "not set (a STATUS SMS is answered only from it)")")
            let configured = try db.configuration.load().messages.language
            Output.line("language: " + (profile.language.map(\.rawValue) ?? "\(configured.rawValue) (the configuration's messages.language)"))
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set the rider's name, medical note, own phone or language.")
        @Option(help: "The rider's name, as the alert signs it.") var name: String?
        @Option(help: "A medical note for rescuers (blood group, allergies); empty removes it.") var medical: String?
        @Option(help: "The rider's own phone (+33 6 12 34 56 78): the one number whose STATUS SMS is answered; empty removes it.")
        var phone: String?
        @Option(help: "The language of the alerts, the answers and the rescue card: en, fr, de, es or it.")
        var language: MessageLanguage?
        @OptionGroup var db: DatabaseOption

        func validate() throws {
            if name == nil && medical == nil && phone == nil && language == nil {
                throw ValidationError("give --name, --medical, --phone and/or --language")
            }
        }

        func run() throws {
            let database = try db.open()
            try refusing {
                if let name { try database.setRiderName(name) }
                if let medical { try database.setMedicalNote(medical) }
                if let phone { try database.setRiderPhone(phone) }
                if let language { try database.setLanguage(language) }
            }
            Output.line("profile updated")
        }
    }
}

struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The journal, newest first.")

    @Option(help: "Only the lines of one kind.") var kind: JournalKind?
    @Option(help: "Only the last 30m, 12h, 7d…, or since an ISO date (2026-11-22T08:00:00Z).") var since: String?
    @Flag(help: "Print JSON Lines.") var json = false
    @OptionGroup var db: DatabaseOption

    func validate() throws {
        if let since, JournalSince.time(since, now: Date().timeIntervalSince1970) == nil {
            throw ValidationError("--since must be \(JournalSince.help)")
        }
    }

    func run() throws {
        let records = try db.open().journal(kind: kind, since: since.flatMap { JournalSince.time($0, now: Date().timeIntervalSince1970) })
        for record in records {
            let when = Times.iso8601(record.time)
            if json {
                var line = JSONLine()
                line.add("time", when)
                line.add("kind", record.kind.rawValue)
                line.add("text", record.text)
                Output.line(line.text)
            } else {
                Output.line("\(when)  \(record.kind)  \(DisplayText.neutralised(record.text, lineBreaks: false))")
            }
        }
        if records.isEmpty && !json { Output.line("no events") }
    }
}

extension JournalKind: ExpressibleByArgument {}
