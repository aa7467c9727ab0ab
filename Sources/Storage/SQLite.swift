// SPDX-License-Identifier: Apache-2.0
import CSQLite

/// A value going into SQLite or coming out of it.
enum SQLValue: Equatable, Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByNilLiteral {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    init(stringLiteral value: String) { self = .text(value) }
    init(integerLiteral value: Int64) { self = .integer(value) }
    init(floatLiteral value: Double) { self = .real(value) }
    init(nilLiteral: ()) { self = .null }
    init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    init(_ value: Double) { self = .real(value) }
    init(_ value: Int) { self = .integer(Int64(value)) }
    init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }

    /// Text only: a row edited by hand to hold a number or bytes where text belongs reads as nil.
    var text: String? { if case .text(let text) = self { text } else { nil } }
    var integer: Int64? {
        switch self {
        case .integer(let n): n
        case .real(let x) where x == x.rounded() && abs(x) < 9e18: Int64(x)
        default: nil
        }
    }
    var real: Double? {
        switch self {
        case .real(let x): x
        case .integer(let n): Double(n)
        default: nil
        }
    }
}

/// What SQLite refused: its result code, its words, and the statement.
struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The extended result code (SQLITE_READONLY_DBMOVED, …); `primary` is its low byte.
    var code: Int32
    var message: String
    var sql: String?

    var primary: Int32 { code & 0xff }
    var description: String { "SQLite error \(primary): \(message)" + (sql.map { " (while running \($0))" } ?? "") }
}

/// One connection to one SQLite file. Statements are prepared, bound and finalised here; nothing
/// else touches the C API. Sendable because it is used by one thread at a time: its one owner,
/// `RideGuardDatabase`, holds it behind a Mutex (SQLite itself is opened without its own locks).
final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Each statement's SQL as it runs, with its arguments in place (tests read the query plans).
    var trace: ((String) -> Void)?

    /// Opens or creates `path`. A writer waits up to `busySeconds` for another process's
    /// transaction (the command line beside the agent) before SQLITE_BUSY.
    init(path: String, busySeconds: Double = 5) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: result, message: message)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, Int32(busySeconds * 1000))
        do { try execute("PRAGMA foreign_keys = ON") } catch {
            sqlite3_close_v2(handle)
            throw error
        }
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one statement; its rows, each column's value in order.
    @discardableResult
    func query(_ sql: String, _ arguments: [SQLValue] = []) throws(SQLiteError) -> [[SQLValue]] {
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK, let statement else { throw failure(prepared, sql) }
        defer { sqlite3_finalize(statement) }
        guard Int(sqlite3_bind_parameter_count(statement)) == arguments.count else {
            throw SQLiteError(code: SQLITE_RANGE, message: "\(arguments.count) arguments for \(sqlite3_bind_parameter_count(statement)) parameters", sql: sql)
        }
        for (index, value) in arguments.enumerated() {
            let position = Int32(index + 1)
            let bound: Int32 = switch value {
            case .null: sqlite3_bind_null(statement, position)
            case .integer(let n): sqlite3_bind_int64(statement, position, n)
            case .real(let x): sqlite3_bind_double(statement, position, x)
            case .text(let text): rg_sqlite3_bind_text(statement, position, text, Int32(text.utf8.count))
            case .blob(let bytes): rg_sqlite3_bind_blob(statement, position, bytes, Int32(bytes.count))
            }
            guard bound == SQLITE_OK else { throw failure(bound, sql) }
        }
        if let trace, let expanded = sqlite3_expanded_sql(statement) {
            trace(String(cString: expanded))
            sqlite3_free(expanded)
        }
        var rows: [[SQLValue]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else { throw failure(step, sql) }
            rows.append((0..<sqlite3_column_count(statement)).map { column in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: .real(sqlite3_column_double(statement, column))
                // NULL only when SQLite ran out of memory converting it: read as no value.
                case SQLITE_TEXT: sqlite3_column_text(statement, column).map { .text(String(cString: $0)) } ?? .null
                case SQLITE_BLOB:
                    .blob(Array(UnsafeRawBufferPointer(start: sqlite3_column_blob(statement, column),
                                                       count: Int(sqlite3_column_bytes(statement, column)))))
                default: .null
                }
            })
        }
    }

    /// Runs one statement that returns no rows.
    func execute(_ sql: String, _ arguments: [SQLValue] = []) throws(SQLiteError) {
        try query(sql, arguments)
    }

    /// The first column of the first row, if any.
    func value(_ sql: String, _ arguments: [SQLValue] = []) throws(SQLiteError) -> SQLValue? {
        try query(sql, arguments).first?.first
    }

    /// Rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int { Int(sqlite3_changes(handle)) }
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// `body` in one transaction, taken for writing at once (BEGIN IMMEDIATE: another process's
    /// writer makes it wait at the start, never fail halfway); rolled back when it throws.
    func transaction<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body(self)
            try execute("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    private func failure(_ code: Int32, _ sql: String) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        return SQLiteError(code: extended & 0xff == code & 0xff ? extended : code, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}
