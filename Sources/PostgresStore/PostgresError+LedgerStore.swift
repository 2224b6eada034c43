import LedgerStorage
import PostgresClient

/// PostgreSQL's failures travel inside ``LedgerStoreError/database(_:)``, as SQLite's do.
extension PostgresError: DatabaseFailure {
    /// `false`: the server guards its own pages (a damaged page is the server's to report and repair).
    public var isCorruption: Bool { false }

    /// The ``PostgresError`` `error` is or wraps (``LedgerStoreError/database(_:)``), to match its SQLSTATE.
    static func `in`(_ error: any Error) -> PostgresError? {
        LedgerStoreError.databaseFailure(in: error) as? PostgresError
    }
}
