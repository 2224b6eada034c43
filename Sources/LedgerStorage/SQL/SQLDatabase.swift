import Foundation

/// The SQL an engine runs for the roles written once over it: a statement, a query with a row
/// decoder, whether a table exists, and how the engine spells placeholders. Modelled on GRDB's
/// `Database`: one connection, used from one thread at a time, inside or outside the store's
/// transactions (``TransactionalStore/write(_:)``, ``TransactionalStore/read(_:)``).
///
/// The SQL handed to ``execute(_:_:)`` and ``query(_:_:_:)`` is written once, with `?` for each
/// argument in order, in the dialect both engines accept (`INSERT … ON CONFLICT … DO UPDATE`,
/// `ON CONFLICT DO NOTHING`, `coalesce`, `LIMIT`); ``placeholderStyle`` renders it for the engine.
/// A failure of the engine leaves as ``LedgerStoreError/database(_:)`` carrying the engine's own
/// error, on every engine the same type.
///
/// What the engines do differently stays theirs: the append's rows (prepared statements, `COPY`),
/// the hot reads, locking (`FOR UPDATE`, advisory locks), the schema and its upgrades.
///
/// ```swift
/// let count = try database.query("SELECT count(*) FROM quarantine WHERE state = ?", [.text("open")]) { try $0.int64(0) }
/// ```
public protocol SQLDatabase: AnyObject {
    /// How the engine writes the placeholders of the SQL it runs.
    var placeholderStyle: SQLPlaceholderStyle { get }
    /// `sql`, written with `?` placeholders, in ``placeholderStyle`` (an engine may cache it).
    func render(_ sql: String) -> String
    /// Runs `sql` (already in ``placeholderStyle``) with `arguments`; the number of rows it changed.
    func executeRendered(_ sql: String, _ arguments: [SQLValue]) throws(LedgerStoreError) -> Int
    /// Runs the query `sql` (already in ``placeholderStyle``) with `arguments`, each row through
    /// `decode`, in order.
    func queryRendered<T>(_ sql: String, _ arguments: [SQLValue], _ decode: (any SQLRow) throws -> T) throws -> [T]
    /// Whether the ledger's schema has the table `name` (a ledger of an older schema may lack one).
    func tableExists(_ name: String) throws(LedgerStoreError) -> Bool
}

extension SQLDatabase {
    /// ``SQLPlaceholderStyle/render(_:)`` of ``placeholderStyle``, rendered at every call.
    public func render(_ sql: String) -> String { placeholderStyle.render(sql) }

    /// Runs `sql` (`?` placeholders) with `arguments`; the number of rows it changed.
    @discardableResult
    public func execute(_ sql: String, _ arguments: [SQLValue] = []) throws(LedgerStoreError) -> Int {
        try executeRendered(render(sql), arguments)
    }

    /// Runs the query `sql` (`?` placeholders) with `arguments`, each row through `decode`, in order.
    /// Errors `decode` throws pass through unchanged.
    public func query<T>(_ sql: String, _ arguments: [SQLValue] = [], _ decode: (any SQLRow) throws -> T) throws -> [T] {
        try queryRendered(render(sql), arguments, decode)
    }
}

/// How an engine writes a statement's placeholders: SQLite's `?` or PostgreSQL's `$1`, `$2`, ….
public enum SQLPlaceholderStyle: Sendable, Equatable {
    /// `?`, bound in order (SQLite).
    case questionMark
    /// `$1`, `$2`, … (PostgreSQL).
    case numbered

    /// `sql`, written with `?` placeholders, in this style: with ``numbered``, each `?` outside a
    /// quoted literal or identifier (`'…'`, `"…"`) becomes `$n`, numbered in order.
    public func render(_ sql: String) -> String {
        guard self == .numbered else { return sql }
        var rendered = ""
        rendered.reserveCapacity(sql.utf8.count + 8)
        var number = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
                rendered.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                rendered.append(character)
            } else if character == "?" {
                number += 1
                rendered += "$\(number)"
            } else {
                rendered.append(character)
            }
        }
        return rendered
    }
}
