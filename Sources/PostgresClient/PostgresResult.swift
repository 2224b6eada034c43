import CLibPQ
import Foundation

/// The rows (or command status) of one statement, owned: freed with `PQclear` in `deinit`.
///
/// A collection of ``PostgresRow``s. Accessors decode by the column's format (text or binary,
/// as requested from the query) and type OID, and throw a `.decoding` ``PostgresError`` for a
/// NULL, a type they cannot read, or an index out of range.
public final class PostgresResult: RandomAccessCollection {
    let handle: OpaquePointer
    /// The statement that produced the result.
    public let sql: String
    /// The number of rows.
    public let rowCount: Int
    /// The number of columns.
    public let columnCount: Int
    /// The column names, in order.
    public let columnNames: [String]

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
        rowCount = Int(PQntuples(handle))
        columnCount = Int(PQnfields(handle))
        columnNames = (0..<Int32(columnCount)).map { PQfname(handle, $0).map { String(cString: $0) } ?? "" }
    }

    deinit { PQclear(handle) }

    /// The first row index (always 0).
    public var startIndex: Int { 0 }
    /// One past the last row index (``rowCount``).
    public var endIndex: Int { rowCount }
    /// The row at `index`.
    public subscript(index: Int) -> PostgresRow { PostgresRow(result: self, index: index) }

    /// The command tag, e.g. `INSERT 0 3`, `SELECT 2`, `COMMIT`.
    public var commandTag: String { String(cString: PQcmdStatus(handle)) }

    /// Rows inserted, updated, deleted, selected or copied; `nil` for commands that report none.
    public var affectedRows: Int64? { Int64(String(cString: PQcmdTuples(handle))) }

    /// The index of the column named exactly `name` (case-sensitive), if any.
    public func columnIndex(named name: String) -> Int? { columnNames.firstIndex(of: name) }

    /// The type OID of `column`.
    public func columnType(_ column: Int) -> UInt32 { PQftype(handle, Int32(column)) }

    /// The format (text or binary) `column` was returned in.
    public func columnFormat(_ column: Int) -> PostgresFormat {
        PQfformat(handle, Int32(column)) == 1 ? .binary : .text
    }

    /// Whether the value at (`row`, `column`) is NULL.
    public func isNull(row: Int, column: Int) throws(PostgresError) -> Bool {
        try checkBounds(row: row, column: column)
        return PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// The value at (`row`, `column`) as an integer (`int2`, `int4`, `int8`, `oid`, or decimal text).
    public func int64(row: Int, column: Int) throws(PostgresError) -> Int64 {
        let bytes = try value(row: row, column: column, wanted: "int64")
        let type = columnType(column)
        if columnFormat(column) == .text {
            guard let integer = Int64(String(decoding: bytes, as: UTF8.self)) else {
                throw decodingError("\(String(decoding: bytes, as: UTF8.self).debugDescription) is not a 64-bit integer", row: row, column: column)
            }
            return integer
        }
        switch (type, bytes.count) {
        case (PostgresTypeOID.int8, 8): return Int64(bigEndian: Self.load(Int64.self, bytes))
        case (PostgresTypeOID.int4, 4): return Int64(Int32(bigEndian: Self.load(Int32.self, bytes)))
        case (PostgresTypeOID.int2, 2): return Int64(Int16(bigEndian: Self.load(Int16.self, bytes)))
        case (PostgresTypeOID.oid, 4): return Int64(UInt32(bigEndian: Self.load(UInt32.self, bytes)))
        default: throw decodingError("binary type OID \(type) (\(bytes.count) bytes) is not an integer type", row: row, column: column)
        }
    }

    /// The value at (`row`, `column`) as text (any type in text format; text-like types and jsonb in binary).
    public func text(row: Int, column: Int) throws(PostgresError) -> String {
        let bytes = try value(row: row, column: column, wanted: "text")
        let type = columnType(column)
        if columnFormat(column) == .text || PostgresTypeOID.textLike.contains(type) {
            return String(decoding: bytes, as: UTF8.self)
        }
        if type == PostgresTypeOID.jsonb, bytes.first == 1 {  // binary jsonb: version byte 1, then the text
            return String(decoding: bytes.dropFirst(), as: UTF8.self)
        }
        throw decodingError("binary type OID \(type) has no text form here; query with resultFormat: .text", row: row, column: column)
    }

    /// The value at (`row`, `column`) as bytes (a `bytea` column: unescaped in text format, raw in binary).
    public func bytea(row: Int, column: Int) throws(PostgresError) -> Data {
        let bytes = try value(row: row, column: column, wanted: "bytea")
        let type = columnType(column)
        guard type == PostgresTypeOID.bytea else {
            throw decodingError("type OID \(type) is not bytea", row: row, column: column)
        }
        if columnFormat(column) == .binary { return Data(bytes) }
        // Text format: "\x0a1b…" (hex, the default since 9.0) or the old escape format; libpq reads both.
        guard let raw = PQgetvalue(handle, Int32(row), Int32(column)) else {
            throw decodingError("no value", row: row, column: column)
        }
        var length = 0
        guard let unescaped = raw.withMemoryRebound(to: UInt8.self, capacity: bytes.count + 1, { PQunescapeBytea($0, &length) }) else {
            throw decodingError("PQunescapeBytea failed (out of memory or malformed bytea text)", row: row, column: column)
        }
        defer { PQfreemem(unescaped) }
        return Data(bytes: unescaped, count: length)
    }

    /// The value at (`row`, `column`) as a boolean (`bool`: `t`/`f` in text, one byte in binary).
    public func bool(row: Int, column: Int) throws(PostgresError) -> Bool {
        let bytes = try value(row: row, column: column, wanted: "bool")
        if columnFormat(column) == .binary, columnType(column) == PostgresTypeOID.bool, bytes.count == 1 {
            return bytes[bytes.startIndex] != 0
        }
        switch String(decoding: bytes, as: UTF8.self) {
        case "t", "true": return true
        case "f", "false": return false
        case let other: throw decodingError("\(other.debugDescription) is not a boolean", row: row, column: column)
        }
    }

    /// ``int64(row:column:)``, or `nil` for NULL.
    public func optionalInt64(row: Int, column: Int) throws(PostgresError) -> Int64? {
        try isNull(row: row, column: column) ? nil : try int64(row: row, column: column)
    }

    /// ``text(row:column:)``, or `nil` for NULL.
    public func optionalText(row: Int, column: Int) throws(PostgresError) -> String? {
        try isNull(row: row, column: column) ? nil : try text(row: row, column: column)
    }

    /// ``bytea(row:column:)``, or `nil` for NULL.
    public func optionalBytea(row: Int, column: Int) throws(PostgresError) -> Data? {
        try isNull(row: row, column: column) ? nil : try bytea(row: row, column: column)
    }

    /// ``bool(row:column:)``, or `nil` for NULL.
    public func optionalBool(row: Int, column: Int) throws(PostgresError) -> Bool? {
        try isNull(row: row, column: column) ? nil : try bool(row: row, column: column)
    }

    // MARK: - Internals

    private func checkBounds(row: Int, column: Int) throws(PostgresError) {
        guard row >= 0, row < rowCount, column >= 0, column < columnCount else {
            throw PostgresError(kind: .decoding, message: "(row \(row), column \(column)) is outside a result of \(rowCount) rows × \(columnCount) columns", sql: sql)
        }
    }

    /// The raw bytes of a non-NULL value (valid while the result lives).
    private func value(row: Int, column: Int, wanted: String) throws(PostgresError) -> UnsafeRawBufferPointer {
        try checkBounds(row: row, column: column)
        guard PQgetisnull(handle, Int32(row), Int32(column)) == 0 else {
            throw decodingError("NULL where \(wanted) was expected", row: row, column: column)
        }
        guard let pointer = PQgetvalue(handle, Int32(row), Int32(column)) else {
            throw decodingError("no value", row: row, column: column)
        }
        return UnsafeRawBufferPointer(start: pointer, count: Int(PQgetlength(handle, Int32(row), Int32(column))))
    }

    private static func load<T: FixedWidthInteger>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer) -> T {
        bytes.loadUnaligned(as: T.self)
    }

    private func decodingError(_ reason: String, row: Int, column: Int) -> PostgresError {
        let name = column >= 0 && column < columnNames.count ? " \"\(columnNames[column])\"" : ""
        return PostgresError(kind: .decoding, message: "row \(row), column \(column)\(name): \(reason)", sql: sql)
    }
}
