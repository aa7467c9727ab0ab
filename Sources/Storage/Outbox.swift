// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import CSQLite
import SystemPackage
import RideGuardCore
import Synchronization

/// One SMS in the outbox. It is written before any attempt to send it, and its status follows
/// every attempt, so a power cut loses nothing: what was `sending` is sent again (at least once).
package struct OutboxMessage: Codable, Equatable, Sendable {
    package enum Status: String, Codable, Sendable { case pending, sending, sent, failed }

    package var id: Int64?
    /// E.164 number.
    package var recipient: String
    package var kind: OutboxKind
    package var body: String
    package var status: Status
    package var attempts: Int
    package var lastError: String?
    /// The modem's message references, comma-separated, once sent.
    package var references: String?
    package var createdAt: Double
    package var updatedAt: Double
    package var nextAttemptAt: Double

    enum CodingKeys: String, CodingKey {
        case id, recipient, kind, body, status, attempts, references
        case lastError = "last_error"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case nextAttemptAt = "next_attempt_at"
    }

    static let columns = #"id, recipient, kind, body, status, attempts, last_error, "references", created_at, updated_at, next_attempt_at"#

    /// A row of `SELECT \(columns)`; nil for one that is not a message (a row edited by hand).
    init?(row: [SQLValue]) {
        guard row.count == 11, let id = row[0].integer, let recipient = row[1].text, let kind = row[2].text.map(OutboxKind.init(rawValue:)), let body = row[3].text,
              let status = row[4].text.flatMap(Status.init), let attempts = row[5].integer, let createdAt = row[8].real,
              let updatedAt = row[9].real, let nextAttemptAt = row[10].real else { return nil }
        self.init(id: id, recipient: recipient, kind: kind, body: body, status: status, attempts: Int(attempts), lastError: row[6].text,
                  references: row[7].text, createdAt: createdAt, updatedAt: updatedAt, nextAttemptAt: nextAttemptAt)
    }

    init(id: Int64?, recipient: String, kind: OutboxKind, body: String, status: Status, attempts: Int, lastError: String?,
         references: String?, createdAt: Double, updatedAt: Double, nextAttemptAt: Double) {
        self.id = id
        self.recipient = recipient
        self.kind = kind
        self.body = body
        self.status = status
        self.attempts = attempts
        self.lastError = lastError
        self.references = references
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.nextAttemptAt = nextAttemptAt
    }

    /// Written as a new row; its id is SQLite's.
    mutating func insert(_ db: SQLiteConnection) throws {
        try db.execute(#"INSERT INTO outbox (recipient, kind, body, status, attempts, last_error, "references", created_at, updated_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"#,
                       [SQLValue(recipient), SQLValue(kind.rawValue), SQLValue(body), SQLValue(status.rawValue), SQLValue(attempts), SQLValue(lastError),
                        SQLValue(references), SQLValue(createdAt), SQLValue(updatedAt), SQLValue(nextAttemptAt)])
        id = db.lastInsertedRowID
    }

    /// Written over its own row (none when the row is gone: nothing to update).
    func update(_ db: SQLiteConnection) throws {
        try db.execute(#"UPDATE outbox SET recipient = ?, kind = ?, body = ?, status = ?, attempts = ?, last_error = ?, "references" = ?, created_at = ?, updated_at = ?, next_attempt_at = ? WHERE id = ?"#,
                       [SQLValue(recipient), SQLValue(kind.rawValue), SQLValue(body), SQLValue(status.rawValue), SQLValue(attempts), SQLValue(lastError),
                        SQLValue(references), SQLValue(createdAt), SQLValue(updatedAt), SQLValue(nextAttemptAt), SQLValue(id)])
    }

    /// The messages a query of `SELECT \(columns) FROM outbox …` finds.
    static func fetch(_ db: SQLiteConnection, _ whereAndOrder: String, _ arguments: [SQLValue] = []) throws -> [OutboxMessage] {
        try db.query("SELECT \(columns) FROM outbox " + whereAndOrder, arguments).compactMap(OutboxMessage.init(row:))
    }
}

/// The outbox's operations; each is one transaction. The agent's own (`queue`, and what its sender
/// does) never wait on the disk: what it refuses is kept in memory, sent, and written later.
package struct Outbox: Sendable {
    let database: RideGuardDatabase
    private var unsaved: Unsaved { database.unsaved }

    /// Writes a message to send, or throws (the command line's way: it says so and exits).
    @discardableResult
    package func enqueue(recipient: String, kind: OutboxKind, body: String, now: Double) throws -> OutboxMessage {
        try database.write { db in
            var message = Self.new(recipient: recipient, kind: kind, body: body, now: now)
            try message.insert(db)
            return message
        }
    }

    /// The agent's way: written when the disk allows, otherwise kept in memory and sent all the same.
    @discardableResult
    package func queue(recipient: String, kind: OutboxKind, body: String, now: Double) -> OutboxMessage {
        do { return try enqueue(recipient: recipient, kind: kind, body: body, now: now) } catch {
            return unsaved.keepNew(Self.new(recipient: recipient, kind: kind, body: body, now: now))
        }
    }

    static func new(recipient: String, kind: OutboxKind, body: String, now: Double) -> OutboxMessage {
        OutboxMessage(id: nil, recipient: recipient, kind: kind, body: body, status: .pending, attempts: 0,
                      lastError: nil, references: nil, createdAt: now, updatedAt: now, nextAttemptAt: now)
    }

    /// After a crash or power cut: messages caught mid-send go back to pending (they may go twice,
    /// never zero times). Returns how many.
    @discardableResult
    /// Messages left `sending` (the power was cut while they went out) are pending again: on the
    /// disk, or, when the card refuses writes (ext4 remounts read-only after the very error a cut
    /// leaves), in memory, so that an alert not confirmed sent still goes. Throws only when the
    /// database cannot even be read.
    package func resumeInterrupted(now: Double) throws -> Int {
        do {
            return try database.write { db in
                try db.execute("UPDATE outbox SET status = 'pending', updated_at = ? WHERE status = 'sending'", [SQLValue(now)])
                return db.changes
            }
        } catch {
            let interrupted = try database.read { db in try OutboxMessage.fetch(db, "WHERE status = 'sending'") }
            return unsaved.content.withLock { c in
                var count = 0
                for var message in interrupted where c.messages[message.id!] == nil {
                    message.status = .pending
                    message.updatedAt = now
                    c.messages[message.id!] = message
                    count += 1
                }
                return count
            }
        }
    }

    /// The oldest pending message that is due, alerts first (before an answer to a WHERE, a test
    /// SMS), marked `sending` in the same transaction, or in memory when the disk refuses writes.
    package func claimNext(now: Double) throws -> OutboxMessage? {
        let sendingInMemory = unsaved.content.withLock { c in c.messages.values.filter { $0.status == .sending }.map { $0.id! } }
        var setAside: [String] = []
        do {
            let claimed = try database.write { db -> OutboxMessage? in
                setAside = []       // only what the committed transaction set aside
                let notInMemory = sendingInMemory.isEmpty ? "" : " AND id NOT IN (\(sendingInMemory.map(String.init).joined(separator: ", ")))"
                while true {
                    guard let row = try db.query("SELECT \(OutboxMessage.columns) FROM outbox " + Self.due + notInMemory + " ORDER BY kind = ? DESC, id LIMIT 1",
                                                 [SQLValue(now), SQLValue(OutboxKind.alert.rawValue)]).first else { return nil }
                    guard var message = OutboxMessage(row: row) else {
                        // Else it would come first again, before every other.
                        if let recipient = try Self.setAside(row, db, now: now) { setAside.append(recipient) }
                        continue
                    }
                    message.status = .sending
                    message.attempts += 1
                    message.updatedAt = now
                    try message.update(db)
                    return message
                }
            }
            if !setAside.isEmpty { database.setAsideAlerts.withLock { $0 += setAside } }
            return claimed
        } catch {
            let stored = Result { try database.read { db in try OutboxMessage.fetch(db, Self.due, [SQLValue(now)]) } }
            return try unsaved.content.withLock { c in
                let candidates = c.messages.values.filter { $0.status == .pending && $0.nextAttemptAt <= now }
                    + ((try? stored.get()) ?? []).filter { c.messages[$0.id!] == nil }
                let alertFirst = { (m: OutboxMessage) in (m.kind == .alert ? 0 : 1, m.createdAt) }
                guard var message = candidates.min(by: { alertFirst($0) < alertFirst($1) }) else {
                    if case .failure(let failure) = stored { throw failure }
                    return nil
                }
                message.status = .sending
                message.attempts += 1
                message.updatedAt = now
                c.messages[message.id!] = message
                return message
            }
        }
    }

    /// A due row that is not a message (a value edited by hand, a damaged card): marked failed, so
    /// that the messages after it go out, and journaled once with its id. Returns its recipient when
    /// it was an alert whose number can still be read: the emergency awaits that contact.
    private static func setAside(_ row: [SQLValue], _ db: SQLiteConnection, now: Double) throws -> String? {
        let id = row.first?.integer ?? -1
        try db.execute("UPDATE outbox SET status = 'failed', last_error = 'damaged row', updated_at = ? WHERE id = ?", [SQLValue(now), SQLValue(id)])
        // Not set aside (no id to name it by): the claim must not pick it again for ever.
        guard db.changes == 1 else { throw RecordError(reason: "outbox row \(id) is damaged and cannot be set aside: remove it with sqlite3") }
        var record = JournalRecord(id: nil, time: now, kind: .messages,
                                   text: "outbox message \(id) is damaged (a value that is not what a message holds): set aside as failed, not sent; the messages after it go on")
        try record.insert(db)
        guard row.count > 2, row[2].text == OutboxKind.alert.rawValue, let recipient = row[1].text else { return nil }
        return recipient
    }

    /// The recipients of damaged alerts set aside since the last call: each is an alert that will
    /// never go, which the emergency must hear of (it would wait for it until the network-failure time).
    package func takeSetAsideAlerts() -> [String] {
        database.setAsideAlerts.withLock { taken in defer { taken = [] }; return taken }
    }

    /// Pending and due at the time given as its argument.
    private static let due = "WHERE status = 'pending' AND next_attempt_at <= ?"

    /// Each outcome is journaled (kind "messages", the number masked) in the same transaction as the
    /// message's new status, so the journal tells who got what, when, and what failed. Each returns
    /// the journal's line.
    @discardableResult
    /// `body`: the words that went out, where they were written as it left.
    package func markSent(_ id: Int64, references: [Int], body: String? = nil, now: Double) throws -> String {
        try update(id, now: now) { m in
            m.status = .sent
            if let body { m.body = body }
            m.references = references.map(String.init).joined(separator: ",")
            m.lastError = nil
            return "sent \(m.kind) to \(PhoneNumber.mask(m.recipient)) (attempt \(m.attempts)): reference \(m.references ?? "")"
        }
    }

    @discardableResult
    package func markRetry(_ id: Int64, error: String, at next: Double, now: Double) throws -> String {
        try update(id, now: now) { m in
            m.status = .pending
            m.lastError = error
            m.nextAttemptAt = next
            return "could not send \(m.kind) to \(PhoneNumber.mask(m.recipient)) (attempt \(m.attempts)): \(error); retrying in \(Int((next - now).rounded())) s"
        }
    }

    @discardableResult
    package func markFailed(_ id: Int64, error: String, now: Double) throws -> String {
        try update(id, now: now) { m in
            m.status = .failed
            m.lastError = error
            return "gave up on \(m.kind) to \(PhoneNumber.mask(m.recipient)) after \(m.attempts) attempt\(m.attempts == 1 ? "" : "s"): \(error)"
        }
    }

    /// Every message waiting for a retry is due now (what held them back is over: the SIM is
    /// ready). Returns how many.
    @discardableResult
    package func retryPendingNow(now: Double) throws -> Int {
        try database.write { db in
            try db.execute("UPDATE outbox SET next_attempt_at = ? WHERE status = 'pending' AND next_attempt_at > ?", [SQLValue(now), SQLValue(now)])
            return db.changes
        }
    }

    /// Drops messages of `kind` not yet sent (the rider cancelled before they went out). Returns how many.
    @discardableResult
    package func cancelPending(kind: OutboxKind, now: Double) throws -> Int {
        let cancel = { (m: inout OutboxMessage) in
            m.status = .failed
            m.lastError = "cancelled by the rider"
            m.updatedAt = now
        }
        let inMemory = unsaved.content.withLock { c in
            var count = 0
            for (id, message) in c.messages where message.status == .pending && message.kind == kind {
                cancel(&c.messages[id]!)
                count += 1
            }
            return count
        }
        do {
            return try inMemory + database.write { db in
                try db.execute("UPDATE outbox SET status = 'failed', last_error = 'cancelled by the rider', updated_at = ? WHERE status = 'pending' AND kind = ?",
                               [SQLValue(now), SQLValue(kind.rawValue)])
                return db.changes
            }
        } catch {
            let stored = try database.read { db in try OutboxMessage.fetch(db, "WHERE status = 'pending' AND kind = ?", [SQLValue(kind.rawValue)]) }
            return unsaved.content.withLock { c in
                var count = inMemory
                for var message in stored where c.messages[message.id!] == nil {
                    cancel(&message)
                    c.messages[message.id!] = message
                    count += 1
                }
                return count
            }
        }
    }

    package func message(_ id: Int64) throws -> OutboxMessage? {
        if let kept = unsaved.content.withLock({ $0.messages[id] }) { return kept }
        return try database.read { db in try Self.stored(id, db) }
    }

    /// The message the modem tried last (sent, given up, or failed and waiting to be retried): what
    /// the SMS path last showed; nil before any was tried.
    package func lastTried() throws -> OutboxMessage? {
        try database.read { db in
            try OutboxMessage.fetch(db, "WHERE status IN ('sent', 'failed') OR attempts > 0 ORDER BY updated_at DESC, id DESC LIMIT 1").first
        }
    }

    /// Every message, with what memory holds in place of what the database says.
    package func all() throws -> [OutboxMessage] {
        merged(try database.read { db in try OutboxMessage.fetch(db, "ORDER BY id") })
    }

    /// When the earliest pending message falls due (a retry waiting out its backoff), if any.
    package func nextAttempt() throws -> Double? {
        try waiting().filter { $0.status == .pending }.map(\.nextAttemptAt).min()
    }

    /// Whether a message of this kind waits to be sent (pending or being sent).
    package func hasWaiting(_ kind: OutboxKind) throws -> Bool {
        try waiting().contains { $0.kind == kind }
    }

    package func countPending() throws -> Int {
        try waiting().count
    }

    /// Pending and sending messages, through the status index.
    private func waiting() throws -> [OutboxMessage] {
        let stored = try database.read { db in try OutboxMessage.fetch(db, "WHERE status IN ('pending', 'sending')") }
        return merged(stored).filter { $0.status == .pending || $0.status == .sending }
    }

    private func merged(_ stored: [OutboxMessage]) -> [OutboxMessage] {
        unsaved.content.withLock { c in
            guard !c.messages.isEmpty else { return stored }
            let ids = Set(stored.map { $0.id! })
            return stored.map { c.messages[$0.id!] ?? $0 } + c.messages.values.filter { !ids.contains($0.id!) }.sorted { $0.createdAt < $1.createdAt }
        }
    }

    /// The change, written with its journal line, or kept in memory when the disk refuses it.
    private func update(_ id: Int64, now: Double, _ change: (inout OutboxMessage) -> String) throws -> String {
        let kept = unsaved.content.withLock { $0.messages[id] }
        if id > 0 {
            do {
                let text = try database.write { db -> String in
                    guard var message = try kept ?? Self.stored(id, db) else { return "message \(id) is gone" }
                    let text = change(&message)
                    message.updatedAt = now
                    try message.update(db)
                    var record = JournalRecord(id: nil, time: now, kind: .messages, text: text)
                    try record.insert(db)
                    return text
                }
                unsaved.content.withLock { c in if c.messages[id] == kept { c.messages[id] = nil } }
                return text
            } catch {}   // the disk refused it: memory keeps the change
        }
        var message = try kept ?? database.read { db in try Self.stored(id, db) }
        guard message != nil else { return "message \(id) is gone" }
        let text = change(&message!)
        message!.updatedAt = now
        unsaved.content.withLock { $0.messages[id] = message }
        unsaved.keep(.journal(JournalRecord(id: nil, time: now, kind: .messages, text: text)))
        return text
    }

    private static func stored(_ id: Int64, _ db: SQLiteConnection) throws -> OutboxMessage? {
        try OutboxMessage.fetch(db, "WHERE id = ?", [SQLValue(id)]).first
    }
}
