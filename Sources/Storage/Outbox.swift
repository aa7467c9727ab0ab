import FoundationEssentials
import Glibc
import SystemPackage
import GRDB
import RideGuardCore
import Synchronization

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
    /// Opened again when SQLite opened it read-only (a read-only card at start) and the card is
    /// writable since.
    private let current: Mutex<DatabaseQueue>
    var queue: DatabaseQueue { current.withLock { $0 } }
    let unsaved = Unsaved()
    /// The file opened, to notice one removed or replaced while the agent runs.
    let opened: (device: dev_t, inode: ino_t)
    /// What was wrong with the file found at `path` (an empty file: contacts and profile gone), said
    /// by the agent at start; also in the journal.
    public let startupProblem: String?
    let contactsRead = Mutex<[Contact]>([])

    /// Opens (or creates) the database. Whatever the umask, its folder is created 0750 and the file
    /// (with SQLite's side files) is 0600; a looser existing file is tightened, and the journal says so.
    public init(path: String) throws {
        self.path = path
        let folder = FilePath(path).removingLastComponent().string
        if !folder.isEmpty { try PrivateFiles.createFolder(folder) }
        var info = stat()
        // SQLite takes an empty file for a new database: one that held the rider's contacts is
        // said out loud, never silently started afresh.
        startupProblem = stat(path, &info) == 0 && info.st_size == 0
            ? "the database \(path) was an empty file (a damaged SD card, or a copy that went wrong): the contacts and the profile are gone; restore a backup or add them again (rideguard contacts add)"
            : nil
        let tightened = try PrivateFiles.protectDatabase(path)
        let queue = try Self.open(path)
        current = Mutex(queue)
        try Self.migrator.migrate(queue)
        Self.giveToFolderOwner(path, folder: folder.isEmpty ? "." : folder)
        guard stat(path, &info) == 0 else { throw PrivateFileError(path: path, reason: String(cString: strerror(errno))) }
        opened = (info.st_dev, info.st_ino)
        let now = Date().timeIntervalSince1970
        for change in tightened {
            journal(JournalEntry(.system, "database: tightened \(change): other users could read the contacts and the medical note"), at: now)
        }
        if let startupProblem { journal(JournalEntry(.system, startupProblem), at: now) }
    }

    static func open(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// After SQLITE_READONLY on a filesystem that is writable now: opens the file again.
    func reopen() throws {
        let queue = try Self.open(path)
        current.withLock { $0 = queue }
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

    public var outbox: Outbox { Outbox(database: self) }
}

/// The outbox's operations; each is one transaction. The agent's own (`queue`, and what its sender
/// does) never wait on the disk: what it refuses is kept in memory, sent, and written later.
public struct Outbox: Sendable {
    let database: RideGuardDatabase
    private var queue: DatabaseQueue { database.queue }
    private var unsaved: Unsaved { database.unsaved }

    /// Writes a message to send, or throws (the command line's way: it says so and exits).
    @discardableResult
    public func enqueue(recipient: String, kind: String, body: String, now: Double) throws -> OutboxMessage {
        try database.write { db in
            var message = Self.new(recipient: recipient, kind: kind, body: body, now: now)
            try message.insert(db)
            return message
        }
    }

    /// The agent's way: written when the disk allows, otherwise kept in memory and sent all the same.
    @discardableResult
    public func queue(recipient: String, kind: String, body: String, now: Double) -> OutboxMessage {
        do { return try enqueue(recipient: recipient, kind: kind, body: body, now: now) } catch {
            return unsaved.keepNew(Self.new(recipient: recipient, kind: kind, body: body, now: now))
        }
    }

    private static func new(recipient: String, kind: String, body: String, now: Double) -> OutboxMessage {
        OutboxMessage(id: nil, recipient: recipient, kind: kind, body: body, status: .pending, attempts: 0,
                      lastError: nil, references: nil, createdAt: now, updatedAt: now, nextAttemptAt: now)
    }

    /// After a crash or power cut: messages caught mid-send go back to pending (they may go twice,
    /// never zero times). Returns how many.
    @discardableResult
    public func resumeInterrupted(now: Double) throws -> Int {
        try database.write { db in
            try OutboxMessage.filter(Column("status") == OutboxMessage.Status.sending.rawValue)
                .updateAll(db, Column("status").set(to: OutboxMessage.Status.pending.rawValue), Column("updated_at").set(to: now))
        }
    }

    /// The oldest pending message that is due, alerts first (before an answer to a WHERE, a test
    /// SMS), marked `sending` in the same transaction, or in memory when the disk refuses writes.
    public func claimNext(now: Double) throws -> OutboxMessage? {
        let sendingInMemory = unsaved.content.withLock { c in c.messages.values.filter { $0.status == .sending }.map { $0.id! } }
        do {
            return try database.write { db in
                guard var message = try Self.due(now).filter(!sendingInMemory.contains(Column("id")))
                    .order((Column("kind") == MessageKind.alert.rawValue).desc, Column("id")).fetchOne(db) else { return nil }
                message.status = .sending
                message.attempts += 1
                message.updatedAt = now
                try message.update(db)
                return message
            }
        } catch {
            let stored = Result { try queue.read { db in try Self.due(now).fetchAll(db) } }
            return try unsaved.content.withLock { c in
                let candidates = c.messages.values.filter { $0.status == .pending && $0.nextAttemptAt <= now }
                    + ((try? stored.get()) ?? []).filter { c.messages[$0.id!] == nil }
                let alertFirst = { (m: OutboxMessage) in (m.kind == MessageKind.alert.rawValue ? 0 : 1, m.createdAt) }
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

    private static func due(_ now: Double) -> QueryInterfaceRequest<OutboxMessage> {
        OutboxMessage.filter(Column("status") == OutboxMessage.Status.pending.rawValue && Column("next_attempt_at") <= now)
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

    /// Drops messages of `kind` not yet sent (the rider cancelled before they went out). Returns how many.
    @discardableResult
    public func cancelPending(kind: String, now: Double) throws -> Int {
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
        let pending = OutboxMessage.filter(Column("status") == OutboxMessage.Status.pending.rawValue && Column("kind") == kind)
        do {
            return try inMemory + database.write { db in
                try pending.updateAll(db, Column("status").set(to: OutboxMessage.Status.failed.rawValue),
                                      Column("last_error").set(to: "cancelled by the rider"), Column("updated_at").set(to: now))
            }
        } catch {
            let stored = try queue.read { db in try pending.fetchAll(db) }
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

    public func message(_ id: Int64) throws -> OutboxMessage? {
        if let kept = unsaved.content.withLock({ $0.messages[id] }) { return kept }
        return try queue.read { db in try OutboxMessage.fetchOne(db, key: id) }
    }

    /// Every message, with what memory holds in place of what the database says.
    public func all() throws -> [OutboxMessage] {
        merged(try queue.read { db in try OutboxMessage.order(Column("id")).fetchAll(db) })
    }

    /// Alerts not sent yet (pending or being sent): whether every alert went out. One indexed count,
    /// whatever the outbox's history.
    public func alertsWaiting() throws -> Int {
        try waiting(kind: MessageKind.alert.rawValue).count
    }

    /// When the earliest pending message falls due (a retry waiting out its backoff), if any.
    public func nextAttempt() throws -> Double? {
        try waiting().filter { $0.status == .pending }.map(\.nextAttemptAt).min()
    }

    public func countPending() throws -> Int {
        try waiting().count
    }

    /// Pending and sending messages (of `kind`), through the status index.
    private func waiting(kind: String? = nil) throws -> [OutboxMessage] {
        let statuses = [OutboxMessage.Status.pending.rawValue, OutboxMessage.Status.sending.rawValue]
        var request = OutboxMessage.filter(statuses.contains(Column("status")))
        if let kind { request = request.filter(Column("kind") == kind) }
        return merged(try queue.read { db in try request.fetchAll(db) })
            .filter { ($0.status == .pending || $0.status == .sending) && (kind == nil || $0.kind == kind) }
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
                    guard var message = try kept ?? OutboxMessage.fetchOne(db, key: id) else { return "message \(id) is gone" }
                    let text = change(&message)
                    message.updatedAt = now
                    try message.update(db)
                    var record = JournalRecord(id: nil, time: now, kind: "messages", text: text)
                    try record.insert(db)
                    return text
                }
                unsaved.content.withLock { c in if c.messages[id] == kept { c.messages[id] = nil } }
                return text
            } catch {}   // the disk refused it: memory keeps the change
        }
        var message = try kept ?? queue.read { db in try OutboxMessage.fetchOne(db, key: id) }
        guard message != nil else { return "message \(id) is gone" }
        let text = change(&message!)
        message!.updatedAt = now
        unsaved.content.withLock { $0.messages[id] = message }
        unsaved.keep(JournalRecord(id: nil, time: now, kind: "messages", text: text))
        return text
    }
}
