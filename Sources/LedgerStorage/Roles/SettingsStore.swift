import AppStoreModels
import Foundation
import LedgerEvents

/// The ledger's settings: the trust configuration, trusted roots, the record chain's links over
/// them, and the bearer tokens of `seatledger serve`.
///
/// Written once over the engine's ``TransactionalStore/database`` (plain SQL, the same on every
/// engine), with each change linked into the record chain (``AppendRows/linkRecords(_:)``) in
/// the same transaction. An engine supplies only the `api_tokens` table of a ledger that predates
/// it (its own DDL and grants).
public protocol SettingsStore: TransactionalStore, AppendRows {
    /// Creates `api_tokens` when the ledger has none (inside the caller's write transaction):
    /// only that table is touched, never the log.
    func ensureAPITokensTable() throws
}

extension SettingsStore {
    /// The trust configuration recorded at creation.
    public func configuration() throws -> LedgerConfiguration {
        let values = try configValues()
        guard let bundleId = values["bundle_id"], let environment = values["environment"] else {
            throw LedgerStoreError.badConfiguration("bundle_id or environment missing from the config table")
        }
        return try LedgerConfiguration(bundleId: bundleId, environment: AppStoreEnvironment(rawValue: environment),
                                       appAppleId: values["app_apple_id"].flatMap { Int64($0) })
    }

    /// Every configuration value.
    public func configValues() throws -> [String: String] {
        var values: [String: String] = [:]
        for (key, value) in try database.query("SELECT key, value FROM config", [], { (try $0.text(0), try $0.text(1)) }) {
            values[key] = value
        }
        return values
    }

    /// Sets one configuration value (e.g. `api_credentials_file`) and links it, in a write
    /// transaction of its own.
    public func setConfigValue(_ key: String, _ value: String) throws {
        try write { try upsertConfigValues([(key, value)]) }
    }

    /// The trusted root certificates, oldest first (then by fingerprint).
    public func trustRoots() throws -> [StoredTrustRoot] {
        try database.query("SELECT fingerprint, der, subject, added_at FROM trust_roots ORDER BY added_at, fingerprint") { row in
            StoredTrustRoot(fingerprint: try row.text(0), der: [UInt8](try row.blob(1)), subject: try row.text(2),
                            addedAt: try row.int64(3))
        }
    }

    /// Adds root certificates (ignoring those whose fingerprint is present) in a write transaction
    /// of its own; returns how many were new.
    public func addRoots(_ roots: [StoredTrustRoot]) throws -> Int {
        try write {
            var added = 0
            for root in roots where try insertRoot(root) { added += 1 }
            return added
        }
    }

    /// The record chain's links in order (``RecordChain``), or `nil` when the ledger has none (an
    /// older schema nobody upgraded).
    public func recordLinks() throws -> [RecordChain.Link]? {
        guard try database.tableExists("record_chain") else { return nil }
        return try database.query("SELECT seq, kind, subject, digest, prev_hash, hash FROM record_chain ORDER BY seq") { row in
            RecordChain.Link(seq: try row.int64(0), kind: RecordChain.Kind(rawValue: try row.text(1)), subject: try row.text(2),
                             digest: try row.blob(3), previousHash: try row.blob(4), hash: try row.blob(5))
        }
    }

    // MARK: Bearer tokens

    /// Adds a bearer token, storing only its SHA-256, and links it (`api_tokens` is created if
    /// missing). A name already used, revoked or not, is refused (``APITokenError``).
    public func addAPIToken(name: String, scope: String, sha256: String, now: EpochMillis) throws {
        let existingRevokedAt: Int64?? = try write {
            try ensureAPITokensTable()
            let existing = try database.query("SELECT revoked_at FROM api_tokens WHERE name = ?", [.text(name)]) {
                try $0.optionalInt64(0)
            }
            if let revokedAt = existing.first { return .some(revokedAt) }
            try linkTokensOnce()
            try database.execute("INSERT INTO api_tokens (name, scope, sha256, created_at) VALUES (?, ?, ?, ?)",
                                 [.text(name), .text(scope), .text(sha256), .integer(now)])
            let record = APITokenRecord(name: name, scope: scope, sha256: sha256, createdAt: now, revokedAt: nil)
            try linkRecords([(.apiToken, name, RecordChain.apiTokenDigest(record))])
            return .none
        }
        if let revokedAt = existingRevokedAt {
            throw APITokenError("a token named \(name) already exists\(revokedAt == nil ? "" : " (revoked)"); choose another name")
        }
    }

    /// Every token record, by name (none on a ledger that never had one).
    public func apiTokens() throws -> [APITokenRecord] {
        guard try database.tableExists("api_tokens") else { return [] }
        return try database.query("SELECT name, scope, sha256, created_at, revoked_at FROM api_tokens ORDER BY name") { row in
            APITokenRecord(name: try row.text(0), scope: try row.text(1), sha256: try row.text(2), createdAt: try row.int64(3),
                           revokedAt: try row.optionalInt64(4))
        }
    }

    /// Revokes a token and links the change; whether an unrevoked one of that name existed.
    public func revokeAPIToken(name: String, now: EpochMillis) throws -> Bool {
        try write {
            guard try database.tableExists("api_tokens") else { return false }
            try linkTokensOnce()
            let changed = try database.execute("UPDATE api_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
                                               [.integer(now), .text(name)])
            guard changed == 1 else { return false }
            if let record = try apiTokens().first(where: { $0.name == name }) {
                try linkRecords([(.apiToken, name, RecordChain.apiTokenDigest(record))])
            }
            return true
        }
    }

    // MARK: For the engines' create and open

    /// Writes the configuration `create` records and links it (inside its transaction).
    package func writeConfiguration(_ configuration: LedgerConfiguration, createdAt: EpochMillis) throws {
        var pairs: [(String, String)] = [
            ("bundle_id", configuration.bundleId),
            ("environment", configuration.environment.rawValue),
            ("created_at", String(createdAt)),
        ]
        if let appAppleId = configuration.appAppleId { pairs.append(("app_apple_id", String(appAppleId))) }
        try upsertConfigValues(pairs)
    }

    /// Inserts a root unless its fingerprint is present, and links a new one (inside the caller's
    /// write transaction); whether it was new.
    @discardableResult
    package func insertRoot(_ root: StoredTrustRoot) throws -> Bool {
        let inserted = try database.execute(
            "INSERT INTO trust_roots (fingerprint, der, subject, added_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [.text(root.fingerprint), .blob(Data(root.der)), .text(root.subject), .integer(root.addedAt)])
        guard inserted > 0 else { return false }
        try linkRecords([(.trustRoot, root.fingerprint, RecordChain.trustRootDigest(root))])
        return true
    }

    /// Links every `api_tokens` row and sets ``RecordChain/tokensCoveredKey``, unless it is set or
    /// the ledger has no record chain (inside the caller's write transaction): a new ledger at
    /// creation, an older one at its first writer's open or token write. Tokens changed before
    /// that are not covered.
    package func linkTokensOnce() throws {
        guard try configValues()[RecordChain.tokensCoveredKey] == nil, try database.tableExists("record_chain") else { return }
        try linkRecords(try apiTokens().map { (.apiToken, $0.name, RecordChain.apiTokenDigest($0)) })
        try upsertConfigValues([(RecordChain.tokensCoveredKey, "1")])
    }

    /// Sets each value (replacing one of the same key), then links them in order.
    private func upsertConfigValues(_ pairs: [(key: String, value: String)]) throws {
        for (key, value) in pairs {
            try database.execute("INSERT INTO config (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                 [.text(key), .text(value)])
        }
        try linkRecords(pairs.map { (.config, $0.key, RecordChain.configDigest(value: $0.value)) })
    }
}
