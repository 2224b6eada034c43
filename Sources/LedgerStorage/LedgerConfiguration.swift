import AppStoreModels

/// The trust configuration `seatledger init` records in a ledger, so later commands need no flags.
public struct LedgerConfiguration: Sendable, Equatable {
    /// Payloads must name this bundle id.
    public var bundleId: String
    /// Payloads must name this environment.
    public var environment: AppStoreEnvironment
    /// Required in Production: payloads must name this app Apple id.
    public var appAppleId: Int64?

    /// Creates a configuration; `appAppleId` is required when the environment is Production.
    public init(bundleId: String, environment: AppStoreEnvironment, appAppleId: Int64?) throws(LedgerStoreError) {
        guard !bundleId.isEmpty else { throw .badConfiguration("bundle id is empty") }
        if environment == .production, appAppleId == nil {
            throw .badConfiguration("--app-apple-id is required for a Production ledger")
        }
        self.bundleId = bundleId
        self.environment = environment
        self.appAppleId = appAppleId
    }
}

/// A root certificate stored in the ledger.
public struct StoredTrustRoot: Sendable, Equatable {
    /// SHA-256 of the DER, lowercase hex.
    public let fingerprint: String
    /// The certificate, DER.
    public let der: [UInt8]
    /// The subject, one line.
    public let subject: String
    /// When it was added (epoch ms).
    public let addedAt: EpochMillis

    /// Creates a stored root.
    public init(fingerprint: String, der: [UInt8], subject: String, addedAt: EpochMillis) {
        self.fingerprint = fingerprint
        self.der = der
        self.subject = subject
        self.addedAt = addedAt
    }
}
