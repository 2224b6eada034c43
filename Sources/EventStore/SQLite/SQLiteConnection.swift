import CSQLite
import Foundation
import LedgerStorage

/// One SQLite connection, owned: closed in `deinit`.
///
/// Not thread-safe by itself; the ``EventStore`` that owns it serialises access.
package final class SQLiteConnection {
    let handle: OpaquePointer
    /// The database file path.
    package let path: String
    private var statementCache: [String: SQLiteStatement] = [:]

    /// Opens (or creates, when `create` is true) a database file.
    ///
    /// `immutable` (read-only only): SQLite takes the file as unchanging and uses no lock or
    /// shared-memory file, so a WAL database opens where none can be created (a read-only
    /// directory). Only for a file no one writes while it is open.
    package init(path: String, create: Bool, readOnly: Bool = false, immutable: Bool = false) throws(SQLiteError) {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX
        if readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if create { flags |= SQLITE_OPEN_CREATE }
        }
        var name = path
        if readOnly && immutable {
            flags |= SQLITE_OPEN_URI
            // An absolute path gets an empty authority ("file:///…"): "file://host/…" would read a
            // path starting with "//" as a host name.
            name = (path.hasPrefix("/") ? "file://" : "file:") + Self.uriEscaped(path) + "?immutable=1"
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(resultCode: rc, message: message, path: path)
        }
        sqlite3_extended_result_codes(db, 1)
        // Before any statement runs (the first is `PRAGMA application_id`, which reads the schema
        // and needs a shared lock): without a busy timeout that read fails at once with "database
        // is locked" while another process commits. Callers may set a different timeout afterwards.
        sqlite3_busy_timeout(db, Self.defaultBusyTimeoutMilliseconds)
        self.handle = db
        self.path = path
    }

    /// The busy timeout every connection starts with, set before its first statement.
    package static let defaultBusyTimeoutMilliseconds: Int32 = 30_000

    /// `path` with the characters a `file:` URI gives meaning to percent-encoded.
    static func uriEscaped(_ path: String) -> String {
        var out: [UInt8] = []
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"): out += Array(String(format: "%%%02X", byte).utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(errorMessage)
            throw SQLiteError(resultCode: rc, message: message, sql: sql, path: path)
        }
    }

    /// A prepared statement, cached by its SQL text and reset for reuse.
    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statementCache[sql] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// Whether a transaction is open on this connection.
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`; any thrown error rolls back and is rethrown.
    ///
    /// The only way this codebase opens a write transaction: there are no loose BEGIN/COMMIT pairs.
    package func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        // A cached statement stepped but not finished holds an implicit read snapshot; upgrading
        // it to a write fails with SQLITE_BUSY without consulting the busy timeout. Reset them all.
        resetStatements()
        try beginImmediate()
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// How many times `BEGIN IMMEDIATE` is tried when another process holds the write lock through
    /// a whole busy timeout (a writer committing batch after batch takes the lock back between
    /// the busy handler's polls, so one timeout is not a fair chance).
    package var beginAttempts = 20

    /// `BEGIN IMMEDIATE`, tried again after a short random pause while the database stays busy.
    private func beginImmediate() throws(SQLiteError) {
        var attempt = 1
        while true {
            do {
                try execute("BEGIN IMMEDIATE")
                return
            } catch where error.isBusy && attempt < beginAttempts {
                attempt += 1
                usleep(UInt32.random(in: 1_000...50_000))
            }
        }
    }

    /// Runs `body` inside a deferred read transaction so every read sees one snapshot.
    ///
    /// Inside a transaction already open on this connection (a read job of the ledger pool runs
    /// in one snapshot and may call a read that takes its own), `body` joins it: it reads that
    /// transaction's snapshot, and the outer transaction ends it.
    package func readTransaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return try body() }
        resetStatements()
        try execute("BEGIN DEFERRED")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Resets every cached statement so none holds a read snapshot open.
    package func resetStatements() {
        for statement in statementCache.values { statement.reset() }
    }

    /// The rowid of the last inserted row.
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last statement.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Sets how long a writer waits for another connection's lock before `SQLITE_BUSY`.
    package func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Reads a single integer, e.g. `PRAGMA user_version`.
    package func scalarInt(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// Reads a single text value, e.g. `PRAGMA journal_mode`.
    package func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.text(0)
    }

    /// Whether this connection can write.
    package var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }
}
