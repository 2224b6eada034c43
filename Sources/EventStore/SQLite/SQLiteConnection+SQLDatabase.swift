import CSQLite
import Foundation
import LedgerStorage

/// The connection as the engine-neutral primitive: cached prepared statements, `?` placeholders,
/// SQLite's failures as ``LedgerStoreError/database(_:)``.
extension SQLiteConnection: SQLDatabase {
    /// `?`, bound in order.
    package var placeholderStyle: SQLPlaceholderStyle { .questionMark }

    /// Runs `sql` to completion; the rows it changed (`sqlite3_changes`).
    package func executeRendered(_ sql: String, _ arguments: [SQLValue]) throws(LedgerStoreError) -> Int {
        do {
            let statement = try prepare(sql)
            defer { statement.reset() }
            try statement.bind(arguments.map(SQLiteValue.init)).run()
            return changes
        } catch {
            throw .database(error)
        }
    }

    /// Steps `sql`, each row through `decode`.
    package func queryRendered<T>(_ sql: String, _ arguments: [SQLValue], _ decode: (any SQLRow) throws -> T) throws -> [T] {
        let statement: SQLiteStatement
        do {
            statement = try prepare(sql)
            try statement.bind(arguments.map(SQLiteValue.init))
        } catch {
            throw LedgerStoreError.database(error)
        }
        defer { statement.reset() }
        let row = SQLiteRow(statement: statement)
        var rows: [T] = []
        while true {
            do {
                guard try statement.step() else { return rows }
            } catch {
                throw LedgerStoreError.database(error)
            }
            rows.append(try decode(row))
        }
    }

    /// Whether `sqlite_master` lists the table.
    package func tableExists(_ name: String) throws(LedgerStoreError) -> Bool {
        do {
            let statement = try prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
            defer { statement.reset() }
            return try statement.bind(.text(name)).step()
        } catch {
            throw .database(error)
        }
    }
}

/// The current row of a stepped statement.
struct SQLiteRow: SQLRow {
    let statement: SQLiteStatement

    func isNull(_ column: Int) -> Bool { statement.isNull(Int32(column)) }
    func int64(_ column: Int) -> Int64 { statement.int64(Int32(column)) }
    func text(_ column: Int) -> String { statement.text(Int32(column)) }
    func blob(_ column: Int) -> Data { statement.blob(Int32(column)) }
}

extension SQLiteValue {
    /// The same value, as SQLite binds it.
    init(_ value: SQLValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .text(let text): self = .text(text)
        case .blob(let data): self = .blob(data)
        }
    }
}
