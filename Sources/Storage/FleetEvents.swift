// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// A fleet event as the database keeps it: `seq` numbers the device's events (increasing, never
/// reused, kept across restarts: a receiver sees a gap or a duplicate) and `json` is the event less
/// its `seq` (`FleetEvent.json`).
package struct StoredEvent: Equatable, Sendable {
    package var seq: Int64
    package var json: String

    /// As published: the event's object with `seq` added first.
    package var published: String { "{\"seq\":\(seq)," + json.dropFirst() }
}

extension RideGuardDatabase {
    /// Keeps a fleet event for the publishers; when the disk refuses it, memory keeps it with the
    /// journal's lines until a write works. Returns whether it is on disk.
    @discardableResult
    package func recordEvent(_ json: String, at time: Double) -> Bool {
        do {
            try write { db in try Unsaved.insertEvent(db, time: time, json: json) }
            return true
        } catch {
            unsaved.keep(.event(time: time, json: json))
            return false
        }
    }

    /// The events after `seq`, oldest first, at most `limit`.
    package func events(after seq: Int64, limit: Int) throws -> [StoredEvent] {
        try read { db in
            try db.query("SELECT seq, json FROM events WHERE seq > ? ORDER BY seq LIMIT ?", [SQLValue(seq), SQLValue(limit)])
                .compactMap { row in
                    // A damaged row (not what an event holds) is passed over: the seq shows the gap.
                    guard let seq = row[0].integer, let json = row[1].text, json.hasPrefix("{") else { return nil }
                    return StoredEvent(seq: seq, json: json)
                }
        }
    }

    /// The newest event's seq; 0 when there is none.
    package func lastEventSeq() throws -> Int64 {
        try read { db in try db.value("SELECT MAX(seq) FROM events")?.integer ?? 0 }
    }

    /// What a publisher (`mqtt`) had acknowledged by its receiver: the seq up to which every event
    /// is theirs. A new publisher starts at the newest event (it does not replay the past).
    package func eventCursor(_ publisher: String) throws -> Int64? {
        try read { db in try db.setting("cursor." + publisher).flatMap { Int64($0) } }
    }

    package func setEventCursor(_ publisher: String, _ seq: Int64) throws {
        try setSetting("cursor." + publisher, String(seq))
    }

    /// Drops the oldest events after `cursor` beyond `keep` (a broker away for days): returns how
    /// many went.
    package func trimEventBacklog(after cursor: Int64, keep: Int) throws -> Int {
        try write { db in
            try db.execute("""
                DELETE FROM events WHERE seq > ? AND seq <= (SELECT MAX(seq) FROM events) - ?
                """, [SQLValue(cursor), SQLValue(keep)])
            return db.changes
        }
    }
}

extension Unsaved {
    static func insertEvent(_ db: SQLiteConnection, time: Double, json: String) throws {
        try db.execute("INSERT INTO events (time, json) VALUES (?, ?)", [SQLValue(time), SQLValue(json)])
    }
}
