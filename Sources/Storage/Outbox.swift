import Foundation
import GRDB
import RideGuardCore

/// One SMS in the outbox. It is written before any attempt to send it, and its status follows
/// every attempt, so a power cut loses nothing: what was `sending` is sent again (at least once).
public struct OutboxMessage: Codable, Equatable, Sendable, FetchableRecord, MutablePersistableRecord {
    public enum Status: String, Codable, Sendable { case pending, sending, sent, failed }

    public static let databaseTableName = "outbox"

    public var id: Int64?
    /// E.164 number.
    public var recipient: String
    /// alert, location_update, all_clear, test…
    public var kind: String
    public var body: String
    public var status: Status
    public var attempts: Int
    public var lastError: String?
    /// The modem's message references, comma-separated, once sent.
    public var references: String?
    public var createdAt: Double
    public var updatedAt: Double
    public var nextAttemptAt: Double

    enum CodingKeys: String, CodingKey {
        case id, recipient, kind, body, status, attempts, references
        case lastError = "last_error"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case nextAttemptAt = "next_attempt_at"
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

/// The RideGuard database: one SQLite file, schema versioned with migrations.
public final class RideGuardDatabase: Sendable {
    public let path: String
    let queue: DatabaseQueue

    /// Opens (or creates) the database. Whatever the umask, its folder is created 0750 and the file
    /// (with SQLite's side files) is 0600; a looser existing file is tightened, and the journal says so.
    public init(path: String) throws {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try PrivateFiles.createFolder(folder) }
        let tightened = try PrivateFiles.protectDatabase(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        queue = try DatabaseQueue(path: path, configuration: configuration)
        try Self.migrator.migrate(queue)
        Self.giveToFolderOwner(path, folder: folder.isEmpty ? "." : folder)
        for change in tightened {
            try journal(JournalEntry("system", "database: tightened \(change): other users could read the contacts and the medical note"),
                        at: Date().timeIntervalSince1970)
        }
    }

    /// Run as root (`sudo rideguard setup`), a new database file would belong to root and the
    /// service user could no longer write it: it goes to whoever owns its folder.
    /// Never through a link: root following one would hand whatever it points at (a root-owned
    /// file) to the folder's owner.
    static func giveToFolderOwner(_ path: String, folder: String) {
        guard geteuid() == 0 else { return }
        var folderInfo = stat(), fileInfo = stat()
        guard stat(folder, &folderInfo) == 0, lstat(path, &fileInfo) == 0, fileInfo.st_mode & S_IFMT == S_IFREG,
              folderInfo.st_uid != 0, fileInfo.st_uid != folderInfo.st_uid || fileInfo.st_gid != folderInfo.st_gid else { return }
        _ = lchown(path, folderInfo.st_uid, folderInfo.st_gid)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 outbox") { db in
            try db.create(table: "outbox") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("recipient", .text).notNull()
                t.column("kind", .text).notNull()
                t.column("body", .text).notNull()
                t.column("status", .text).notNull().indexed()
                t.column("attempts", .integer).notNull().defaults(to: 0)
                t.column("last_error", .text)
                t.column("references", .text)
                t.column("created_at", .double).notNull()
                t.column("updated_at", .double).notNull()
                t.column("next_attempt_at", .double).notNull()
            }
        }
        registerRecords(&migrator)
        return migrator
    }

    public var outbox: Outbox { Outbox(queue: queue) }
}

/// The outbox's operations; each is one transaction.
public struct Outbox: Sendable {
    let queue: DatabaseQueue

    @discardableResult
    public func enqueue(recipient: String, kind: String, body: String, now: Double) throws -> OutboxMessage {
        try queue.write { db in
            var message = OutboxMessage(id: nil, recipient: recipient, kind: kind, body: body, status: .pending, attempts: 0,
                                        lastError: nil, references: nil, createdAt: now, updatedAt: now, nextAttemptAt: now)
            try message.insert(db)
            return message
        }
    }

    /// After a crash or power cut: messages caught mid-send go back to pending (they may go twice,
    /// never zero times). Returns how many.
    @discardableResult
    public func resumeInterrupted(now: Double) throws -> Int {
        try queue.write { db in
            try OutboxMessage.filter(Column("status") == OutboxMessage.Status.sending.rawValue)
                .updateAll(db, Column("status").set(to: OutboxMessage.Status.pending.rawValue), Column("updated_at").set(to: now))
        }
    }

    /// The oldest pending message that is due, alerts first, marked `sending` in the same transaction.
    public func claimNext(now: Double) throws -> OutboxMessage? {
        try queue.write { db in
            guard var message = try OutboxMessage
                .filter(Column("status") == OutboxMessage.Status.pending.rawValue && Column("next_attempt_at") <= now)
                // An alert before anything queued earlier (an answer to a WHERE, a test SMS).
                .order((Column("kind") == MessageKind.alert.rawValue).desc, Column("id")).fetchOne(db) else { return nil }
            message.status = .sending
            message.attempts += 1
            message.updatedAt = now
            try message.update(db)
            return message
        }
    }

    /// Each outcome is journaled (kind "messages", the number masked) in the same transaction as the
    /// message's new status, so the journal tells who got what, when, and what failed. Each returns
    /// the journal's line.
    @discardableResult
    public func markSent(_ id: Int64, references: [Int], now: Double) throws -> String {
        try update(id, now: now) { m in
            m.status = .sent
            m.references = references.map(String.init).joined(separator: ",")
            m.lastError = nil
            return "sent \(m.kind) to \(PhoneNumber.mask(m.recipient)) (attempt \(m.attempts)): reference \(m.references ?? "")"
        }
    }

    @discardableResult
    public func markRetry(_ id: Int64, error: String, at next: Double, now: Double) throws -> String {
        try update(id, now: now) { m in
            m.status = .pending
            m.lastError = error
            m.nextAttemptAt = next
            return "could not send \(m.kind) to \(PhoneNumber.mask(m.recipient)) (attempt \(m.attempts)): \(error); retrying in \(Int((next - now).rounded())) s"
        }
    }

    @discardableResult
    public func markFailed(_ id: Int64, error: String, now: Double) throws -> String {
        try update(id, now: now) { m in
            m.status = .failed
            m.lastError = error
            return "gave up on \(m.kind) to \(PhoneNumber.mask(m.recipient)) after \(m.attempts) attempt\(m.attempts == 1 ? "" : "s"): \(error)"
        }
    }

    /// Drops alerts not yet sent (the rider cancelled before they went out). Returns how many.
    @discardableResult
    public func cancelPending(kind: String, now: Double) throws -> Int {
        try queue.write { db in
            try OutboxMessage.filter(Column("status") == OutboxMessage.Status.pending.rawValue && Column("kind") == kind)
                .updateAll(db, Column("status").set(to: OutboxMessage.Status.failed.rawValue),
                           Column("last_error").set(to: "cancelled by the rider"), Column("updated_at").set(to: now))
        }
    }

    public func message(_ id: Int64) throws -> OutboxMessage? {
        try queue.read { db in try OutboxMessage.fetchOne(db, key: id) }
    }

    public func all() throws -> [OutboxMessage] {
        try queue.read { db in try OutboxMessage.order(Column("id")).fetchAll(db) }
    }

    /// When the earliest pending message falls due (a retry waiting out its backoff), if any.
    public func nextAttempt() throws -> Double? {
        try queue.read { db in
            try Double.fetchOne(db, sql: "SELECT MIN(next_attempt_at) FROM outbox WHERE status = ?", arguments: [OutboxMessage.Status.pending.rawValue])
        }
    }

    public func countPending() throws -> Int {
        try queue.read { db in
            try OutboxMessage.filter([OutboxMessage.Status.pending.rawValue, OutboxMessage.Status.sending.rawValue]
                .contains(Column("status"))).fetchCount(db)
        }
    }

    private func update(_ id: Int64, now: Double, _ change: (inout OutboxMessage) -> String) throws -> String {
        try queue.write { db in
            guard var message = try OutboxMessage.fetchOne(db, key: id) else { return "message \(id) is gone" }
            let text = change(&message)
            message.updatedAt = now
            try message.update(db)
            var record = JournalRecord(id: nil, time: now, kind: "messages", text: text)
            try record.insert(db)
            return text
        }
    }
}
