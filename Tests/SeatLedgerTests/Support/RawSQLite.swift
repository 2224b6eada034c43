import CSQLite
import Foundation

/// A plain second SQLite connection to a ledger file, bypassing SeatLedger entirely — the
/// "another tool" of tamper tests (run SQL, drop triggers, edit rows).
final class RawSQLite {
    /// A value to bind to a `?` parameter.
    enum Value {
        case integer(Int64)
        case text(String)
        case blob(Data)
        case null
    }

    /// A failed SQLite call, with SQLite's own message (e.g. a trigger's RAISE text).
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        let message: String
        var description: String { "SQLite error \(code): \(message)" }
    }

    private var handle: OpaquePointer?

    /// Opens `path` (which must exist unless `create`).
    init(path: String, create: Bool = false, readOnly: Bool = false) throws {
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        handle = db
        guard rc == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            handle = nil
            throw Failure(code: rc, message: message)
        }
        sqlite3_busy_timeout(db, 10_000)
    }

    deinit { close() }

    /// Closes the connection (also done on deinit).
    func close() {
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs one or more statements without parameters.
    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(error)
            throw Failure(code: rc, message: message)
        }
    }

    /// Runs one statement with parameters; returns the number of rows changed.
    @discardableResult
    func execute(_ sql: String, _ values: [Value]) throws -> Int {
        try withStatement(sql, values) { statement in
            while true {
                let rc = sqlite3_step(statement)
                if rc == SQLITE_DONE { break }
                if rc != SQLITE_ROW { throw Failure(code: rc, message: String(cString: sqlite3_errmsg(handle))) }
            }
            return Int(sqlite3_changes(handle))
        }
    }

    /// The first column of the first row as an integer (`nil` for no row or NULL).
    func scalarInt(_ sql: String, _ values: [Value] = []) throws -> Int64? {
        try withStatement(sql, values) { statement in
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return nil }
            guard rc == SQLITE_ROW else { throw Failure(code: rc, message: String(cString: sqlite3_errmsg(handle))) }
            return sqlite3_column_type(statement, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, 0)
        }
    }

    /// The first column of the first row as bytes (`nil` for no row or NULL).
    func scalarBlob(_ sql: String, _ values: [Value] = []) throws -> Data? {
        try withStatement(sql, values) { statement in
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return nil }
            guard rc == SQLITE_ROW else { throw Failure(code: rc, message: String(cString: sqlite3_errmsg(handle))) }
            if sqlite3_column_type(statement, 0) == SQLITE_NULL { return nil }
            let count = Int(sqlite3_column_bytes(statement, 0))
            guard count > 0, let bytes = sqlite3_column_blob(statement, 0) else { return Data() }
            return Data(bytes: bytes, count: count)
        }
    }

    private func withStatement<T>(_ sql: String, _ values: [Value], _ body: (OpaquePointer?) throws -> T) throws -> T {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK else { throw Failure(code: rc, message: String(cString: sqlite3_errmsg(handle))) }
        defer { sqlite3_finalize(statement) }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let bound: Int32
            switch value {
            case .integer(let number): bound = sqlite3_bind_int64(statement, index, number)
            case .text(let text): bound = sqlite3_bind_text(statement, index, text, -1, seatledger_sqlite_transient())
            case .blob(let data):
                bound = data.withUnsafeBytes { raw in
                    sqlite3_bind_blob(statement, index, raw.baseAddress, Int32(raw.count), seatledger_sqlite_transient())
                }
            case .null: bound = sqlite3_bind_null(statement, index)
            }
            guard bound == SQLITE_OK else { throw Failure(code: bound, message: String(cString: sqlite3_errmsg(handle))) }
        }
        return try body(statement)
    }
}
