// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// When the self-test SMS last went out, was last queued, and what stopped the last one (kept in
/// the settings, so that a restart neither sends one again at once nor forgets that one failed).
package struct SelfTestRecord: Equatable, Sendable {
    /// When the agent first ran with self-tests: the first is due `self_test_days` after it.
    package var firstRun: Double?
    package var lastSent: Double?
    package var lastQueued: Double?
    /// Why the last one could not be sent; nil once one went out.
    package var problem: String?
}

extension RideGuardDatabase {
    package func selfTestRecord() throws -> SelfTestRecord {
        try read { db in
            func time(_ key: String) throws -> Double? { try db.setting(key).flatMap(Double.init) }
            return SelfTestRecord(firstRun: try time("selftest.first_run"), lastSent: try time("selftest.last_sent"),
                                  lastQueued: try time("selftest.last_queued"), problem: try db.setting("selftest.problem"))
        }
    }

    /// Notes the first run, once.
    package func noteSelfTestFirstRun(_ now: Double) throws {
        try write { db in
            if try db.setting("selftest.first_run") == nil { try db.setSetting("selftest.first_run", String(now)) }
        }
    }

    /// Queues the report to the rider's phone, and notes when.
    package func queueSelfTest(to number: String, body: String, now: Double) throws {
        try write { db in
            var message = Outbox.new(recipient: number, kind: .selfTest, body: body, now: now)
            try message.insert(db)
            try db.setSetting("selftest.last_queued", String(now))
            var entry = JournalRecord(id: nil, time: now, kind: .messages, text: "self-test SMS queued to the rider's phone (\(PhoneNumber.mask(number)))")
            try entry.insert(db)
        }
    }

    /// The self-test went out (`problem` nil), or could not (`problem` says why).
    package func noteSelfTest(sentAt now: Double?, problem: String?) throws {
        try write { db in
            if let now { try db.setSetting("selftest.last_sent", String(now)) }
            if let problem { try db.setSetting("selftest.problem", problem) } else {
                try db.execute("DELETE FROM settings WHERE key = 'selftest.problem'")
            }
        }
    }

    /// The last crash the detector raised (its journal line's time), or nil when none ever was.
    /// Newest first along the journal's time index: a recent crash is found at once, not after a
    /// scan of a journal of a million lines.
    package func lastCrashDetected() throws -> Double? {
        try read { db in
            try db.value("SELECT time FROM journal WHERE kind = ? AND text LIKE 'crash detected%' ORDER BY time DESC LIMIT 1",
                         [SQLValue(JournalKind.detections.rawValue)])?.real
        }
    }
}
