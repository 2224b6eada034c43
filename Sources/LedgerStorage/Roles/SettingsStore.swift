import AppStoreModels
import Foundation
import LedgerEvents

/// The ledger's settings: the trust configuration, trusted roots, the record chain's links over
/// them, and the bearer tokens of `seatledger serve`.
public protocol SettingsStore {
    /// The trust configuration recorded at creation.
    func configuration() throws -> LedgerConfiguration
    /// Every configuration value.
    func configValues() throws -> [String: String]
    /// Sets one configuration value.
    func setConfigValue(_ key: String, _ value: String) throws
    /// The trusted root certificates.
    func trustRoots() throws -> [StoredTrustRoot]
    /// Adds root certificates; returns how many were new.
    func addRoots(_ roots: [StoredTrustRoot]) throws -> Int
    /// The record chain's links in order (``RecordChain``), or `nil` when the ledger has none.
    func recordLinks() throws -> [RecordChain.Link]?

    /// Adds a bearer token, storing only its SHA-256 (`api_tokens` is created if missing).
    func addAPIToken(name: String, scope: String, sha256: String, now: EpochMillis) throws
    /// Every token record, by name.
    func apiTokens() throws -> [APITokenRecord]
    /// Revokes a token; whether an unrevoked one of that name existed.
    func revokeAPIToken(name: String, now: EpochMillis) throws -> Bool
}
