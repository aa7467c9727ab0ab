// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import RideGuardCore

/// A fleet event as the database keeps it: `seq` numbers the device's events (increasing, never
/// reused, kept across restarts: a receiver sees a gap or a duplicate) and `json` is the event less
/// its `seq` (`FleetEvent.json`). What a publisher acts on is read from it here, once, typed.
package struct StoredEvent: Equatable, Sendable {
    package let seq: Int64
    package let json: String
    /// Its name; nil for one this version does not know (published all the same).
    package let name: FleetEvent.Name?
    /// When it happened (Unix seconds).
    package let t: Double
    /// What raised the alert, for `alerting`.
    package let trigger: FleetEvent.Trigger?
    /// The position last known when it happened; nil before the first fix.
    package let place: Place?

    package struct Place: Equatable, Sendable {
        package var latitude: Double
        package var longitude: Double
        /// Metres, when known.
        package var accuracy: Double?
    }

    /// nil for a row that is not an event (damaged): the seq shows the gap.
    package init?(seq: Int64, json: String) {
        struct Wire: Decodable {
            var event: String
            var t: Double
            var trigger: String?
            var lat: Double?
            var lon: Double?
            var accuracy_m: Double?
        }
        guard json.hasPrefix("{"), let wire = try? JSONDecoder().decode(Wire.self, from: Data(json.utf8)) else { return nil }
        self.seq = seq
        self.json = json
        name = FleetEvent.Name(rawValue: wire.event)
        t = wire.t
        trigger = wire.trigger.flatMap(FleetEvent.Trigger.init(rawValue:))
        place = if let lat = wire.lat, let lon = wire.lon { Place(latitude: lat, longitude: lon, accuracy: wire.accuracy_m) } else { nil }
    }

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
                    guard let seq = row[0].integer, let json = row[1].text else { return nil }
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
