// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import RideGuardCore

/// An emergency contact: a name and an E.164 number.
package struct Contact: Codable, Equatable, Sendable {
    package var id: Int64?
    package var name: String
    package var number: String
    package var createdAt: Double
    /// Whether they know they are a contact (not part of the JSON form: the database keeps it).
    package var standing: ContactStanding = .unasked

    /// As the journal, logs and prompts name a contact: "Sam (+33•••••5678)".
    package var forLogs: String { "\(DisplayText.neutralised(name, lineBreaks: false)) (\(PhoneNumber.mask(number)))" }

    enum CodingKeys: String, CodingKey {
        case id, name, number
        case createdAt = "created_at"
    }

    /// The contacts a query of `SELECT id, name, number, created_at FROM contacts …` finds. A row
    /// that is not a contact (bytes where the number belongs: a hand edit, a damaged card) is an
    /// error naming it, never a contact quietly left out of the alert.
    /// A standing that cannot be read (a newer release's name, a hand edit) reads as never asked:
    /// the contact is alerted all the same, and can be asked again.
    /// A file not yet upgraded to the standing's columns (a card mounted read-only opens as it is)
    /// reads its contacts as never asked.
    static func fetch(_ db: SQLiteConnection, _ whereAndOrder: String, _ arguments: [SQLValue] = []) throws -> [Contact] {
        let rows: [[SQLValue]]
        do {
            rows = try db.query("SELECT id, name, number, created_at, standing, standing_since, standing_detail FROM contacts " + whereAndOrder, arguments)
        } catch {
            guard error.message.contains("no such column: standing") else { throw error }
            rows = try db.query("SELECT id, name, number, created_at, NULL, NULL, NULL FROM contacts " + whereAndOrder, arguments)
        }
        return try rows.map { row in
            guard let id = row[0].integer, let name = row[1].text, let number = row[2].text, let createdAt = row[3].real else {
                throw RecordError(reason: "contact row \(row[0].integer.map(String.init) ?? "?") is damaged (a value that is not what a contact holds): remove it with sqlite3, or restore a backup")
            }
            let standing = row[4].text.flatMap { ContactStanding(stored: $0, since: row[5].real, detail: row[6].text) } ?? .unasked
            return Contact(id: id, name: name, number: number, createdAt: createdAt, standing: standing)
        }
    }

    /// Writes the standing into the row, and journals `line` beside it.
    static func setStanding(_ db: SQLiteConnection, _ contact: Contact, _ standing: ContactStanding, journal line: String, now: Double) throws {
        let stored = standing.stored
        try db.execute("UPDATE contacts SET standing = ?, standing_since = ?, standing_detail = ? WHERE id = ?",
                       [SQLValue(stored.name), stored.since.map { SQLValue.real($0) } ?? .null, SQLValue(stored.detail), SQLValue(contact.id)])
        var entry = JournalRecord(id: nil, time: now, kind: .system, text: line)
        try entry.insert(db)
    }
}

/// One line of the journal: what happened, when (seconds since the epoch), of which kind.
package struct JournalRecord: Codable, Equatable, Sendable {
    package var id: Int64?
    package var time: Double
    package var kind: JournalKind
    package var text: String

    mutating func insert(_ db: SQLiteConnection) throws {
        try db.execute("INSERT INTO journal (time, kind, text) VALUES (?, ?, ?)", [SQLValue(time), SQLValue(kind.rawValue), SQLValue(text)])
        id = db.lastInsertedRowID
    }
}

/// What the rider set up: their name, a medical note, the alert message, and their own phone's
/// number (the one phone whose STATUS SMS the agent answers).
package struct RiderProfile: Equatable, Sendable {
    package var name: String?
    package var medicalNote: String?
    package var message: String?
    package var phone: String?
    /// The rider's language for the alerts, the card and the answers; nil until chosen (then the
    /// configuration's `messages.language` applies).
    package var language: MessageLanguage?

    package init(name: String? = nil, medicalNote: String? = nil, message: String? = nil, phone: String? = nil, language: MessageLanguage? = nil) {
        self.name = name
        self.medicalNote = medicalNote
        self.message = message
        self.phone = phone
        self.language = language
    }
}

/// Why a contact, profile or message change was refused.
package struct RecordError: Error, Equatable, CustomStringConvertible, Sendable {
    /// In English, as the command line says it.
    package var reason: String
    /// The same refusal in the rider's screens' words, where they have it.
    package var phrase: ScreenPhrase?
    package var description: String { reason }

    package init(reason: String) {
        self.reason = reason
    }

    package init(_ phrase: ScreenPhrase) {
        reason = ScreenText(.en)(phrase)
        self.phrase = phrase
    }

    /// The refusal in `t`'s language where the screens have it, else in English.
    package func said(_ t: ScreenText) -> String { phrase.map { t($0) } ?? reason }
}

extension RideGuardDatabase {
    // MARK: Contacts

    /// Adds a contact, and journals it (number masked); the number is cleaned to E.164 (a wrong one is
    /// refused with the reason).
    @discardableResult
    package func addContact(name: String, number: String, now: Double) throws -> Contact {
        let trimmed = name.trimmed()
        guard !trimmed.isEmpty else { throw RecordError(ScreenPhrase(.contactNeedsName)) }
        if let problem = DisplayText.problem(in: trimmed, what: "the contact's name") { throw RecordError(reason: problem) }
        let e164: String
        switch PhoneNumber.cleaned(number) {
        case .success(let cleaned): e164 = cleaned
        case .failure(let problem): throw RecordError(problem.phrase(typed: number))
        }
        return try write { db in
            if try db.value("SELECT 1 FROM contacts WHERE number = ?", [SQLValue(e164)]) != nil {
                throw RecordError(ScreenPhrase(.setupAlreadyAContact, PhoneNumber.mask(e164)))
            }
            try db.execute("INSERT INTO contacts (name, number, created_at) VALUES (?, ?, ?)", [SQLValue(trimmed), SQLValue(e164), SQLValue(now)])
            let contact = Contact(id: db.lastInsertedRowID, name: trimmed, number: e164, createdAt: now)
            var entry = JournalRecord(id: nil, time: now, kind: .system, text: "contact added: \(trimmed) \(PhoneNumber.mask(e164))")
            try entry.insert(db)
            return contact
        }
    }

    /// Removes the contact with this name or number, and journals it; returns it, or throws when there is none.
    @discardableResult
    package func removeContact(_ nameOrNumber: String, now: Double) throws -> Contact {
        let number = try? PhoneNumber(nameOrNumber).e164
        return try write { db in
            let matches = try Contact.fetch(db, "WHERE name = ? OR number = ?", [SQLValue(nameOrNumber), SQLValue(number ?? "")])
            guard let contact = matches.first else { throw RecordError(reason: "no contact named or numbered '\(nameOrNumber)'") }
            guard matches.count == 1 else { throw RecordError(reason: "\(matches.count) contacts match '\(nameOrNumber)': remove by number") }
            try db.execute("DELETE FROM contacts WHERE id = ?", [SQLValue(contact.id)])
            var entry = JournalRecord(id: nil, time: now, kind: .system, text: "contact removed: \(contact.name) \(PhoneNumber.mask(contact.number))")
            try entry.insert(db)
            return contact
        }
    }

    /// Moves the contact with this number one place up the list (alerts and calls go in its order);
    /// the first stays first.
    package func moveContactUp(_ number: String, now: Double) throws {
        try write { db in
            let contacts = try Contact.fetch(db, "ORDER BY id")
            guard let index = contacts.firstIndex(where: { $0.number == number }) else {
                throw RecordError(reason: "no contact numbered \(PhoneNumber.mask(number))")
            }
            guard index > 0 else { return }
            let (above, moving) = (contacts[index - 1], contacts[index])
            // Each row takes the other's place (its id); the numbers are unique, so one steps aside first.
            try db.execute("UPDATE contacts SET number = ? WHERE id = ?", [SQLValue("moving:" + moving.number), SQLValue(moving.id)])
            for (contact, place) in [(moving, above.id), (above, moving.id)] {
                let standing = contact.standing.stored
                try db.execute("UPDATE contacts SET name = ?, number = ?, created_at = ?, standing = ?, standing_since = ?, standing_detail = ? WHERE id = ?",
                               [SQLValue(contact.name), SQLValue(contact.number), SQLValue(contact.createdAt), SQLValue(standing.name),
                                standing.since.map { SQLValue.real($0) } ?? .null, SQLValue(standing.detail), SQLValue(place)])
            }
            var entry = JournalRecord(id: nil, time: now, kind: .system, text: "contact \(moving.name) moved up to place \(index)")
            try entry.insert(db)
        }
    }

    /// Asks the contact with this name or number to confirm: the SMS (in the rider's language, or
    /// `language` before the rider chose one) is queued, and they wait for their reply from when it
    /// goes out (`noteConfirmationSend`). Its words are written again as it leaves, from the
    /// profile then (a name given after the contact was added signs it). Adding a contact asks at
    /// once; asking again is the same.
    @discardableResult
    package func askContact(_ nameOrNumber: String, language: MessageLanguage, now: Double) throws -> Contact {
        let profile = try profile()
        return try write { db in
            var contact = try Self.oneContact(db, nameOrNumber)
            let body = MessageComposer.confirmationRequest(riderName: profile.name, language: profile.language ?? language)
            var message = Outbox.new(recipient: contact.number, kind: .confirmation, body: body, now: now)
            try message.insert(db)
            contact.standing = .waiting(since: now, held: ContactStanding.queued)
            try Contact.setStanding(db, contact, contact.standing, journal: "contact \(contact.forLogs) asked to confirm by SMS", now: now)
            return contact
        }
    }

    /// How the question to the contact with this number fared: sent (`held` nil: they wait for
    /// their reply from `now`), or held back and why. Only while they wait for it: a reply that
    /// came first stands.
    package func noteConfirmationSend(to number: String, held: String?, now: Double) throws {
        try write { db in
            guard let contact = try Contact.fetch(db, "WHERE number = ?", [SQLValue(number)]).first,
                  case .waiting(let since, let before) = contact.standing, before != nil else { return }
            let standing = ContactStanding.waiting(since: held == nil ? now : since, held: held)
            let stored = standing.stored
            try db.execute("UPDATE contacts SET standing_since = ?, standing_detail = ? WHERE id = ?",
                           [stored.since.map { SQLValue.real($0) } ?? .null, SQLValue(stored.detail), SQLValue(contact.id)])
        }
    }

    /// Notes that the contact with this number was told the words that confirm and decline;
    /// false when they were already (they are told once).
    package func noteReplyHint(to number: String) throws -> Bool {
        try write { db in
            let key = "reply_hint:" + number
            guard try db.setting(key) == nil else { return false }
            try db.setSetting(key, "sent")
            return true
        }
    }

    /// The rider says this contact knows (they called them): confirmed by hand, journaled as such.
    @discardableResult
    package func confirmContactByHand(_ nameOrNumber: String, now: Double) throws -> Contact {
        try write { db in
            var contact = try Self.oneContact(db, nameOrNumber)
            contact.standing = .confirmed(at: now, byHand: true)
            try Contact.setStanding(db, contact, contact.standing, journal: "contact \(contact.forLogs) confirmed by hand by the rider", now: now)
            return contact
        }
    }

    /// What a contact's reply or a failed SMS to them decided; nothing when it is already so (a
    /// second OK is not journaled again). Returns whether it changed.
    @discardableResult
    package func setContactStanding(_ number: String, _ standing: ContactStanding, journal line: String, now: Double) throws -> Bool {
        try write { db in
            guard let contact = try Contact.fetch(db, "WHERE number = ?", [SQLValue(number)]).first, contact.standing.name != standing.name else { return false }
            try Contact.setStanding(db, contact, standing, journal: line, now: now)
            return true
        }
    }

    private static func oneContact(_ db: SQLiteConnection, _ nameOrNumber: String) throws -> Contact {
        let number = try? PhoneNumber(nameOrNumber).e164
        let matches = try Contact.fetch(db, "WHERE name = ? OR number = ?", [SQLValue(nameOrNumber), SQLValue(number ?? "")])
        guard let contact = matches.first else { throw RecordError(reason: "no contact named or numbered '\(nameOrNumber)'") }
        guard matches.count == 1 else { throw RecordError(reason: "\(matches.count) contacts match '\(nameOrNumber)': give the number") }
        return contact
    }

    package func contacts() throws -> [Contact] {
        let contacts = try read { db in try Contact.fetch(db, "ORDER BY id") }
        contactsRead.withLock { $0 = contacts }
        return contacts
    }

    /// Every contact, as the database holds them, or, when it cannot be read (a damaged page), as
    /// last read (the agent reads them every second); throws only when it never could. Who wrote
    /// an SMS is found among these, a contact who declined too (they may say OK again).
    package func contactsAsKnown() throws -> [Contact] {
        do { return try contacts() } catch {
            let remembered = contactsRead.withLock { $0 }
            if remembered.isEmpty { throw error }
            return remembered
        }
    }

    /// The contacts to alert and call: every one but those who declined (an unconfirmed number is
    /// tried, never skipped).
    package func contactsToAlert() throws -> [Contact] {
        try contactsAsKnown().filter { !$0.standing.isDeclined }
    }

    // MARK: Profile and message

    package func profile() throws -> RiderProfile {
        try read { db in
            let rows = try db.query("SELECT key, value FROM settings")
            var values: [String: String] = [:]
            // A damaged row (a NULL key, a value that is not text) is passed over, never a crash.
            for row in rows {
                if let key = row[0].text, let value = row[1].text { values[key] = value }
            }
            return RiderProfile(name: values["rider_name"], medicalNote: values["medical_note"], message: values["message"],
                                phone: values["rider_phone"], language: values["language"].flatMap(MessageLanguage.init))
        }
    }

    package func setRiderName(_ name: String) throws {
        let trimmed = name.trimmed()
        guard !trimmed.isEmpty else { throw RecordError(reason: "the rider's name is empty") }
        if let problem = DisplayText.problem(in: trimmed, what: "the rider's name") { throw RecordError(reason: problem) }
        try setSetting("rider_name", trimmed)
    }

    /// An empty note removes it.
    package func setMedicalNote(_ note: String) throws {
        let trimmed = note.trimmed()
        if let problem = DisplayText.problem(in: trimmed, what: "the medical note", lineBreaks: true) { throw RecordError(reason: problem) }
        if trimmed.isEmpty {
            try removeSetting("medical_note")
        } else {
            try setSetting("medical_note", trimmed)
        }
    }

    /// The rider's own phone, written as for a contact (+33 6 12 34 56 78); empty removes it.
    package func setRiderPhone(_ number: String) throws {
        guard !number.trimmed().isEmpty else { return try removeSetting("rider_phone") }
        let e164: String
        do { e164 = try PhoneNumber(number).e164 } catch { throw RecordError(reason: error.reason) }
        try setSetting("rider_phone", e164)
    }

    /// The rider's language (`setup`, `profile set --language`, the phone's page).
    package func setLanguage(_ language: MessageLanguage) throws {
        try setSetting("language", language.rawValue)
    }

    private func removeSetting(_ key: String) throws {
        try write { db in try db.execute("DELETE FROM settings WHERE key = ?", [SQLValue(key)]) }
    }

    /// The alert message: at least 5 characters after trimming.
    package func setMessage(_ message: String) throws {
        if let problem = DisplayText.problem(in: message, what: "the message", lineBreaks: true) { throw RecordError(reason: problem) }
        do { try MessageComposer.validateRiderMessage(message) } catch { throw RecordError(ScreenPhrase(.messageTooShort)) }
        try setSetting("message", message.trimmed())
    }

    func setSetting(_ key: String, _ value: String) throws {
        try write { db in try db.setSetting(key, value) }
    }

    // MARK: Journal

    /// Journals a line; when the disk refuses it, memory keeps it for the next write that works
    /// (the agent's journal never loses its crash and countdown lines to a full card). Returns
    /// whether it is on disk.
    @discardableResult
    package func journal(_ entry: JournalEntry, at time: Double) -> Bool {
        let record = JournalRecord(id: nil, time: time, kind: entry.kind, text: entry.text)
        do {
            try write { db in
                var record = record
                try record.insert(db)
            }
            return true
        } catch {
            unsaved.keep(.journal(record))
            return false
        }
    }

    /// Newest first, optionally of one kind and since a time.
    package func journal(kind: JournalKind? = nil, since: Double? = nil, limit: Int = 200) throws -> [JournalRecord] {
        var conditions: [String] = [], arguments: [SQLValue] = []
        if let kind { conditions.append("kind = ?"); arguments.append(SQLValue(kind.rawValue)) }
        if let since { conditions.append("time >= ?"); arguments.append(SQLValue(since)) }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ") + " "
        return try read { db in
            try db.query("SELECT id, time, kind, text FROM journal \(filter)ORDER BY time DESC, id DESC LIMIT ?", arguments + [SQLValue(limit)])
                .compactMap { row in
                    guard let id = row[0].integer, let time = row[1].real, let raw = row[2].text, let text = row[3].text else { return nil }
                    let (kind, unknown) = JournalKind.stored(raw)
                    return JournalRecord(id: id, time: time, kind: kind, text: unknown.map { "(\($0)) \(text)" } ?? text)
                }
        }
    }
}

extension RideGuardDatabase {
    // MARK: Retention

    /// Deletes messages delivered or given up, journal lines and fleet events, last changed before `cutoff`
    /// (seconds since the epoch), `batch` rows a transaction so that the agent's own writes never
    /// wait long. Messages still to send are never touched, nor the newest `keepNewest` rows of
    /// each table: a clock set far ahead (a bad GPS time, a Pi without its RTC) would otherwise
    /// take the current emergency's own lines for old. Returns how many of each went.
    package func prune(before cutoff: Double, batch: Int = 500, keepNewest: Int = 1000) throws -> (messages: Int, journal: Int) {
        let done = [OutboxMessage.Status.sent.rawValue, OutboxMessage.Status.failed.rawValue]
        var messages = 0
        while true {
            let n = try write { db in
                try db.execute("""
                    DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE status IN (?, ?) AND updated_at < ?
                        AND id <= (SELECT MAX(id) FROM outbox) - ? LIMIT ?)
                    """, [SQLValue(done[0]), SQLValue(done[1]), SQLValue(cutoff), SQLValue(keepNewest), SQLValue(batch)])
                return db.changes
            }
            messages += n
            if n < batch { break }
        }
        let lines = try pruneOldest("journal", id: "id", before: cutoff, batch: batch, keepNewest: keepNewest)
        // Fleet events: a broker away longer than the history kept loses the oldest (their seq says so).
        _ = try pruneOldest("events", id: "seq", before: cutoff, batch: batch, keepNewest: keepNewest)
        return (messages, lines)
    }

    /// Deletes the rows of `table` (journal, events) timed before `cutoff`, but the newest `keepNewest`.
    private func pruneOldest(_ table: String, id: String, before cutoff: Double, batch: Int, keepNewest: Int) throws -> Int {
        var deleted = 0
        while true {
            let n = try write { db in
                try db.execute("""
                    DELETE FROM \(table) WHERE \(id) IN (SELECT \(id) FROM \(table) WHERE time < ? AND \(id) <= (SELECT MAX(\(id)) FROM \(table)) - ?
                        ORDER BY time LIMIT ?)
                    """, [SQLValue(cutoff), SQLValue(keepNewest), SQLValue(batch)])
                return db.changes
            }
            deleted += n
            if n < batch { return deleted }
        }
    }

    /// Years of history at once, for the growth test and the benchmark: `messages` delivered
    /// location updates and `journalLines` journal lines, all old.
    package func addHistory(messages: Int, journalLines: Int) throws {
        try write { db in
            try db.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO outbox (recipient, kind, body, status, attempts, created_at, updated_at, next_attempt_at)
                SELECT '+33612345678', 'location_update', 'old', 'sent', 1, i, i, i FROM n
                """, [SQLValue(messages)])
            try db.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                INSERT INTO journal (time, kind, text) SELECT i, 'system', 'an old line' FROM n
                """, [SQLValue(journalLines)])
        }
    }

    /// The database's size on disk, with SQLite's side files, in bytes.
    package var sizeOnDisk: UInt64 {
        [path, path + "-journal", path + "-wal"].reduce(0) { sum, file in
            var info = stat()
            return sum + (stat(file, &info) == 0 ? UInt64(info.st_size) : 0)
        }
    }

    // MARK: The emergency in progress

    /// The saved emergency workflow (JSON), if any.
    package func emergencySnapshot() throws -> String? {
        try textSetting("emergency", what: "the saved emergency")
    }

    /// Replaces the saved emergency workflow in one transaction (a power cut keeps the old or the new).
    package func saveEmergencySnapshot(_ json: String) throws {
        try setSetting("emergency", json)
    }

    /// Parts of long SMS waiting for the others (the assembler's state, JSON), if any.
    package func waitingSMSParts() throws -> Data? {
        try textSetting("sms_parts", what: "the parts of long SMS").map { Data($0.utf8) }
    }

    /// A setting that must be text: anything else (a row edited by hand) is an error naming the file.
    private func textSetting(_ key: String, what: String) throws -> String? {
        try read { db in
            try db.query("SELECT value FROM settings WHERE key = ?", [SQLValue(key)]).first.map { row in
                guard let text = row[0].text else { throw RecordError(reason: "\(what) in \(path) is not text") }
                return text
            }
        }
    }

    package func saveWaitingSMSParts(_ json: Data) throws {
        try setSetting("sms_parts", String(decoding: json, as: UTF8.self))
    }

    /// Keeps an unreadable snapshot aside for inspection and clears it.
    package func setAsideEmergencySnapshot() throws {
        try write { db in
            try db.execute("DELETE FROM settings WHERE key = 'emergency.bad'")
            try db.execute("UPDATE settings SET key = 'emergency.bad' WHERE key = 'emergency'")
        }
    }
}

/// The settings table, one key's text value: for the database's own calls and its migrations, which
/// have only the connection.
extension SQLiteConnection {
    func setting(_ key: String) throws(SQLiteError) -> String? {
        try value("SELECT value FROM settings WHERE key = ?", [SQLValue(key)])?.text
    }

    func setSetting(_ key: String, _ value: String) throws(SQLiteError) {
        try execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    [SQLValue(key), SQLValue(value)])
    }
}
