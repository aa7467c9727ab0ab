// SPDX-License-Identifier: Apache-2.0
import RideGuardCore

/// A phone paired with the web page (`rideguard web`): its cookie's token, the token its forms
/// must carry (CSRF), when it was paired and last seen, and what it said it was (User-Agent).
package struct WebSession: Equatable, Sendable {
    package var id: Int64
    package var token: String
    package var csrf: String
    package var created: Double
    package var lastSeen: Double
    package var label: String
}

/// Pairing codes and sessions of the web page. A code is single-use and lives 10 minutes; a session
/// lives until revoked or unused for `maxIdle` seconds.
extension RideGuardDatabase {
    package static let pairingCodeLifetime = 600.0

    /// A new one-time code, valid 10 minutes: 12 characters from an alphabet without look-alikes
    /// (60 bits; wrong guesses are also rate-limited by the server).
    package func newPairingCode(now: Double) throws -> String {
        let code = Self.randomToken(length: 12, alphabet: Array("abcdefghjkmnpqrstuvwxyz23456789"))
        try write { db in
            try db.execute("DELETE FROM web_codes WHERE expires <= ?", [SQLValue(now)])
            try db.execute("INSERT INTO web_codes (code, expires) VALUES (?, ?)", [SQLValue(code), SQLValue(now + Self.pairingCodeLifetime)])
            var entry = JournalRecord(id: nil, time: now, kind: .system, text: "web: a pairing code was made (valid 10 minutes)")
            try entry.insert(db)
        }
        return code
    }

    /// Spends a code: a new session when it exists and has not expired, nil otherwise. A code works
    /// once, whatever happens next. One made "in the future" (the clock set back since: a Pi without
    /// a real-time clock) counts as expired, never as living longer. Sessions idle longer than
    /// `maxIdle` are cleared on the way.
    package func redeemPairingCode(_ code: String, label: String, now: Double, maxIdle: Double) throws -> WebSession? {
        try write { db in
            try db.execute("DELETE FROM web_sessions WHERE last_seen < ?", [SQLValue(now - maxIdle)])
            guard let expires = try db.value("SELECT expires FROM web_codes WHERE code = ?", [SQLValue(code)])?.real else { return nil }
            try db.execute("DELETE FROM web_codes WHERE code = ?", [SQLValue(code)])
            guard expires > now, expires - now <= Self.pairingCodeLifetime else { return nil }
            let session = WebSession(id: 0, token: Self.randomToken(length: 43), csrf: Self.randomToken(length: 43),
                                     created: now, lastSeen: now, label: String(label.printable(limit: 120)))
            try db.execute("INSERT INTO web_sessions (token, csrf, created, last_seen, label) VALUES (?, ?, ?, ?, ?)",
                           [SQLValue(session.token), SQLValue(session.csrf), SQLValue(now), SQLValue(now), SQLValue(session.label)])
            var paired = session
            paired.id = db.lastInsertedRowID
            var entry = JournalRecord(id: nil, time: now, kind: .system, text: "web: a phone was paired (session \(paired.id), \(paired.label))")
            try entry.insert(db)
            return paired
        }
    }

    /// The session whose cookie this is, unless revoked or idle longer than `maxIdle`; its last use
    /// is noted (at most once a minute: a page polling its status writes nothing).
    package func webSession(token: String, now: Double, maxIdle: Double) throws -> WebSession? {
        guard !token.isEmpty else { return nil }
        guard let session = try read({ db in
            try db.query("SELECT id, token, csrf, created, last_seen, label FROM web_sessions WHERE token = ?", [SQLValue(token)])
                .compactMap(Self.session).first
        }) else { return nil }
        guard now - session.lastSeen <= maxIdle else { return nil }
        if now - session.lastSeen > 60 {
            try? write { db in try db.execute("UPDATE web_sessions SET last_seen = ? WHERE id = ?", [SQLValue(now), SQLValue(session.id)]) }
        }
        return session
    }

    /// Every session, newest first.
    package func webSessions() throws -> [WebSession] {
        try read { db in
            try db.query("SELECT id, token, csrf, created, last_seen, label FROM web_sessions ORDER BY id DESC").compactMap(Self.session)
        }
    }

    /// Ends a session (its phone must pair again); false when there is none with this id.
    @discardableResult
    package func revokeWebSession(_ id: Int64, now: Double) throws -> Bool {
        try write { db in
            try db.execute("DELETE FROM web_sessions WHERE id = ?", [SQLValue(id)])
            guard db.changes > 0 else { return false }
            var entry = JournalRecord(id: nil, time: now, kind: .system, text: "web: session \(id) revoked")
            try entry.insert(db)
            return true
        }
    }

    private static func session(_ row: [SQLValue]) -> WebSession? {
        guard let id = row[0].integer, let token = row[1].text, let csrf = row[2].text, let created = row[3].real,
              let lastSeen = row[4].real else { return nil }
        return WebSession(id: id, token: token, csrf: csrf, created: created, lastSeen: lastSeen, label: row[5].text ?? "")
    }

    /// From the system's cryptographic generator (getrandom on Linux).
    static func randomToken(length: Int, alphabet: [Character] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
