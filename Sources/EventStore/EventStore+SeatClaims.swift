import LedgerStorage

extension EventStore {
    /// Nothing: SQLite's writer lock already keeps a second writer out of the caller's transaction.
    public func lockClaimRequests(originalTransactionId: String) throws {}
}
