import CSQLite
import Foundation
import LedgerStorage

/// A prepared statement, owned: finalized in `deinit`.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let connection: SQLiteConnection
    /// The SQL text.
    package let sql: String

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw SQLiteError(resultCode: rc, message: connection.lastErrorMessage, sql: sql, path: connection.path)
        }
        self.handle = statement
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and clears its bindings.
    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds values to `?` parameters in order (1-based in SQLite).
    @discardableResult
    package func bind(_ values: SQLiteValue...) throws(SQLiteError) -> SQLiteStatement {
        try bind(values)
    }

    /// Binds an array of values to `?` parameters in order.
    @discardableResult
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) -> SQLiteStatement {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(handle, index)
            case .integer(let i): rc = sqlite3_bind_int64(handle, index, i)
            case .real(let d): rc = sqlite3_bind_double(handle, index, d)
            case .text(let s): rc = Self.bindText(s, to: handle, at: index)
            case .blob(let data):
                rc = data.withUnsafeBytes { buffer in
                    sqlite3_bind_blob64(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                        sqlite3_uint64(buffer.count), seatledger_sqlite_transient())
                }
            }
            guard rc == SQLITE_OK else {
                throw SQLiteError(resultCode: rc, message: connection.lastErrorMessage, sql: sql, path: connection.path)
            }
        }
        return self
    }

    /// Binds `text` with its byte count (SQLite copies it): a NUL inside is kept, not the end of the text.
    private static func bindText(_ text: String, to handle: OpaquePointer, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { chars in
                // An empty buffer may have no address, and a NULL pointer would bind SQL NULL.
                guard let start = chars.baseAddress else {
                    return sqlite3_bind_text64(handle, index, "", 0, seatledger_sqlite_transient(), UInt8(SQLITE_UTF8))
                }
                return sqlite3_bind_text64(handle, index, start, sqlite3_uint64(chars.count), seatledger_sqlite_transient(),
                                           UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Steps once: `true` when a row is available, `false` when done.
    package func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = connection.lastErrorMessage
            sqlite3_reset(handle)
            throw SQLiteError(resultCode: rc, message: message, sql: sql, path: connection.path)
        }
    }

    /// Steps to completion, ignoring rows (for INSERT/UPDATE/DELETE).
    package func run() throws(SQLiteError) {
        while try step() {}
    }

    /// Whether column `index` (0-based) is NULL in the current row.
    package func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Column `index` as an integer.
    package func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` as an optional integer.
    package func optionalInt64(_ index: Int32) -> Int64? { isNull(index) ? nil : int64(index) }

    /// Column `index` as text (empty string for NULL), every byte of it: a NUL inside does not end it.
    package func text(_ index: Int32) -> String {
        // `sqlite3_column_text` first: it converts the value, and then `sqlite3_column_bytes` counts its bytes.
        guard let pointer = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Column `index` as optional text.
    package func optionalText(_ index: Int32) -> String? { isNull(index) ? nil : text(index) }

    /// Column `index` as bytes.
    package func blob(_ index: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: pointer, count: count)
    }

    /// Calls `body` with column `index`'s bytes in place (valid only during the call; no copy).
    package func withBlob<R>(_ index: Int32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Column `index` as optional bytes.
    package func optionalBlob(_ index: Int32) -> Data? { isNull(index) ? nil : blob(index) }
}

/// A value bound to a statement parameter.
package enum SQLiteValue: Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// `.text` or `.null`.
    package static func optional(_ text: String?) -> SQLiteValue { text.map(SQLiteValue.text) ?? .null }
    /// `.integer` or `.null`.
    package static func optional(_ value: Int64?) -> SQLiteValue { value.map(SQLiteValue.integer) ?? .null }
}
