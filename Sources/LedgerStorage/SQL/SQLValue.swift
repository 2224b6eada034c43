import Foundation

/// A value bound to a statement's placeholder, in the four storage classes both engines share:
/// SQLite's INTEGER, TEXT, BLOB and NULL; PostgreSQL's `bigint`, `text`, `bytea` and NULL.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    case blob(Data)

    /// `.text`, or `.null` for `nil`.
    public static func optional(_ text: String?) -> SQLValue { text.map(SQLValue.text) ?? .null }
    /// `.integer`, or `.null` for `nil`.
    public static func optional(_ value: Int64?) -> SQLValue { value.map(SQLValue.integer) ?? .null }
}

/// One row of a query's result, read by column (0-based), as the row decoder of
/// ``SQLDatabase/query(_:_:_:)`` sees it. Valid only during the decoder's call.
public protocol SQLRow {
    /// Whether the column is NULL.
    func isNull(_ column: Int) throws -> Bool
    /// The column as an integer.
    func int64(_ column: Int) throws -> Int64
    /// The column as text, every byte of it.
    func text(_ column: Int) throws -> String
    /// The column as bytes.
    func blob(_ column: Int) throws -> Data
}

extension SQLRow {
    /// The column as an integer, `nil` when NULL.
    public func optionalInt64(_ column: Int) throws -> Int64? { try isNull(column) ? nil : try int64(column) }
    /// The column as text, `nil` when NULL.
    public func optionalText(_ column: Int) throws -> String? { try isNull(column) ? nil : try text(column) }
    /// The column as bytes, `nil` when NULL.
    public func optionalBlob(_ column: Int) throws -> Data? { try isNull(column) ? nil : try blob(column) }
}
