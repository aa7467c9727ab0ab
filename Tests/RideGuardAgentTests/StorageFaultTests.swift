// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardCore
@testable import Storage
import Synchronization
import AgentTestSupport
import RideGuardTestSupport
import Testing
@testable import RideGuardAgent
import SystemCalls
import SystemTime

/// A small tmpfs standing in for the SD card: made read-only, or filled, under a running agent.
final class Card {
    let path: String

    init(megabytes: Int) throws {
        path = Scratch.path("rideguard-card").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.mount(["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0755", "tmpfs", path])
    }

    deinit {
        _ = try? Rideguard.run(["-l", path], program: URL(fileURLWithPath: "/usr/bin/umount"))
        try? FileManager.default.removeItem(atPath: path)
    }

    /// As ext4 does after an error (here with no file open for writing: the kernel refuses that).
    func remount(readOnly: Bool) throws {
        try Self.mount(["-o", readOnly ? "remount,ro" : "remount,rw", path])
    }

    /// Writes zeros until the filesystem is full.
    func fill() {
        let fd = open(path + "/fill", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let block = [UInt8](repeating: 0, count: 4096)
        while write(fd, block, block.count) > 0 {}
        close(fd)
    }

    func free() {
        unlink(path + "/fill")
    }

    private static func mount(_ arguments: [String]) throws {
        let result = try Rideguard.run(arguments, program: URL(fileURLWithPath: "/usr/bin/mount"))
        guard result.status == 0 else { throw MountError(reason: "mount \(arguments.joined(separator: " ")): \(result.stderr)") }
    }
}

struct MountError: Error {
    var reason: String
}

/// Issue 26, points 1 to 4: the alert never waits on the disk.
extension AgentTests {
    /// Point 1: a card read-only when the agent starts. It protects, degraded, and says so; the
    /// crash's alert goes to both contacts; once the card is writable again, what was kept in
    /// memory (the alerts, the journal's crash and countdown lines) is written.
    @Test(.enabled(if: geteuid() == 0, "mounts a tmpfs"), .onOneThread) func aReadOnlyCardStillSendsTheAlert() async throws {
        let card = try Card(megabytes: 4)
        let modem = try FakeModem()
        let folder = try AgentInProcessTests.folder("read-only", database: card.path + "/rideguard.sqlite")
        var configuration = InProcessAgent.configuration(in: folder, playback: 4, modem: modem)
        configuration.database = card.path + "/rideguard.sqlite"
        try card.remount(readOnly: true)
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .armed, limit: 20)
        let armed = try #require(try await AgentTests.status(folder))
        #expect(armed.storageProblem?.contains("read-only filesystem") == true, "\(String(describing: armed.storageProblem))")
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.buzzer == .degraded }, limit: 5)
        try await agent.advance(until: { modem.messages.count >= 2 }, limit: 60)
        #expect(modem.messages.allSatisfy { $0.hasPrefix("Crash! Call me.") })
        #expect(agent.log.contains("storage: the database"), "\(agent.log.text)")

        try card.remount(readOnly: false)
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.storageProblem == nil }, limit: 30)
        await agent.stop()
        let database = try RideGuardDatabase(path: configuration.database)
        let alerts = try database.outbox.all().filter { $0.kind == .alert }
        #expect(alerts.count == 2 && alerts.allSatisfy { $0.status == .sent }, "\(alerts)")
        let journal = try database.journal(limit: 1000).map(\.text)
        #expect(journal.contains { $0.contains("countdown of 10 s started") })
        #expect(journal.contains { $0.contains("crash detected") })
        #expect(journal.contains { $0.contains("storage fault") && $0.contains("read-only") })
        #expect(journal.contains { $0.hasPrefix("sent alert to +33•••••5678") })
    }

    /// Point 2: the card fills up while the agent protects. The alert is sent all the same, no cut
    /// or empty crash trace is left, and no journal line is lost once space is freed.
    @Test(.enabled(if: geteuid() == 0, "mounts a tmpfs"), .onOneThread) func aFullCardStillSendsTheAlertAndLosesNoJournalLine() async throws {
        let card = try Card(megabytes: 4)
        let modem = try FakeModem()
        let folder = try AgentInProcessTests.folder("full", database: card.path + "/rideguard.sqlite")
        var configuration = InProcessAgent.configuration(in: folder, playback: 2, modem: modem)
        configuration.database = card.path + "/rideguard.sqlite"
        let agent = try InProcessAgent(configuration)
        try await agent.advance(untilState: .armed, limit: 20)
        card.fill()                                  // the crash comes at 31 s of trace: 15 s from the start
        try await agent.advance(until: { (try? await AgentTests.status(folder))??.storageProblem?.contains("is full") == true }, limit: 20)
        try await agent.advance(until: { modem.messages.count >= 2 }, limit: 60)
        // The stream ends 15 s after the crash: its trace cannot be written, and leaves nothing.
        try await agent.advance(until: { agent.log.contains("could not save the trace around the crash") }, limit: 40)
        let traces = (try? FileManager.default.contentsOfDirectory(atPath: card.path + "/traces")) ?? []
        #expect(traces.isEmpty, "\(traces)")

        card.free()
        let database = try RideGuardDatabase(path: configuration.database)
        try await agent.advance(until: { ((try? database.journal(limit: 20)) ?? []).contains { $0.text.contains("can be written again") } }, limit: 30)
        await agent.stop()
        let alerts = try database.outbox.all().filter { $0.kind == .alert }
        #expect(alerts.count == 2 && alerts.allSatisfy { $0.status == .sent }, "\(alerts)")
        let journal = try database.journal(limit: 1000).map(\.text)
        for line in ["crash detected", "countdown of 10 s started", "storage fault", "the trace around the crash could not be saved",
                     "can be written again"] {
            #expect(journal.contains { $0.contains(line) }, "\(line)")
        }
    }

    /// Point 3: a damaged contacts page is said, never read as "no emergency contact".
    @Test func aDamagedContactsPageIsNeverReadAsNoContact() throws {
        let rig = try Rig("damaged-contacts")
        try Self.damage(table: "contacts", in: rig.database)
        let log = rig.folder.appendingPathComponent("agent.log").path
        let process = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path], stdout: log, stderr: log)
        defer { process.kill(SIGTERM) }
        try waitFor(20) { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("the contacts cannot be read from \(rig.database)") }
        let agentLog = try String(contentsOfFile: log, encoding: .utf8)
        #expect(!agentLog.contains("no emergency contact"), "\(agentLog)")
        #expect((try status(rig.folder))?.state == .disarmed)
    }

    /// Point 4: a database that cannot be opened sounds the fault pattern (the buzzer comes first),
    /// is tried again every 10 s, and the agent arms as soon as it opens: `rideguard run`'s start.
    @Test(.onOneThread) func anUnopenableDatabaseSoundsTheFaultAndWaits() async throws {
        let folder = try AgentInProcessTests.folder("unopenable", contacts: false)
        let blocked = folder.appendingPathComponent("state").path
        FileManager.default.createFile(atPath: blocked, contents: Data("not a folder".utf8))   // the database's folder is a file
        var configuration = InProcessAgent.configuration(in: folder)
        configuration.database = blocked + "/rideguard.sqlite"
        let clock = ManualClock(now: Date().timeIntervalSince1970)
        let log = LogLines()
        let opening = Task { await Agent.openDatabase(configuration, clock: clock, logger: log.logger) }
        for _ in 0..<200 where !(log.contains("NOT protecting") && log.contains("buzzer: ")) { await clock.advance(by: 0.1) }
        #expect(log.contains("cannot open the database \(configuration.database)"), "\(log.text)")
        #expect(log.contains("buzzer: "), "the fault pattern: \(log.text)")
        await clock.advance(by: 30)
        #expect(log.all.filter { $0.contains("cannot open the database") }.count == 1, "the same reason said again: \(log.text)")

        try FileManager.default.removeItem(atPath: blocked)
        try FileManager.default.createDirectory(atPath: blocked, withIntermediateDirectories: true)
        let contacts = try RideGuardDatabase(path: configuration.database)
        _ = try contacts.addConfirmedContact(name: "Sam", number: "+33612345678", now: clock.now())
        try contacts.setMessage("Crash! Call me.")
        await clock.advance(by: 10)
        let database = try #require(await opening.value)
        #expect(log.contains("the database \(configuration.database) opens now"))
        let agent = try InProcessAgent(configuration, database: database, clock: clock, log: log)
        try await agent.advance(untilState: .armed, limit: 30)
        await agent.stop()
    }

    /// A database written by the versions built on GRDB (its schema as `sqlite_master` holds it,
    /// migrations listed in `grdb_migrations`) opens as it is, even on a read-only card: nothing
    /// is migrated again, the contacts, profile, journal and pending message are read; the steps it
    /// lacks (the fleet's events) are applied once the card is writable again.
    @Test(.enabled(if: geteuid() == 0, "mounts a tmpfs")) func aDatabaseFromTheGRDBVersionsOpensAsItIs() throws {
        let card = try Card(megabytes: 4)
        let path = card.path + "/rideguard.sqlite"
        try SQLiteConnection(path: path).transaction { db in
            for statement in [
                "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)",
                #"CREATE TABLE "outbox" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "recipient" TEXT NOT NULL, "kind" TEXT NOT NULL, "body" TEXT NOT NULL, "status" TEXT NOT NULL, "attempts" INTEGER NOT NULL DEFAULT 0, "last_error" TEXT, "references" TEXT, "created_at" DOUBLE NOT NULL, "updated_at" DOUBLE NOT NULL, "next_attempt_at" DOUBLE NOT NULL)"#,
                #"CREATE INDEX "outbox_on_status" ON "outbox"("status")"#,
                #"CREATE TABLE "contacts" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "name" TEXT NOT NULL, "number" TEXT NOT NULL UNIQUE, "created_at" DOUBLE NOT NULL)"#,
                #"CREATE TABLE "settings" ("key" TEXT PRIMARY KEY NOT NULL, "value" TEXT NOT NULL)"#,
                #"CREATE TABLE "journal" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "time" DOUBLE NOT NULL, "kind" TEXT NOT NULL, "text" TEXT NOT NULL)"#,
                #"CREATE INDEX "journal_on_time" ON "journal"("time")"#,
                "INSERT INTO grdb_migrations VALUES ('v1 outbox'), ('v2 contacts, profile, journal')",
                "INSERT INTO contacts VALUES (1, 'Sam', '+33612345678', 1795617916.861148)",
                "INSERT INTO settings VALUES ('rider_name', 'Alex')",
                "INSERT INTO journal VALUES (1, 1795617916.9, 'system', 'contact added: Sam +33•••••78')",
                "INSERT INTO outbox VALUES (1, '+33612345678', 'test', 'RideGuard test', 'pending', 0, NULL, NULL, 1795617917, 1795617917, 1795617917)",
            ] { try db.execute(statement) }
        }
        chmod(path, 0o600)
        try card.remount(readOnly: true)
        let database = try RideGuardDatabase(path: path)
        #expect(try database.contacts() == [Contact(id: 1, name: "Sam", number: "+33612345678", createdAt: 1795617916.861148)])
        #expect(try database.profile() == RiderProfile(name: "Alex"))
        #expect(try database.journal().map(\.text) == ["contact added: Sam +33•••••78"])
        #expect(try database.outbox.countPending() == 1)
        try card.remount(readOnly: false)
        try database.reopen()
        #expect(try database.addConfirmedContact(name: "Kim", number: "+44 7700 900123", now: 1795617920).id == 2)
        #expect(try SQLiteConnection(path: path).value("SELECT count(*) FROM grdb_migrations")?.integer == Int64(RideGuardDatabase.migrations.count))
        #expect(database.recordEvent("{\"event\":\"armed\",\"t\":1795617921}", at: 1795617921))
    }

    /// Going back a version (issue 41, point 5): a file with a step this release does not know opens
    /// as it is when the newer release marked nothing (a table the older one never reads); one it
    /// marked as needing it is refused before anything is written, and the error names the releases'
    /// schema steps and what to do. The agent, handed it, says so and waits without protecting: no
    /// crash loop under systemd, no file started afresh.
    @Test(.onOneThread) func aDatabaseFromANewerReleaseOpensOrIsRefusedUntouched() async throws {
        let folder = try AgentInProcessTests.folder("newer-release", contacts: false)
        let path = folder.appendingPathComponent("rideguard.sqlite").path
        let made = try RideGuardDatabase(path: path)
        _ = try made.addConfirmedContact(name: "Sam", number: "+33612345678", now: 1795617916)
        try made.setMessage("Crash! Call me.")
        // A newer release's migrations, applied to the file as that release would: first a step that
        // adds a table (older releases read on), then one it marks as needing it.
        let db = try SQLiteConnection(path: path)
        let additive = RideGuardDatabase.migrations + [SchemaStep("v5 rides", ["CREATE TABLE rides (id INTEGER PRIMARY KEY, started DOUBLE NOT NULL)"])]
        try RideGuardDatabase.migrate(db, path: path, steps: additive)
        #expect(try RideGuardDatabase(path: path).contacts().map(\.name) == ["Sam"], "an additive step from a newer release")

        let breaking = additive + [SchemaStep("v6 contacts split", ["ALTER TABLE contacts ADD COLUMN country TEXT"], olderReleasesCannotRead: "0.9.0")]
        try RideGuardDatabase.migrate(db, path: path, steps: breaking)
        try RideGuardDatabase.migrate(db, path: path, steps: breaking)   // the release that made it opens it again
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let refusal = #expect(throws: DatabaseTooNewError.self) { try RideGuardDatabase(path: path) }
        let text = refusal.map { "\($0)" } ?? ""
        for part in ["the database \(path) was upgraded for RideGuard 0.9.0", "schema step 'v6 contacts split'",
                     "knows the schema up to '\(try #require(RideGuardDatabase.migrations.last).identifier)'",
                     "Install RideGuard 0.9.0 or newer again", "The file is left as it is."] {
            #expect(text.contains(part), "\(text)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "nothing written")

        var configuration = InProcessAgent.configuration(in: folder)
        configuration.database = path
        let clock = ManualClock(now: Date().timeIntervalSince1970)
        let log = LogLines()
        let stopping = Atomic<Bool>(false)
        let opening = Task { await Agent.openDatabase(configuration, clock: clock, logger: log.logger) { stopping.load(ordering: .acquiring) } }
        for _ in 0..<200 where !log.contains("NOT protecting") { await clock.advance(by: 0.1) }
        #expect(log.contains("cannot open the database \(path): the database \(path) was upgraded for RideGuard 0.9.0"), "\(log.text)")
        await clock.advance(by: 60)
        stopping.store(true, ordering: .releasing)
        await clock.advance(by: 10)
        #expect(await opening.value == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "nothing written while waiting")
    }

    /// Overwrites the first page of `table` with garbage, as a failing card does.
    static func damage(table: String, in path: String) throws {
        let db = try SQLiteConnection(path: path)
        let page = try #require(try db.value("SELECT rootpage FROM sqlite_master WHERE name = ?", [SQLValue(table)])?.integer)
        let size = try #require(try db.value("PRAGMA page_size")?.integer)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: UInt64((page - 1) * size))
        try handle.write(contentsOf: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }))
        try handle.close()
    }
}

/// Issue 26, point 3, in the database itself.
@Suite struct DamagedDatabaseTests {
    func folder() throws -> String {
        let path = Scratch.path("rideguard-damage").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A contact row holding bytes where its number belongs is said, with its row, never read as
    /// one contact fewer (the agent then treats the contacts as unreadable, as for a damaged page).
    @Test func aDamagedContactRowIsNamed() throws {
        let path = try folder() + "/rideguard.sqlite"
        let database = try RideGuardDatabase(path: path)
        _ = try database.addConfirmedContact(name: "Sam", number: "+33612345678", now: 1)
        _ = try database.addConfirmedContact(name: "Kim", number: "+447700900123", now: 2)
        try SQLiteConnection(path: path).execute("UPDATE contacts SET number = x'00ff' WHERE name = 'Kim'")
        #expect(throws: RecordError(reason: "contact row 2 is damaged (a value that is not what a contact holds): remove it with sqlite3, or restore a backup")) {
            try database.contacts()
        }
    }

    @Test func anEmptyDatabaseFileIsSaidOutLoud() throws {
        let path = try folder() + "/rideguard.sqlite"
        FileManager.default.createFile(atPath: path, contents: Data())
        let database = try RideGuardDatabase(path: path)
        #expect(database.startupProblem?.contains("was an empty file") == true)
        #expect(try database.journal().contains { $0.text.contains("the contacts and the profile are gone") })
        // A new database says nothing of the kind.
        #expect(try RideGuardDatabase(path: try folder() + "/new.sqlite").startupProblem == nil)
    }

    /// A NULL key, a NULL value and a value that is not text (a table edited by hand): passed
    /// over by the agent's reads and by `profile show` and `message show`, never a crash.
    @Test func aDamagedSettingsRowIsPassedOver() throws {
        let path = try folder() + "/rideguard.sqlite"
        let database = try RideGuardDatabase(path: path)
        try database.setRiderName("Alex")
        try SQLiteConnection(path: path).transaction { db in
            // A table edited by hand, its constraints gone.
            try db.execute("ALTER TABLE settings RENAME TO edited")
            try db.execute("CREATE TABLE settings (key, value)")
            try db.execute("INSERT INTO settings SELECT key, value FROM edited")
            try db.execute("DROP TABLE edited")
            try db.execute("INSERT INTO settings (key, value) VALUES (NULL, 'x')")
            try db.execute("INSERT INTO settings (key, value) VALUES ('medical_note', NULL)")
            try db.execute("INSERT INTO settings (key, value) VALUES ('message', x'ff00ff')")
            try db.execute("INSERT INTO settings (key, value) VALUES ('emergency', x'00ff')")
        }
        #expect(try database.profile() == RiderProfile(name: "Alex"))
        #expect(throws: (any Error).self) { try database.emergencySnapshot() }
        for command in [["profile", "show"], ["message", "show"]] {
            let result = try Rideguard.run(command + ["--database", path])
            #expect(result.status == 0, "\(command): \(result.stderr)")
        }
    }

    /// Contacts read once are the ones alerted when their page is damaged later.
    @Test func contactsLastReadAreAlertedWhenThePageIsDamaged() throws {
        let path = try folder() + "/rideguard.sqlite"
        let database = try RideGuardDatabase(path: path)
        try database.addConfirmedContact(name: "Sam", number: "+33612345678", now: 0)
        #expect(try database.contactsToAlert().map(\.number) == ["+33612345678"])
        try AgentTests.damage(table: "contacts", in: path)
        let fresh = try RideGuardDatabase(path: path)
        #expect(throws: (any Error).self) { try fresh.contacts() }
        #expect(throws: (any Error).self) { try fresh.contactsToAlert() }
        #expect(try database.contactsToAlert().map(\.number) == ["+33612345678"])
    }
}

/// Issue 26, point 9: recordings any group member may start are bounded in number, length and disk.
extension AgentTests {
    @Test(.enabled(if: geteuid() == 0, "mounts a tmpfs")) func aRecordingThatWouldFillTheCardIsRefused() throws {
        let card = try Card(megabytes: 16)
        let rig = try Rig("record-room", playback: 0.25, database: card.path + "/rideguard.sqlite")
        let process = try Spawned([Rideguard.binary.path, "run", "--config", rig.config.path])
        defer { process.kill(SIGTERM) }
        try waitForState(rig.folder, "armed", seconds: 20)
        let long = try Rideguard.run(["ctl", "record", "--name", "long", "--duration", "3600", "--socket", rig.socket])
        #expect(long.status != 0)
        #expect(long.stderr.contains("MiB free; this recording needs up to"), "\(long.stderr)")
        let short = try Rideguard.run(["ctl", "record", "--name", "short", "--duration", "2", "--socket", rig.socket])
        #expect(short.status == 0, "\(short.stderr)")
    }
}

@Suite struct RecordingLimitsTests {
    @Test func aFolderWithAHundredRecordingsTakesNoMore() throws {
        let folder = Scratch.path("rideguard-recordings").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let database = try RideGuardDatabase(path: folder + "/db/rideguard.sqlite")
        let recorder = RideGuardAgent.Recorder(folder: folder, rateHz: 400, database: database, clock: SystemServiceClock(), logger: LogLines(level: .trace).logger)
        for i in 0..<99 { FileManager.default.createFile(atPath: folder + "/ride\(i).csv", contents: Data()) }
        #expect(recorder.roomProblem(forSeconds: 60) == nil)
        FileManager.default.createFile(atPath: folder + "/ride99.csv", contents: Data())
        #expect(recorder.roomProblem(forSeconds: 60)?.contains("100 recordings in \(folder) already") == true)
        if case .success = recorder.start(name: "one-more", seconds: 60) { Issue.record("a 101st recording was started") }
        // 2 h at 400 Hz: 220 MiB at most; 10 h would be over what a recording may last at all.
        if case .success = recorder.start(name: "ten-hours", seconds: 36000) { Issue.record("a 10 h recording was started") }
    }
}
