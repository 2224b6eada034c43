import AppStoreModels
import LedgerStorage

extension Ledger {
    /// The service's API tokens (names, scopes, digests; revoked ones included).
    public func apiTokens() throws -> [APITokenRecord] {
        try store.apiTokens()
    }

    /// Stores a token for the read API: its `name`, `scope` (comma-separated) and the SHA-256
    /// of its secret (never the secret); recorded in the record chain.
    public func addAPIToken(name: String, scope: String, sha256: String, now: EpochMillis) throws {
        try store.addAPIToken(name: name, scope: scope, sha256: sha256, now: now)
    }

    /// Revokes the token called `name`; `false` when no active token has that name.
    public func revokeAPIToken(name: String, now: EpochMillis) throws -> Bool {
        try store.revokeAPIToken(name: name, now: now)
    }
}
