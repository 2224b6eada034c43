import AppStoreModels
import Foundation
import SeatLedgerAppStoreAPI

/// How `serve` reaches the App Store Server API for the `seats` endpoints: the same sources as
/// `seatledger seats claim` (options, then `SEATLEDGER_*` variables, then `api-config`), turned
/// into ``LedgerAPIOptions`` for each call.
public struct SeatAPISettings: Sendable {
    /// Issuer id (else `$SEATLEDGER_ISSUER_ID`, else the credentials file).
    public var issuerId: String?
    /// Key id (else `$SEATLEDGER_KEY_ID`, else the credentials file).
    public var keyId: String?
    /// The `.p8` key file (else `$SEATLEDGER_PRIVATE_KEY_FILE`, else the credentials file).
    public var privateKeyFile: String?
    /// A JSON credentials file (else the one stored with `api-config --credentials`).
    public var credentialsFile: String?
    /// Base URL (else `$SEATLEDGER_API_BASE_URL`, else `api-config --api-base-url`, else the environment's host).
    public var baseURL: String?
    /// Seconds per request.
    public var timeout: TimeInterval = 30
    /// Requests per call, retries of 429 / 5xx / timeouts included.
    public var maximumAttempts: Int = 5
    /// The process environment the credentials fall back to.
    public var environment: [String: String] = ProcessInfo.processInfo.environment

    /// Settings with every default (credentials from the environment or the ledger).
    public init() {}

    /// The options for one connection; `clock` dates the recorded responses, `log` gets retry lines.
    func options(clock: @escaping @Sendable () -> EpochMillis, log: @escaping @Sendable (String) -> Void) -> LedgerAPIOptions {
        var options = LedgerAPIOptions()
        options.issuerId = issuerId
        options.keyId = keyId
        options.privateKeyFile = privateKeyFile
        options.credentialsFile = credentialsFile
        options.baseURL = baseURL
        options.timeout = timeout
        options.retry.maximumAttempts = maximumAttempts
        options.environment = environment
        options.clock = clock
        options.log = log
        return options
    }
}
