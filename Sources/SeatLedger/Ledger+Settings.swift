import LedgerStorage

extension Ledger {
    /// The setting stored under `key` (the ledger's `config` values: an API credentials file, a
    /// backfill cursor), or `nil` when none is.
    public func setting(_ key: String) throws -> String? {
        try store.configValues()[key]
    }

    /// Every stored setting, by key (bundle id, environment, stored API settings …).
    public func settings() throws -> [String: String] {
        try store.configValues()
    }

    /// Stores `value` under `key`, replacing any earlier value (an empty value unsets a setting),
    /// in a write transaction of its own; the new value is linked into the record chain.
    public func storeSetting(_ key: String, _ value: String) throws {
        try store.setConfigValue(key, value)
    }

    /// The trusted root certificates, in the order they were added.
    public func trustRoots() throws -> [StoredTrustRoot] {
        try store.trustRoots()
    }

    /// What decides what the ledger trusts: roots, bundle id, environment, app Apple id, API tokens.
    public func trustConfiguration() throws -> TrustConfiguration {
        try TrustConfiguration(readingFrom: store)
    }
}
