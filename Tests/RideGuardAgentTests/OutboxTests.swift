// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import RideGuardAgent
@testable import Storage
import Synchronization
import RideGuardTestSupport
import Testing
import SystemCalls
import SystemTime

/// The outbox on SQLite on disk.
@Suite struct OutboxTests {
    @Test func anAlertGoesBeforeMessagesQueuedEarlier() throws {
        let database = try RideGuardDatabase(path: Scratch.path("rideguard-outbox-order.sqlite").path)
        let outbox = database.outbox
        _ = try outbox.enqueue(recipient: "+33612345678", kind: .reply, body: "where answer", now: 1)
        _ = try outbox.enqueue(recipient: "+33612345678", kind: .locationUpdate, body: "update", now: 2)
        _ = try outbox.enqueue(recipient: "+4915112345678", kind: .alert, body: "crash", now: 3)
        _ = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "crash", now: 4)
        var order: [String] = []
        while let message = try outbox.claimNext(now: 10) { order.append("\(message.kind) \(message.recipient)") }
        #expect(order == ["alert +4915112345678", "alert +33612345678", "reply +33612345678", "location_update +33612345678"])
    }

    /// Kinds are enums (`OutboxKind`, `JournalKind`), stored by name. One written by a newer release
    /// (or by hand) is kept as it is: its message is still sent, after the alerts, and its journal
    /// line reads as the agent's own with the unknown kind at its head.
    @Test func kindsANewerReleaseWroteAreKeptAndSent() throws {
        let path = Scratch.path("rideguard-kinds.sqlite").path
        let database = try RideGuardDatabase(path: path)
        for kind in [OutboxKind.alert, .locationUpdate, .allClear, .parkedFall, .reply, .test, .manual] {
            #expect(OutboxKind(rawValue: kind.rawValue) == kind)
        }
        #expect(OutboxKind(.locationUpdate).rawValue == "location_update")
        let newer = try #require(try database.outbox.enqueue(recipient: "+33612345678", kind: .reply, body: "later", now: 1).id)
        _ = try database.outbox.enqueue(recipient: "+4915112345678", kind: .alert, body: "crash", now: 2)
        try SQLiteConnection(path: path).execute("UPDATE outbox SET kind = 'fleet_digest' WHERE id = ?", [SQLValue(newer)])
        try SQLiteConnection(path: path).execute("INSERT INTO journal (time, kind, text) VALUES (5, 'audit', 'checked by a newer release')")
        #expect(try database.outbox.claimNext(now: 10)?.kind == .alert)
        let kept = try #require(try database.outbox.claimNext(now: 10))
        #expect(kept.kind == .other("fleet_digest") && kept.kind.rawValue == "fleet_digest" && kept.body == "later")
        let line = try #require(try database.journal(since: 5).first)
        #expect(line.kind == .system && line.text == "(audit) checked by a newer release")
        #expect(try database.journal(kind: .alerts, since: 5).isEmpty)
    }

    /// A due alert whose body was damaged (a blob where text must be) is set aside, failed and
    /// journaled with its id: the alert after it still goes, and the damaged one never blocks again.
    @Test func aDamagedRowIsSetAsideAndTheNextAlertGoes() throws {
        let path = Scratch.path("rideguard-outbox-damaged.sqlite").path
        let database = try RideGuardDatabase(path: path)
        let outbox = database.outbox
        let damaged = try #require(try outbox.enqueue(recipient: "+4915112345678", kind: .alert, body: "crash", now: 1).id)
        _ = try outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "crash", now: 2)
        try SQLiteConnection(path: path).execute("UPDATE outbox SET body = x'00ff' WHERE id = ?", [SQLValue(damaged)])
        let next = try #require(try outbox.claimNext(now: 10))
        #expect(next.recipient == "+33612345678")
        #expect(try outbox.claimNext(now: 10) == nil)
        let lines = try database.journal(kind: .messages).map(\.text)
        #expect(lines.filter { $0.hasPrefix("outbox message \(damaged) is damaged") }.count == 1, "\(lines)")
        let status = try SQLiteConnection(path: path).query("SELECT status FROM outbox WHERE id = ?", [SQLValue(damaged)]).first?.first?.text
        #expect(status == "failed")
        #expect(outbox.takeSetAsideAlerts() == ["+4915112345678"])
        #expect(outbox.takeSetAsideAlerts().isEmpty, "taken once")
    }

    /// The emergency awaits every contact an alert was queued for: a damaged alert set aside is
    /// settled as failed for its contact, as a number the network refuses is (before, it was never
    /// settled and the emergency waited for it until the network-failure time, 15 minutes).
    @Test func aDamagedAlertSetAsideIsSettledAsFailed() async throws {
        let path = Scratch.path("rideguard-outbox-settled.sqlite").path
        let database = try RideGuardDatabase(path: path)
        let damaged = try #require(try database.outbox.enqueue(recipient: "+4915112345678", kind: .alert, body: "crash", now: 1).id)
        _ = try database.outbox.enqueue(recipient: "+33612345678", kind: .alert, body: "crash", now: 2)
        try SQLiteConnection(path: path).execute("UPDATE outbox SET body = x'00ff' WHERE id = ?", [SQLValue(damaged)])
        let settled = Mutex<[String]>([])
        let clock = SystemServiceClock()
        let sender = OutboxSender(outbox: database.outbox, modem: SimulatedTransport(clock: clock, logger: Logger(label: "test")),
                                  clock: clock, logger: Logger(label: "test"), onOutcome: { kind, recipient, outcome in
            let sent = if case .sent = outcome { true } else { false }
            settled.withLock { $0.append("\(kind) \(recipient) \(sent ? "sent" : "failed")") }
        })
        #expect(try await sender.sendDue() == 0)
        #expect(settled.withLock { $0 } == ["alert +4915112345678 failed", "alert +33612345678 sent"])
    }
}
