// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import CSQLite
import Synchronization

/// What the agent could not write to its database (a read-only or full SD card): new messages and
/// their outcomes, journal lines and fleet events. Kept in memory, and written first by the next write that works.
final class Unsaved: Sendable {
    struct Content {
        /// By id; a negative id was never written.
        var messages: [Int64: OutboxMessage] = [:]
        /// Journal lines and fleet events, in the order they came.
        var journal: [Line] = []
        /// Journal lines dropped beyond `journalLimit` (said in the journal once it takes lines again).
        var journalLost = 0
        /// Lines ever dropped from the front (never decreases): what a write took from the front
        /// may have gone meanwhile.
        var journalTrimmed = 0
        var nextID: Int64 = -1
        /// Why the last write failed; nil once one works.
        var fault: String?
    }

    /// Hours of an agent's journal: a failing disk never grows memory without bound.
    static let journalLimit = 2000

    /// A journal line or a fleet event.
    enum Line {
        case journal(JournalRecord)
        case event(time: Double, json: String)
    }

    let content = Mutex(Content())

    func keep(_ record: Line) {
        content.withLock { c in
            if c.journal.count >= Self.journalLimit {
                c.journal.removeFirst()
                c.journalLost += 1
                c.journalTrimmed += 1
            }
            c.journal.append(record)
        }
    }

    /// A new message, kept with an id of its own (negative: never written).
    func keepNew(_ message: OutboxMessage) -> OutboxMessage {
        content.withLock { c in
            var message = message
            message.id = c.nextID
            c.nextID -= 1
            c.messages[message.id!] = message
            return message
        }
    }
}

extension RideGuardDatabase {
    /// Every write: what memory holds first, then `body`, in one transaction. When it commits, what
    /// it wrote leaves memory; when it fails, memory keeps it and the failure is remembered.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let (messages, journal, lost, trimmed) = unsaved.content.withLock { c in
            // A message being sent stays in memory until its outcome is known.
            (c.messages.values.filter { $0.status != .sending }.sorted { $0.id! > $1.id! }, c.journal, c.journalLost, c.journalTrimmed)
        }
        do {
            let result = try read { connection in try connection.transaction { db in
                for message in messages {
                    var row = message
                    if row.id! < 0 {
                        row.id = nil
                        try row.insert(db)
                    } else {
                        try row.update(db)
                    }
                }
                for line in journal {
                    switch line {
                    case .journal(var record): try record.insert(db)
                    case .event(let time, let json): try Unsaved.insertEvent(db, time: time, json: json)
                    }
                }
                if lost > 0 {
                    var record = JournalRecord(id: nil, time: Date().timeIntervalSince1970, kind: .system,
                                               text: "\(lost) journal lines and events were lost while the database could not be written")
                    try record.insert(db)
                }
                return try body(db)
            } }
            unsaved.content.withLock { c in
                for message in messages where c.messages[message.id!] == message { c.messages[message.id!] = nil }
                // Those written, less any the limit dropped from the front meanwhile.
                let written = journal.count - (c.journalTrimmed - trimmed)
                c.journal.removeFirst(max(0, min(written, c.journal.count)))
                c.journalLost -= lost
                c.fault = nil
            }
            return result
        } catch {
            unsaved.content.withLock { $0.fault = "\(error)" }
            throw error
        }
    }

    /// Whether the agent can keep its records: the file is still the one it opened, its filesystem
    /// is writable and not full, and the last write worked (what memory holds is written now if it
    /// can be). nil when all is well, else what is wrong and what to do, naming the file.
    package func storageProblem() -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_dev == opened.device, info.st_ino == opened.inode else {
            return "the database \(path) was removed or replaced while the agent runs: what it records now is lost at the next start (restart the agent, then check the contacts)"
        }
        var disk = statvfs()
        if statvfs(path, &disk) == 0 {
            if disk.f_flag & UInt(ST_RDONLY) != 0 {
                return "the database \(path) is on a read-only filesystem (an SD card error? see dmesg): alerts are kept in memory and sent, nothing new is recorded"
            }
            if UInt64(disk.f_bavail) * UInt64(disk.f_frsize) < 64 * 1024 {
                return "the filesystem of \(path) is full: alerts are kept in memory and sent; free some space (old recordings: rideguard records)"
            }
        }
        let waiting = unsaved.content.withLock { !$0.messages.isEmpty || !$0.journal.isEmpty || $0.fault != nil }
        if waiting {
            do { try write { _ in } } catch let error as SQLiteError where error.primary == SQLITE_READONLY {
                // Opened read-only while the card was; it is writable now.
                do {
                    try reopen()
                    try write { _ in }
                } catch {
                    return "the database \(path) cannot be written (\(error)): alerts are kept in memory and sent; check the SD card (dmesg)"
                }
            } catch {
                return "the database \(path) cannot be written (\(error)): alerts are kept in memory and sent; check the SD card (dmesg)"
            }
        }
        return nil
    }
}
