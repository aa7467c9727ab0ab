// SPDX-License-Identifier: Apache-2.0
import Foundation
import RideGuardAgent
import RideGuardCore
@testable import Storage
import RideGuardTestSupport
import Testing
import RideGuardConfig

/// Issue 28, point 3: a bike that rides for years. The alert's path stays bounded however much
/// history the database holds, and old history is pruned.
@Suite struct DatabaseGrowthTests {
    func database() throws -> RideGuardDatabase {
        let folder = Scratch.path("rideguard-growth").path
        return try RideGuardDatabase(path: folder + "/rideguard.sqlite")
    }

    /// 200 000 old messages and 1 000 000 journal lines: every statement the alert's path runs
    /// (queue, claim, mark sent, "every alert out?", what waits, when next, journal, contacts,
    /// profile, the saved emergency) finds its rows through an index or the key, never by reading
    /// the whole table. (A query plan, not a stopwatch: rideguard-bench times the same path.)
    @Test func theAlertsPathNeverReadsTheWholeHistory() throws {
        let database = try database()
        try database.addConfirmedContact(name: "Sam", number: "+33612345678", now: 0)
        try database.addHistory(messages: 200_000, journalLines: 1_000_000)
        #expect(try database.outbox.countPending() == 0 && database.journal(limit: 2).count == 2)
        var statements: [String] = []
        try database.read { db in db.trace = { statements.append($0) } }
        let now = 2_000_000_000.0
        let outbox = database.outbox
        let alert = outbox.queue(recipient: "+33612345678", kind: .alert, body: "Crash!", now: now)
        #expect(alert.id! > 0)
        let claimed = try #require(try outbox.claimNext(now: now))
        try outbox.markSent(claimed.id!, references: [7], now: now)
        #expect(try outbox.countPending() == 0 && outbox.nextAttempt() == nil)
        database.journal(JournalEntry(.alerts, "crash: countdown of 60 s started"), at: now)
        _ = try database.contactsToAlert()
        _ = try database.profile()
        try database.saveEmergencySnapshot("{}")
        _ = try database.emergencySnapshot()
        try database.read { db in db.trace = nil }

        let queries = statements.filter { sql in ["SELECT", "UPDATE", "DELETE", "INSERT"].contains { sql.uppercased().hasPrefix($0) } }
        #expect(queries.count >= 10, "\(statements)")
        for sql in queries {
            let plan = try database.read { db in try db.query("EXPLAIN QUERY PLAN " + sql).compactMap { $0.last?.text } }
            #expect(!plan.contains { $0.hasPrefix("SCAN outbox") || $0.hasPrefix("SCAN journal") }, "\(sql): \(plan)")
        }
    }

    /// Delivered and given-up messages and journal lines older than the cutoff go, in batches;
    /// what waits to be sent stays, however old.
    @Test func pruningKeepsWhatWaitsAndWhatIsRecent() throws {
        let database = try database()
        let outbox = database.outbox
        let old = 1_000.0, recent = 9_000.0
        for i in 0..<7 {
            let message = try outbox.enqueue(recipient: "+33612345678", kind: .locationUpdate, body: "\(i)", now: old)
            try outbox.markSent(message.id!, references: [i], now: old)
        }
        let failed = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "x", now: old)
        try outbox.markFailed(failed.id!, error: "invalid number", now: old)
        let waiting = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "still to send", now: old)
        let fresh = try outbox.enqueue(recipient: "+33612345678", kind: .reply, body: "new", now: recent)
        try outbox.markSent(fresh.id!, references: [9], now: recent)
        for t in [old, old, old, recent] { database.journal(JournalEntry(.system, "at \(t)"), at: t) }

        let pruned = try database.prune(before: 5_000, batch: 3, keepNewest: 0)
        #expect(pruned.messages == 8)
        // The outcomes' own journal lines (markSent/markFailed at `old`) go too: 8 of them, and 3 more.
        #expect(pruned.journal == 11)
        let left = try outbox.all()
        #expect(left.map(\.id) == [waiting.id, fresh.id])
        #expect(try database.journal(limit: 100).map(\.time).allSatisfy { $0 >= 5_000 })
        let again = try database.prune(before: 5_000, batch: 3, keepNewest: 0)
        #expect(again.messages == 0 && again.journal == 0)
    }

    /// A clock set far ahead (a bad GPS time) takes everything for old: the newest rows stay.
    @Test func aClockFarAheadNeverPrunesTheNewestRows() throws {
        let database = try database()
        for i in 0..<5 {
            let message = try database.outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "\(i)", now: 1_000)
            try database.outbox.markSent(message.id!, references: [i], now: 1_000)
        }
        let pruned = try database.prune(before: 4e10, keepNewest: 2)          // the year 3237
        #expect(pruned.messages == 3 && pruned.journal == 3)
        #expect(try database.outbox.all().map(\.body) == ["3", "4"])
        #expect(try database.journal(limit: 10).count == 2)
    }

    /// Journal lines past the memory's limit are counted, and the count is journaled with the rest.
    @Test func journalLinesPastTheLimitAreCountedNotLost() throws {
        let database = try database()
        for i in 0..<(Unsaved.journalLimit + 5) {
            database.unsaved.keep(.journal(JournalRecord(id: nil, time: Double(i), kind: .system, text: "line \(i)")))
        }
        #expect(database.storageProblem() == nil)                                  // writes what memory holds
        let lines = try database.journal(limit: 3000).map(\.text)
        #expect(lines.contains("5 journal lines and events were lost while the database could not be written"))
        #expect(lines.filter { $0.hasPrefix("line ") }.count == Unsaved.journalLimit)
        #expect(database.unsaved.content.withLock { $0.journal.isEmpty && $0.journalLost == 0 })
    }

    @Test func keepDaysIsReadUnderTheDatabase() throws {
        let parsed = try ConfigurationFile.parse("database:\n  path: /var/lib/rideguard/x.sqlite\n  keep_days: 30\n", source: "c")
        #expect(parsed.database == "/var/lib/rideguard/x.sqlite" && parsed.keepDays == 30)
        #expect(try ConfigurationFile.parse("database: /tmp/x.sqlite\n", source: "c").keepDays == 365)
        #expect(throws: ConfigurationFileError.self) { try ConfigurationFile.parse("database:\n  keep_days: 2\n", source: "c") }
        do {
            _ = try ConfigurationFile.parse("database:\n  keep: 30\n", source: "c")
            Issue.record("an unknown key was taken")
        } catch {
            #expect(error.description.contains("c:2: database: unknown key 'keep' (path, keep_days)"), "\(error.description)")
        }
    }
}

/// Issue 28's tidy-up: detector settings in snake_case like every other key; camelCase still works,
/// with a note.
@Suite struct DetectorKeySpellingTests {
    @Test func snakeCaseIsReadAndCamelCaseNoted() throws {
        let snake = try ConfigurationFile.parse("detector:\n  lying_angle_degrees: 63\n", source: "c")
        #expect(snake.detector.lyingAngleDegrees == 63)
        let camel = "detector:\n  lyingAngleDegrees: 64\n"
        #expect(try ConfigurationFile.parse(camel, source: "c").detector.lyingAngleDegrees == 64)
        #expect(ConfigurationFile.notes(camel, source: "c") == [
            "c:2: detector.lyingAngleDegrees: written detector.lying_angle_degrees from now on, as every other key is (this spelling still works)",
        ])
        #expect(ConfigurationFile.notes("detector:\n  lying_angle_degrees: 63\n", source: "c").isEmpty)
        #expect(throws: ConfigurationFileError.self) { try ConfigurationFile.parse("detector:\n  lying_angle: 70\n", source: "c") }
    }
}
