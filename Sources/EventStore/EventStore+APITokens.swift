import AppStoreModels
import CSQLite
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

    private static func isMissingTokenTable(_ error: any Error) -> Bool {
        (error as? SQLiteError)?.description.contains("no such table: api_tokens") ?? false
    }

    /// Adds a token (its SHA-256 only), creating `api_tokens` on a ledger that predates it.
    public func addAPIToken(name: String, scope: String, sha256: String, now: EpochMillis) throws {
        let existingRevokedAt: Int64?? = try connection.writeTransaction {
            try connection.execute(Self.createAPITokensTable)
            let select = try connection.prepare("SELECT revoked_at FROM api_tokens WHERE name = ?")
            try select.bind(.text(name))
            let found: Int64?? = try select.step() ? .some(select.optionalInt64(0)) : .none
            select.reset()
            if found != nil { return found }
            try linkTokensOnce()
            let insert = try connection.prepare("INSERT INTO api_tokens(name, scope, sha256, created_at) VALUES (?, ?, ?, ?)")
            try insert.bind(.text(name), .text(scope), .text(sha256), .integer(now))
            try insert.run()
            let record = APITokenRecord(name: name, scope: scope, sha256: sha256, createdAt: now, revokedAt: nil)
            try linkRecords([(.apiToken, name, RecordChain.apiTokenDigest(record))])
            return nil
        }
        if let revokedAt = existingRevokedAt {
            throw APITokenError("a token named \(name) already exists\(revokedAt == nil ? "" : " (revoked)"); choose another name")
        }
    }

    /// Every token, by name (none on a ledger that never had one).
    public func apiTokens() throws -> [APITokenRecord] {
        var records: [APITokenRecord] = []
        do {
            let select = try connection.prepare("SELECT name, scope, sha256, created_at, revoked_at FROM api_tokens ORDER BY name")
            defer { select.reset() }
            while try select.step() {
                records.append(APITokenRecord(name: select.text(0), scope: select.text(1), sha256: select.text(2),
                                              createdAt: select.int64(3), revokedAt: select.optionalInt64(4)))
            }
        } catch {
            if Self.isMissingTokenTable(error) { return [] }
            throw error
        }
        return records
    }

    /// Revokes the token `name`; whether an unrevoked token of that name existed.
    public func revokeAPIToken(name: String, now: EpochMillis) throws -> Bool {
        do {
            return try connection.writeTransaction {
                try linkTokensOnce()
                let update = try connection.prepare("UPDATE api_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL")
                try update.bind(.integer(now), .text(name))
                try update.run()
                guard try connection.scalarInt("SELECT changes()") == 1 else { return false }
                if let record = try apiTokens().first(where: { $0.name == name }) {
                    try linkRecords([(.apiToken, name, RecordChain.apiTokenDigest(record))])
                }
                return true
            }
        } catch {
            if Self.isMissingTokenTable(error) { return false }
            throw error
        }
    }
}
