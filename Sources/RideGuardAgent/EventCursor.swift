// SPDX-License-Identifier: Apache-2.0
import Logging
import RideGuardCore
import Storage

/// Where a publisher of the fleet's events (`mqtt`, `traccar`) stands: every event up to `seq` is
/// its receiver's. Saved in the database each time it moves, so that a restart or a power cut
/// sends again only what was not acknowledged; a card that refuses the write is said once, and the
/// cursor goes on in memory (a restart would then send those events again).
struct EventCursor {
    let publisher: String
    private(set) var seq: Int64
    private let database: RideGuardDatabase
    private var trouble: FleetTrouble

    /// The cursor saved, or, for a receiver never used before, the newest event (the past is not
    /// replayed). A database that cannot be read is tried again every 10 s.
    static func start(_ publisher: String, database: RideGuardDatabase, clock: any ServiceClock, logger: Logger) async throws -> EventCursor {
        var trouble = FleetTrouble(publisher, database: database, logger: logger)
        while true {
            do {
                let saved = try database.eventCursor(publisher)
                var cursor = EventCursor(publisher: publisher, seq: try saved ?? database.lastEventSeq(), database: database, trouble: trouble)
                if saved == nil { cursor.save(at: clock.now()) }
                return cursor
            } catch {
                trouble.failed("reading the events", error, at: clock.now())
                try await clock.sleep(until: clock.now() + 10)
            }
        }
    }

    /// The events after `after` (the cursor itself when not given), oldest first, at most `limit`;
    /// none while the database cannot be read (said when it starts and when it is over).
    mutating func events(after: Int64? = nil, limit: Int, at now: Double) -> [StoredEvent] {
        do {
            let events = try database.events(after: after ?? seq, limit: limit)
            trouble.worked("reading the events", at: now)
            return events
        } catch {
            trouble.failed("reading the events", error, at: now)
            return []
        }
    }

    /// Moves the cursor forward to `seq`, and saves it.
    mutating func move(to seq: Int64, at now: Double) {
        guard seq > self.seq else { return }
        self.seq = seq
        save(at: now)
    }

    private mutating func save(at now: Double) {
        do {
            try database.setEventCursor(publisher, seq)
            trouble.worked("saving what its receiver has", at: now)
        } catch {
            trouble.failed("saving what its receiver has", error, at: now)
        }
    }
}

/// A fleet path's failures (a publish, a subscription, the events table), each said in the log and
/// the journal when it starts or its reason changes, not at every retry, and said again when it is
/// over. SMS alerts never depend on them, and the lines say so.
struct FleetTrouble {
    private let publisher: String
    private let database: RideGuardDatabase
    private let logger: Logger
    /// What failed → why, as last said.
    private var said: [String: String] = [:]

    init(_ publisher: String, database: RideGuardDatabase, logger: Logger) {
        self.publisher = publisher
        self.database = database
        self.logger = logger
    }

    mutating func failed(_ what: String, _ error: any Error, at now: Double) {
        let why = "\(error)"
        guard said[what] != why else { return }
        said[what] = why
        let text = "\(publisher): \(what) failed: \(why) (SMS alerts are not affected)"
        logger.warning("\(text)")
        database.journal(JournalEntry(.system, text), at: now)
    }

    mutating func worked(_ what: String, at now: Double) {
        guard said.removeValue(forKey: what) != nil else { return }
        let text = "\(publisher): \(what) works again"
        logger.info("\(text)")
        database.journal(JournalEntry(.system, text), at: now)
    }
}
