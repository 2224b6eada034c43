import LedgerStorage

extension Ledger {
    /// Every stored configuration value by key (bundle id, environment, stored API settings …).
    public func configValues() throws -> [String: String] {
        try store.configValues()
    }

    /// Stores `value` under `key` (an empty value unsets a setting); recorded in the record chain.
    public func setConfigValue(_ key: String, _ value: String) throws {
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
