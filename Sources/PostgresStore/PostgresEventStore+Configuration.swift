import AppStoreModels
import LedgerStorage
import Foundation
import PostgresClient

extension PostgresEventStore {
    // MARK: Configuration

    /// Writes the configuration values `create` records (inside its transaction).
    func writeConfiguration(_ configuration: LedgerConfiguration, createdAt: EpochMillis) throws {
        var pairs: [(String, String)] = [
            ("bundle_id", configuration.bundleId),
            ("environment", configuration.environment.rawValue),
            ("created_at", String(createdAt)),
        ]
        if let appAppleId = configuration.appAppleId { pairs.append(("app_apple_id", String(appAppleId))) }
        for (key, value) in pairs { try upsertConfig(key, value) }
    }

    private func upsertConfig(_ key: String, _ value: String) throws {
        _ = try connection.run(
            "INSERT INTO config (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            [.text(key), .text(value)])
        try linkRecords([(.config, key, RecordChain.configDigest(value: value))])
    }

    /// The stored configuration.
    public func configuration() throws -> LedgerConfiguration {
        let values = try configValues()
        guard let bundleId = values["bundle_id"], let environment = values["environment"] else {
            throw LedgerStoreError.badConfiguration("bundle_id or environment missing from the config table")
        }
        return try LedgerConfiguration(bundleId: bundleId, environment: AppStoreEnvironment(rawValue: environment),
                                       appAppleId: values["app_apple_id"].flatMap { Int64($0) })
    }

    /// Every key/value of the config table.
    public func configValues() throws -> [String: String] {
        var values: [String: String] = [:]
        for row in try connection.run("SELECT key, value FROM config") {
            values[try row.text(0)] = try row.text(1)
        }
        return values
    }

    /// Sets one free-form configuration value (e.g. `api_credentials_file`), in a write transaction of its own.
    public func setConfigValue(_ key: String, _ value: String) throws {
        try write { try upsertConfig(key, value) }
    }

    // MARK: Trust roots

    /// Inserts a root unless its fingerprint is present; returns whether it was new.
    @discardableResult
    func insertRoot(_ root: StoredTrustRoot) throws -> Bool {
        let result = try connection.run(
            "INSERT INTO trust_roots (fingerprint, der, subject, added_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            [.text(root.fingerprint), .bytea(Data(root.der)), .text(root.subject), .int64(root.addedAt)])
        guard (result.affectedRows ?? 0) > 0 else { return false }
        try linkRecords([(.trustRoot, root.fingerprint, RecordChain.trustRootDigest(root))])
        return true
    }

    /// Adds trust roots (ignoring ones already present) in a write transaction of its own; returns how many were new.
    public func addRoots(_ roots: [StoredTrustRoot]) throws -> Int {
        try write {
            var added = 0
            for root in roots where try insertRoot(root) { added += 1 }
            return added
        }
    }

    /// The configured trust roots, oldest first.
    public func trustRoots() throws -> [StoredTrustRoot] {
        let result = try connection.run(
            "SELECT fingerprint, der, subject, added_at FROM trust_roots ORDER BY added_at, fingerprint")
        return try result.map { row in
            StoredTrustRoot(fingerprint: try row.text(0), der: [UInt8](try row.bytea(1)), subject: try row.text(2),
                            addedAt: try row.int64(3))
        }
    }
}
