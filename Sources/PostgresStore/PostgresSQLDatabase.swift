import Foundation
import LedgerStorage
import PostgresClient

/// The store's connection as the engine-neutral primitive: server-side prepared statements,
/// `$1` placeholders (rendered once per SQL text), PostgreSQL's failures (session-ending ones as
/// `.connection`) as ``LedgerStoreError/database(_:)``.
final class PostgresSQLDatabase: SQLDatabase {
    private let connection: PostgresConnection
    /// Each SQL text written with `?`, rendered with `$n` (the store uses a few dozen texts).
    private var rendered: [String: String] = [:]

    init(connection: PostgresConnection) { self.connection = connection }

    /// `$1`, `$2`, ….
    var placeholderStyle: SQLPlaceholderStyle { .numbered }

    /// Runs `sql`; the rows it changed (the command tag's count, 0 for none).
    func executeRendered(_ sql: String, _ arguments: [SQLValue]) throws(LedgerStoreError) -> Int {
        do {
            return Int(try connection.run(sql, arguments.map(PostgresValue.init)).affectedRows ?? 0)
        } catch {
            throw .database(error)
        }
    }

    /// Runs `sql`, each row through `decode`.
    func queryRendered<T>(_ sql: String, _ arguments: [SQLValue], _ decode: (any SQLRow) throws -> T) throws -> [T] {
        let result: PostgresResult
        do {
            result = try connection.run(sql, arguments.map(PostgresValue.init))
        } catch {
            throw LedgerStoreError.database(error)
        }
        return try result.map { try decode(PostgresSQLRow(row: $0)) }
    }

    /// Whether `to_regclass` finds the table in the session's search path.
    func tableExists(_ name: String) throws(LedgerStoreError) -> Bool {
        do {
            return try connection.run("SELECT to_regclass($1) IS NOT NULL", [.text(name)]).first?.bool(0) ?? false
        } catch {
            throw .database(error)
        }
    }

    /// `?` placeholders as `$n`, rendered once per text.
    func render(_ sql: String) -> String {
        if let done = rendered[sql] { return done }
        let done = SQLPlaceholderStyle.numbered.render(sql)
        rendered[sql] = done
        return done
    }
}

/// One row of a result; PostgreSQL's decoding failures as ``LedgerStoreError/database(_:)``.
struct PostgresSQLRow: SQLRow {
    let row: PostgresRow

    func isNull(_ column: Int) throws -> Bool { try wrapped { () throws(PostgresError) in try row.isNull(column) } }
    func int64(_ column: Int) throws -> Int64 { try wrapped { () throws(PostgresError) in try row.int64(column) } }
    func text(_ column: Int) throws -> String { try wrapped { () throws(PostgresError) in try row.text(column) } }
    func blob(_ column: Int) throws -> Data { try wrapped { () throws(PostgresError) in try row.bytea(column) } }

    private func wrapped<T>(_ body: () throws(PostgresError) -> T) throws(LedgerStoreError) -> T {
        do { return try body() } catch { throw .database(error) }
    }
}

extension PostgresValue {
    /// The same value, as PostgreSQL binds it (`bigint`, `text`, `bytea`).
    init(_ value: SQLValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .int64(integer)
        case .text(let text): self = .text(text)
        case .blob(let data): self = .bytea(data)
        }
    }
}
