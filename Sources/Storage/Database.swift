// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import CSQLite
import SystemCalls
import SystemPackage
import RideGuardCore
import Synchronization

/// One step of the database's schema.
struct SchemaStep: Sendable {
    /// The settings rows naming the newest step (and its release) that older releases cannot read.
    static let requiredStepKey = "schema.required_step"
    static let requiredReleaseKey = "schema.required_release"

    let identifier: String
    let statements: [String]
    /// nil (every step so far): a release that does not know this step still uses the file as it is
    /// (a table or a column it never reads), so going back a version just works. Otherwise the
    /// release that added the step: older ones refuse the file rather than misread it.
    let olderReleasesCannotRead: String?

    init(_ identifier: String, _ statements: [String], olderReleasesCannotRead: String? = nil) {
        self.identifier = identifier
        self.statements = statements
        self.olderReleasesCannotRead = olderReleasesCannotRead
    }
}

/// A database a newer RideGuard changed in a way this one would misread: nothing was written.
package struct DatabaseTooNewError: Error, CustomStringConvertible, Sendable {
    package var path: String
    package var step: String
    package var release: String
    package var newestKnown: String
    package var description: String {
        "the database \(path) was upgraded for RideGuard \(release) (schema step '\(step)'); this older RideGuard knows the schema up to '\(newestKnown)' and would misread it. "
            + "Install RideGuard \(release) or newer again (sudo apt install rideguard), or put back a copy of the file from before the upgrade. The file is left as it is."
    }
}

/// The RideGuard database: one SQLite file, schema versioned with migrations.
package final class RideGuardDatabase: Sendable {
    package let path: String
    /// Opened again when SQLite opened it read-only (a read-only card at start) and the card is
    /// writable since.
    private let connection: Mutex<SQLiteConnection>
    let unsaved = Unsaved()
    /// The file opened, to notice one removed or replaced while the agent runs.
    let opened: (device: dev_t, inode: ino_t)
    /// What was wrong with the file found at `path` (an empty file: contacts and profile gone), said
    /// by the agent at start; also in the journal.
    package let startupProblem: String?
    let contactsRead = Mutex<[Contact]>([])
    /// The recipients of damaged alert rows the outbox set aside, until the sender takes them.
    let setAsideAlerts = Mutex<[String]>([])

    /// Opens (or creates) the database. Whatever the umask, its folder is created 0770 and the file
    /// (with SQLite's side files) is 0660: the service's group (the agent and its web page, `rideguard
    /// web`) shares it, nobody else; a file others could read is tightened, and the journal says so.
    package init(path: String) throws {
        self.path = path
        let folder = FilePath(path).removingLastComponent().string
        if !folder.isEmpty { try PrivateFiles.createFolder(folder, mode: 0o770) }
        var info = stat()
        // SQLite takes an empty file for a new database: one that held the rider's contacts is
        // said out loud, never silently started afresh.
        startupProblem = stat(path, &info) == 0 && info.st_size == 0
            ? "the database \(path) was an empty file (a damaged SD card, or a copy that went wrong): the contacts and the profile are gone; restore a backup or add them again (rideguard contacts add)"
            : nil
        let tightened = try PrivateFiles.protectDatabase(path)
        let connection = try SQLiteConnection(path: path)
        do {
            try Self.migrate(connection, path: path)
        } catch let error as SQLiteError where error.primary == SQLITE_READONLY {
            // A card that turned read-only before an upgrade's first start: what the file holds is
            // read as it is (the alerts need the contacts); the new steps are applied once it is
            // writable again (`reopen`), and what needs them waits in memory meanwhile.
        }
        self.connection = Mutex(connection)
        Self.giveToFolderOwner(path, folder: folder.isEmpty ? "." : folder)
        guard stat(path, &info) == 0 else { throw PrivateFileError(path: path, reason: String(cString: strerror(errno))) }
        opened = (info.st_dev, info.st_ino)
        let now = Date().timeIntervalSince1970
        for change in tightened {
            journal(JournalEntry(.system, "database: tightened \(change): other users could read the contacts and the medical note"), at: now)
        }
        if let startupProblem { journal(JournalEntry(.system, startupProblem), at: now) }
    }

    /// `body` with the connection, alone: one call into SQLite at a time. (Writes go through
    /// `write`, which keeps what the disk refuses.)
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try connection.withLock { connection in try body(connection) }
    }

    /// After SQLITE_READONLY on a filesystem that is writable now: opens the file again.
    func reopen() throws {
        let path = self.path
        let fresh = try SQLiteConnection(path: path)
        try Self.migrate(fresh, path: path)
        connection.withLock { connection in connection = fresh }
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

    /// The schema, one step a version. Applied steps are listed in `grdb_migrations` (the name
    /// the databases made by versions built on GRDB use: their files open as they are).
    static let migrations: [SchemaStep] = [
        SchemaStep("v1 outbox", [
            #"CREATE TABLE "outbox" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "recipient" TEXT NOT NULL, "kind" TEXT NOT NULL, "body" TEXT NOT NULL, "status" TEXT NOT NULL, "attempts" INTEGER NOT NULL DEFAULT 0, "last_error" TEXT, "references" TEXT, "created_at" DOUBLE NOT NULL, "updated_at" DOUBLE NOT NULL, "next_attempt_at" DOUBLE NOT NULL)"#,
            #"CREATE INDEX "outbox_on_status" ON "outbox"("status")"#,
        ]),
        SchemaStep("v2 contacts, profile, journal", [
            #"CREATE TABLE "contacts" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "name" TEXT NOT NULL, "number" TEXT NOT NULL UNIQUE, "created_at" DOUBLE NOT NULL)"#,
            #"CREATE TABLE "settings" ("key" TEXT PRIMARY KEY NOT NULL, "value" TEXT NOT NULL)"#,
            #"CREATE TABLE "journal" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "time" DOUBLE NOT NULL, "kind" TEXT NOT NULL, "text" TEXT NOT NULL)"#,
            #"CREATE INDEX "journal_on_time" ON "journal"("time")"#,
        ]),
        SchemaStep("v3 fleet events", [
            #"CREATE TABLE "events" ("seq" INTEGER PRIMARY KEY AUTOINCREMENT, "time" DOUBLE NOT NULL, "json" TEXT NOT NULL)"#,
        ]),
        SchemaStep("v4 web sessions", [
            #"CREATE TABLE "web_codes" ("code" TEXT PRIMARY KEY NOT NULL, "expires" DOUBLE NOT NULL)"#,
            #"CREATE TABLE "web_sessions" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "token" TEXT NOT NULL UNIQUE, "csrf" TEXT NOT NULL, "created" DOUBLE NOT NULL, "last_seen" DOUBLE NOT NULL, "label" TEXT NOT NULL)"#,
        ]),
        // Whether each contact knows they are one (`ContactStanding`). Older releases read the
        // contacts as before and never look at these columns; contacts they add are 'unasked'.
        SchemaStep("v5 contact standing", [
            #"ALTER TABLE "contacts" ADD COLUMN "standing" TEXT NOT NULL DEFAULT 'unasked'"#,
            #"ALTER TABLE "contacts" ADD COLUMN "standing_since" DOUBLE"#,
            #"ALTER TABLE "contacts" ADD COLUMN "standing_detail" TEXT"#,
        ]),
    ]

    /// Applies the steps the file lacks. An up-to-date file is only read (a card mounted read-only
    /// still opens). A file that a newer release changed in a way this one would misread (a step
    /// it does not know, marked as needing that release) is refused before anything is written:
    /// going back to an older package never damages the database, and the error says what to do.
    /// `steps`: this release's (a test gives a newer release's).
    static func migrate(_ db: SQLiteConnection, path: String, steps: [SchemaStep] = migrations) throws {
        func applied() throws -> Set<String> {
            guard try db.value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'") != nil else { return [] }
            return Set(try db.query("SELECT identifier FROM grdb_migrations").compactMap { $0.first?.text })
        }
        try refuseIfNewer(db, path: path, steps: steps)
        if let done = try? applied(), steps.allSatisfy({ done.contains($0.identifier) }) { return }
        try db.transaction { db in
            try db.execute("CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let done = try applied()
            for step in steps where !done.contains(step.identifier) {
                for statement in step.statements { try db.execute(statement) }
                try db.execute("INSERT INTO grdb_migrations (identifier) VALUES (?)", [SQLValue(step.identifier)])
                if let release = step.olderReleasesCannotRead {
                    try db.setSetting(SchemaStep.requiredStepKey, step.identifier)
                    try db.setSetting(SchemaStep.requiredReleaseKey, release)
                }
            }
        }
    }

    /// Throws `DatabaseTooNewError` when the file needs a step this release does not know.
    static func refuseIfNewer(_ db: SQLiteConnection, path: String, steps: [SchemaStep]) throws {
        guard try db.value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'settings'") != nil,
              let step = try db.setting(SchemaStep.requiredStepKey), !steps.contains(where: { $0.identifier == step }) else { return }
        throw DatabaseTooNewError(path: path, step: step, release: try db.setting(SchemaStep.requiredReleaseKey) ?? "a newer release",
                                  newestKnown: steps.last?.identifier ?? "none")
    }

    package var outbox: Outbox { Outbox(database: self) }
}
