import LedgerStorage
import PostgresClient

extension PostgresEventStore {
    /// Takes a transaction-level advisory lock keyed by the group, so two processes beginning a
    /// claim for the same member at once serialise and cannot both create one (SQLite's writer
    /// lock does this there).
    public func lockClaimRequests(originalTransactionId: String) throws {
        try connection.run("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                           [.text("seatledger.claim:" + originalTransactionId)])
    }
}
