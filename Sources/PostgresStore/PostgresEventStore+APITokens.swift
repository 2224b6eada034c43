import AppStoreModels
import LedgerStorage
import PostgresClient

extension PostgresEventStore {
    private static func isMissingTokenTable(_ error: any Error) -> Bool {
        PostgresError.in(error)?.sqlState == "42P01"
    }

    /// Adds a token (its SHA-256 only), creating `api_tokens` on a ledger that predates it.
    public func addAPIToken(name: String, scope: String, sha256: String, now: EpochMillis) throws {
        let existingRevokedAt: Int64?? = try write {
            // A ledger created before the table: create it, and let the append role (serve nodes) read it.
            let missing = try connection.run("SELECT to_regclass('api_tokens') IS NULL").first?.bool(0) ?? false
            _ = try connection.run(PostgresLedgerSchema.apiTokensTable)
            if missing {
                let role = try connection.run("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", [.text(PostgresAppendRole.name)])
                if try role.first?.bool(0) ?? false {
                    _ = try connection.run("GRANT SELECT ON api_tokens TO \(PostgresConnection.quoteIdentifier(PostgresAppendRole.name))")
                }
            }
            let existing = try connection.run("SELECT revoked_at FROM api_tokens WHERE name = $1", [.text(name)])
            if let row = existing.first { return .some(try row.optionalInt64(0)) }
            try linkTokensOnce()
            _ = try connection.run("INSERT INTO api_tokens (name, scope, sha256, created_at) VALUES ($1, $2, $3, $4)",
                                   [.text(name), .text(scope), .text(sha256), .int64(now)])
            let record = APITokenRecord(name: name, scope: scope, sha256: sha256, createdAt: now, revokedAt: nil)
            try linkRecords([(.apiToken, name, RecordChain.apiTokenDigest(record))])
            return .none
        }
        if let revokedAt = existingRevokedAt {
            throw APITokenError("a token named \(name) already exists\(revokedAt == nil ? "" : " (revoked)"); choose another name")
        }
    }

    /// Every token, by name (none on a ledger that never had one).
    public func apiTokens() throws -> [APITokenRecord] {
        do {
            let result = try connection.run("SELECT name, scope, sha256, created_at, revoked_at FROM api_tokens ORDER BY name")
            var records: [APITokenRecord] = []
            for row in result {
                records.append(APITokenRecord(name: try row.text(0), scope: try row.text(1), sha256: try row.text(2),
                                              createdAt: try row.int64(3), revokedAt: try row.optionalInt64(4)))
            }
            return records
        } catch {
            if Self.isMissingTokenTable(error) { return [] }
            throw error
        }
    }

    /// Revokes the token `name`; whether an unrevoked token of that name existed.
    public func revokeAPIToken(name: String, now: EpochMillis) throws -> Bool {
        do {
            return try write {
                guard try connection.run("SELECT to_regclass('api_tokens') IS NOT NULL").first?.bool(0) ?? false else { return false }
                try linkTokensOnce()
                let result = try connection.run("UPDATE api_tokens SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL",
                                                [.int64(now), .text(name)])
                guard result.affectedRows == 1 else { return false }
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

    /// Links every `api_tokens` row and sets ``RecordChain/tokensCoveredKey``, unless it is set or
    /// the ledger has no record chain (inside the caller's write transaction): a new ledger at
    /// creation, an older one at its first writer's open or token write.
    func linkTokensOnce() throws {
        guard hasRecordChain, try configValues()[RecordChain.tokensCoveredKey] == nil else { return }
        let hasTable = try connection.run("SELECT to_regclass('api_tokens') IS NOT NULL").first?.bool(0) ?? false
        if hasTable { try linkRecords(try apiTokens().map { (.apiToken, $0.name, RecordChain.apiTokenDigest($0)) }) }
        _ = try connection.run("INSERT INTO config (key, value) VALUES ($1, '1') ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                               [.text(RecordChain.tokensCoveredKey)])
        try linkRecords([(.config, RecordChain.tokensCoveredKey, RecordChain.configDigest(value: "1"))])
    }
}
