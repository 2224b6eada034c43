extension Ledger {
    /// Whether `error` means the connection to the database server is gone (a PostgreSQL restart):
    /// the transaction in flight did not commit, and after ``reconnect()`` the work can be
    /// retried (appends are idempotent). Always `false` for a SQLite file.
    public func isConnectionLoss(_ error: any Error) -> Bool {
        store.isConnectionLoss(error)
    }

    /// Re-establishes a lost connection to the database server; nothing to do for a SQLite file.
    public func reconnect() throws {
        try store.reconnect()
    }
}
