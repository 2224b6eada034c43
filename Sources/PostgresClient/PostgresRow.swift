import Foundation

/// One row of a ``PostgresResult``; columns by 0-based index or by exact name.
///
/// Keeps its result alive. Accessors forward to the result's typed accessors.
public struct PostgresRow {
    /// The result the row belongs to.
    public let result: PostgresResult
    /// The row's index in the result.
    public let index: Int

    /// The index of `name`, or a `.decoding` error naming the columns there are.
    private func column(_ name: String) throws(PostgresError) -> Int {
        guard let column = result.columnIndex(named: name) else {
            throw PostgresError(kind: .decoding, message: "no column \"\(name)\" (columns: \(result.columnNames.joined(separator: ", ")))", sql: result.sql)
        }
        return column
    }

    /// Whether `column` is NULL.
    public func isNull(_ column: Int) throws(PostgresError) -> Bool { try result.isNull(row: index, column: column) }
    /// `column` as an integer.
    public func int64(_ column: Int) throws(PostgresError) -> Int64 { try result.int64(row: index, column: column) }
    /// `column` as text.
    public func text(_ column: Int) throws(PostgresError) -> String { try result.text(row: index, column: column) }
    /// `column` as bytes.
    public func bytea(_ column: Int) throws(PostgresError) -> Data { try result.bytea(row: index, column: column) }
    /// `column` as a boolean.
    public func bool(_ column: Int) throws(PostgresError) -> Bool { try result.bool(row: index, column: column) }
    /// `column` as an integer, `nil` for NULL.
    public func optionalInt64(_ column: Int) throws(PostgresError) -> Int64? { try result.optionalInt64(row: index, column: column) }
    /// `column` as text, `nil` for NULL.
    public func optionalText(_ column: Int) throws(PostgresError) -> String? { try result.optionalText(row: index, column: column) }
    /// `column` as bytes, `nil` for NULL.
    public func optionalBytea(_ column: Int) throws(PostgresError) -> Data? { try result.optionalBytea(row: index, column: column) }
    /// `column` as a boolean, `nil` for NULL.
    public func optionalBool(_ column: Int) throws(PostgresError) -> Bool? { try result.optionalBool(row: index, column: column) }

    /// Whether the column named `name` is NULL.
    public func isNull(_ name: String) throws(PostgresError) -> Bool { try isNull(column(name)) }
    /// The column named `name` as an integer.
    public func int64(_ name: String) throws(PostgresError) -> Int64 { try int64(column(name)) }
    /// The column named `name` as text.
    public func text(_ name: String) throws(PostgresError) -> String { try text(column(name)) }
    /// The column named `name` as bytes.
    public func bytea(_ name: String) throws(PostgresError) -> Data { try bytea(column(name)) }
    /// The column named `name` as a boolean.
    public func bool(_ name: String) throws(PostgresError) -> Bool { try bool(column(name)) }
    /// The column named `name` as an integer, `nil` for NULL.
    public func optionalInt64(_ name: String) throws(PostgresError) -> Int64? { try optionalInt64(column(name)) }
    /// The column named `name` as text, `nil` for NULL.
    public func optionalText(_ name: String) throws(PostgresError) -> String? { try optionalText(column(name)) }
    /// The column named `name` as bytes, `nil` for NULL.
    public func optionalBytea(_ name: String) throws(PostgresError) -> Data? { try optionalBytea(column(name)) }
    /// The column named `name` as a boolean, `nil` for NULL.
    public func optionalBool(_ name: String) throws(PostgresError) -> Bool? { try optionalBool(column(name)) }
}
