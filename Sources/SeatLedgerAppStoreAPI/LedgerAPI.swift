import AppStoreAPI
import AppStoreModels
import Foundation
import LedgerEvents
import LedgerIntake
import LedgerStorage
import SeatLedger

/// How to reach the App Store Server API from a ledger. Every field is optional: credentials and
/// the base URL fall back to environment variables and the ledger's stored settings.
public struct LedgerAPIOptions {
    /// Issuer id (wins over `$SEATLEDGER_ISSUER_ID` and the credentials file).
    public var issuerId: String?
    /// Key id (wins over `$SEATLEDGER_KEY_ID` and the credentials file).
    public var keyId: String?
    /// `.p8` file (wins over `$SEATLEDGER_PRIVATE_KEY_FILE` and the credentials file).
    public var privateKeyFile: String?
    /// A JSON credentials file (wins over the one stored with ``Ledger/setAPICredentialsFile(_:)``).
    public var credentialsFile: String?
    /// Base URL (wins over `$SEATLEDGER_API_BASE_URL`, the stored one and the environment's host).
    public var baseURL: String?
    /// Seconds per request.
    public var timeout: TimeInterval = 30
    /// Retry policy.
    public var retry = RetryPolicy()
    /// The process environment (injectable for tests).
    public var environment: [String: String] = ProcessInfo.processInfo.environment
    /// The `respondedAt` clock.
    public var clock: () -> EpochMillis = { Timestamp.millis(Date()) }
    /// Progress lines (retries, pages); never receives credentials.
    public var log: (String) -> Void = { _ in }
    /// HTTP transport (default: `URLSession`).
    public var transport: (any HTTPTransport)?
    /// Waits between attempts (injectable for tests).
    public var sleep: (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }

    /// Options with every default.
    public init() {}
}

/// Config keys under which ``LedgerAPI`` keeps its settings (never secrets).
public enum LedgerAPISettings {
    /// Path of the JSON credentials file (the file itself is never copied into the ledger).
    public static let credentialsFile = "api_credentials_file"
    /// Base URL override (a proxy).
    public static let baseURL = "api_base_url"
    /// The notification-history backfill cursor (JSON).
    public static let backfillCursor = "backfill_cursor"
    /// Environment variable for the base URL.
    public static let baseURLVariable = "SEATLEDGER_API_BASE_URL"
}

/// One recorded response: the exchange and what ingest made of it.
public struct RecordedExchange: Sendable {
    /// The response.
    public let exchange: APIExchange
    /// Appended, duplicate or quarantined.
    public let outcome: MessageOutcome
}

/// A ledger connected to the App Store Server API: every response goes through
/// ``Ledger/ingestBatch(_:)`` (verification included) the moment it arrives, before the caller
/// sees it. Get Notification History pages are recorded with origin `backfill`, the rest `recorded`.
///
/// Not `Sendable` (it uses a `Ledger`, one thread at a time), and every call blocks its thread
/// for the API calls it makes, retries and `Retry-After` waits included: run it off Swift's
/// cooperative pool (`serve` runs it inside `LedgerPool.write`).
public final class LedgerAPI {
    /// The ledger responses are recorded into.
    public let ledger: Ledger
    /// The HTTP client.
    public let client: AppStoreServerAPIClient
    /// The clock that dates the responses (`respondedAt`), as ``LedgerAPIOptions/clock``.
    public let clock: () -> EpochMillis
    private let sink: RecordingSink

    /// Connects `ledger` using `options`.
    ///
    /// - Returns: the connection and warnings for the user (e.g. a key file readable by others).
    public static func connect(_ ledger: Ledger, options: LedgerAPIOptions = LedgerAPIOptions()) throws -> (LedgerAPI, [String]) {
        let stored = try ledger.settings()
        let env = options.environment
        func nonEmpty(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        let haveAll = nonEmpty(options.issuerId ?? env[APICredentials.issuerIdVariable]) != nil
            && nonEmpty(options.keyId ?? env[APICredentials.keyIdVariable]) != nil
            && nonEmpty(options.privateKeyFile ?? env[APICredentials.privateKeyFileVariable]) != nil
        let file = haveAll ? nil : (nonEmpty(options.credentialsFile) ?? nonEmpty(stored[LedgerAPISettings.credentialsFile]))
        let (credentials, warnings) = try APICredentials.resolve(issuerId: options.issuerId, keyId: options.keyId,
                                                                 privateKeyFile: options.privateKeyFile, environment: env,
                                                                 credentialsFile: file)
        let environment = ledger.configuration.environment
        let baseText = nonEmpty(options.baseURL) ?? nonEmpty(env[LedgerAPISettings.baseURLVariable])
            ?? nonEmpty(stored[LedgerAPISettings.baseURL]) ?? AppStoreAPIPaths.baseURL(for: environment)
        guard let baseText else {
            throw APIUsageError("the ledger's environment \(environment.rawValue) has no App Store Server API host; give --api-base-url")
        }
        guard let baseURL = URL(string: baseText), let scheme = baseURL.scheme?.lowercased(), scheme == "https" || scheme == "http",
              baseURL.host != nil else {
            throw APIUsageError("--api-base-url must be an http(s) URL such as https://api.storekit-sandbox.apple.com, got \(Self.withoutUserInformation(baseText))")
        }
        let configuration = AppStoreAPIConfiguration(baseURL: baseURL, environment: environment, timeout: options.timeout,
                                                     retry: options.retry)
        let tokens = APITokenProvider(credentials: credentials, bundleId: ledger.configuration.bundleId)
        let sink = RecordingSink(ledger: ledger)
        let client = AppStoreServerAPIClient(configuration: configuration, tokens: tokens,
                                             transport: options.transport ?? URLSessionTransport(timeout: options.timeout), clock: options.clock,
                                             sleep: options.sleep, log: options.log) { exchange in
            try sink.record(exchange)
        }
        return (LedgerAPI(ledger: ledger, client: client, sink: sink, clock: options.clock), warnings)
    }

    /// `url` for a message: anything between `://` and the last `@` (user information, a
    /// password) written `***`.
    public static func withoutUserInformation(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url.range(of: "@", options: .backwards),
              at.lowerBound >= scheme.upperBound else { return url }
        return String(url[..<scheme.upperBound]) + "***" + String(url[at.lowerBound...])
    }

    /// Wraps an existing client whose `record` closure is not yet bound (tests build their own).
    init(ledger: Ledger, client: AppStoreServerAPIClient, sink: RecordingSink, clock: @escaping () -> EpochMillis = { Timestamp.millis(Date()) }) {
        self.ledger = ledger
        self.client = client
        self.sink = sink
        self.clock = clock
    }

    /// Every response recorded so far, in order.
    public var recorded: [RecordedExchange] { sink.recorded }

    /// Totals of what recording appended, found duplicate or quarantined.
    public var summary: IngestSummary { sink.summary }

    /// Sends `call` and returns its result with the responses it recorded (one per attempt that got a response).
    public func perform(_ call: APICall) throws -> (result: APICallResult, recorded: [RecordedExchange]) {
        let before = sink.recorded.count
        let result = try client.send(call)
        return (result, Array(sink.recorded[before...]))
    }
}

/// Appends each exchange's envelope through the ingest path and remembers the outcome.
final class RecordingSink {
    let ledger: Ledger
    private(set) var recorded: [RecordedExchange] = []
    private(set) var summary = IngestSummary()

    init(ledger: Ledger) { self.ledger = ledger }

    func record(_ exchange: APIExchange) throws {
        let raw = exchange.envelope.canonicalData()
        let origin: EventOrigin = exchange.endpoint == .getNotificationHistory ? .backfill : .apiClient
        let source = "api:\(exchange.endpoint.rawValue)#\(exchange.attempt)"
        let (batch, outcomes) = try ledger.ingestBatch([InboundMessage(raw: raw, source: source, origin: origin)])
        summary.add(batch)
        recorded.append(RecordedExchange(exchange: exchange, outcome: outcomes[0]))
    }
}

extension Ledger {
    /// Stores the path of a JSON credentials file (`issuerId`, `keyId`, `privateKeyFile`) in the
    /// ledger's configuration; the file is validated first. Only the path is stored.
    ///
    /// - Returns: warnings (e.g. a key file readable by others).
    @discardableResult
    public func setAPICredentialsFile(_ path: String) throws -> [String] {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        let (_, warnings) = try APICredentials.resolve(environment: [:], credentialsFile: absolute)
        try storeSetting(LedgerAPISettings.credentialsFile, absolute)
        return warnings
    }

    /// Stores a base URL override (e.g. a proxy); an empty string removes it.
    public func setAPIBaseURL(_ url: String) throws {
        if !url.isEmpty {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "https" || scheme == "http",
                  parsed.host != nil else {
                throw APIUsageError("the base URL must be an http(s) URL, got \(LedgerAPI.withoutUserInformation(url))")
            }
        }
        try storeSetting(LedgerAPISettings.baseURL, url)
    }
}
