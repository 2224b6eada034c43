import LedgerStorage
import PostgresClient

extension PostgresEventStore {
    /// Creates `api_tokens` when the ledger has none (inside the caller's write transaction), and
    /// lets the append role (serve nodes) read it.
    public func ensureAPITokensTable() throws {
        guard try !database.tableExists("api_tokens") else { return }
        _ = try connection.run(PostgresLedgerSchema.apiTokensTable)
        let role = try connection.run("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", [.text(PostgresAppendRole.name)])
        if try role.first?.bool(0) ?? false {
            _ = try connection.run("GRANT SELECT ON api_tokens TO \(PostgresConnection.quoteIdentifier(PostgresAppendRole.name))")
        }
    }
}
