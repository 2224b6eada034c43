import LedgerStorage

extension EventStore {
    /// The table, for a ledger of schema 1 made before it existed: created on the first
    /// `token add` (only `api_tokens` is touched; the log never is).
    static let createAPITokensTable = """
        CREATE TABLE IF NOT EXISTS api_tokens (
            name       TEXT PRIMARY KEY,
            scope      TEXT NOT NULL,
            sha256     TEXT NOT NULL UNIQUE,
            created_at INTEGER NOT NULL,
            revoked_at INTEGER
        )
        """

    /// Creates `api_tokens` when the file has none (inside the caller's write transaction).
    public func ensureAPITokensTable() throws {
        do { try connection.execute(Self.createAPITokensTable) } catch { throw LedgerStoreError.database(error) }
    }
}
