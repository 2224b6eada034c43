import AppStoreModels
import Foundation

/// Where and how the client talks to Apple.
public struct AppStoreAPIConfiguration: Sendable {
    /// `https://api.storekit-sandbox.apple.com`, a proxy, or a local stand-in (no trailing slash needed).
    public var baseURL: URL
    /// The ledger's environment, written into every recorded envelope.
    public var environment: AppStoreEnvironment
    /// Prefix before `/groups/v1/…` (default ``AppStoreAPIPaths/groupsPrefix``).
    public var groupsPathPrefix: String
    /// Seconds before one request is abandoned.
    public var timeout: TimeInterval
    /// Retries of 429 / 5xx / no response.
    public var retry: RetryPolicy

    /// Creates a configuration.
    public init(baseURL: URL, environment: AppStoreEnvironment, groupsPathPrefix: String = AppStoreAPIPaths.groupsPrefix,
                timeout: TimeInterval = 30, retry: RetryPolicy = RetryPolicy()) {
        self.baseURL = baseURL
        self.environment = environment
        self.groupsPathPrefix = groupsPathPrefix
        self.timeout = timeout
        self.retry = retry
    }
}

/// One HTTP response of one attempt, ready to be recorded as an `apiResponse` envelope.
public struct APIExchange: Sendable {
    /// The endpoint.
    public let endpoint: APIEndpoint
    /// The HTTP method.
    public let method: String
    /// Path and query as called, without the host.
    public let path: String
    /// The JSON request body, if any.
    public let requestBody: JSONValue?
    /// The HTTP status.
    public let status: Int
    /// The response body as JSON: `nil` when empty; when not JSON, the whole text as a JSON string
    /// (valid UTF-8) or `{"base64": "…"}` (any other bytes).
    public let body: JSONValue?
    /// When the response arrived (the event's `occurredAt`).
    public let respondedAt: EpochMillis
    /// 1 for the first request of a call, 2 for its first retry …
    public let attempt: Int
    /// The envelope's `context` (the call's context plus `attempt`).
    public let context: [String: JSONValue]
    /// The environment recorded in the envelope.
    public let environment: AppStoreEnvironment

    /// `{"apiResponse": {…}}` — SeatLedger's envelope (see `Events/api/README.md`). Headers, and
    /// so the bearer token, are never part of it.
    public var envelope: JSONValue {
        [
            "apiResponse": [
                "endpoint": .string(endpoint.rawValue), "method": .string(method), "path": .string(path),
                "requestBody": requestBody ?? .null, "status": .int(Int64(status)), "body": body ?? .null,
                "respondedAt": .string(Timestamp.iso8601(respondedAt)), "environment": .string(environment.rawValue),
                "context": .object(context),
            ],
        ]
    }

    /// `errorCode` of an error body.
    public var errorCode: Int64? { body?["errorCode"]?.int64Value }
}

/// One request of a call and what came of it.
public struct APIAttempt: Sendable, Equatable {
    /// 1-based.
    public let number: Int
    /// The HTTP status, or `nil` when no response arrived.
    public let status: Int?
    /// Why no response arrived (timeout, connection failure).
    public let transportError: String?
    /// Seconds waited after this attempt before the next one (0 for the last).
    public var waitedAfter: Double
}

/// The outcome of one call (after retries).
public struct APICallResult: Sendable {
    /// The call.
    public let call: APICall
    /// Path and query as called.
    public let path: String
    /// Every attempt, in order.
    public let attempts: [APIAttempt]
    /// The last response recorded, if any.
    public let lastExchange: APIExchange?
    /// Why the call stopped without a final answer (retries exhausted, no response), if so.
    public let failure: String?

    /// The final HTTP status (`nil`: no response at all).
    public var status: Int? { lastExchange?.status }
    /// The final response body.
    public var body: JSONValue? { lastExchange?.body }
    /// Whether the final status is 2xx.
    public var isSuccess: Bool { status.map { (200..<300).contains($0) } ?? false }
    /// `errorCode` of the final error body.
    public var errorCode: Int64? { lastExchange?.errorCode }
    /// `errorMessage` of the final error body.
    public var errorMessage: String? { body?["errorMessage"]?.stringValue }

    /// `GetSeatInfo → 200`, `ClaimSeat → 400 (error 4000xxx: …)`, `GetSeatInfo → no response (…)`.
    public var summary: String {
        var text = "\(call.endpoint.rawValue) → "
        if let status {
            text += "\(status)"
            if !isSuccess {
                let detail = [errorCode.map { "error \($0)" }, errorMessage].compactMap { $0 }.joined(separator: ": ")
                if !detail.isEmpty { text += " (\(detail))" }
            }
        } else {
            text += "no response"
        }
        if attempts.count > 1 { text += " after \(attempts.count) attempts" }
        if let failure, status == nil || !isSuccess { text += "; \(failure)" }
        return text
    }

    /// JSON summary for `--json` output.
    public var json: JSONValue {
        [
            "endpoint": .string(call.endpoint.rawValue), "method": .string(call.method), "path": .string(path),
            "status": status.map { .int(Int64($0)) } ?? .null, "errorCode": .optional(errorCode),
            "errorMessage": .optional(errorMessage), "attempts": .count(attempts.count), "failure": .optional(failure),
        ]
    }
}

/// An App Store Server API client that records every response before anyone sees it.
///
/// Each HTTP response (success, error, or a retried 429/5xx) is turned into an ``APIExchange``
/// and handed to `record` **before** the client decides to retry or returns; if recording throws,
/// the call stops with that error. Authentication is an ES256 bearer token from
/// ``APITokenProvider``; the `Authorization` header is never logged or recorded.
///
/// A ledger's own client comes from `SeatLedgerAppStoreAPI`, which records into the ledger:
///
/// ```swift
/// let (api, notes) = try LedgerAPI.connect(ledger)   // credentials from the ledger's configuration
/// let (result, recorded) = try api.perform(.getSeatInfo(originalTransactionId: "2000000000000001"))
/// ```
///
/// ``send(_:)`` blocks the calling thread for the whole call, retries and `Retry-After` waits
/// included: call it off Swift's cooperative pool (`LedgerPool.write` runs it on its writer).
public final class AppStoreServerAPIClient {
    /// Where and how to call.
    public let configuration: AppStoreAPIConfiguration
    private let tokens: APITokenProvider
    private let transport: any HTTPTransport
    private let record: (APIExchange) throws -> Void
    private let clock: () -> EpochMillis
    private let sleep: (Double) -> Void
    private let random: () -> Double
    private let log: (String) -> Void

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - transport: defaults to ``URLSessionTransport``.
    ///   - clock: the `respondedAt` clock (default: now).
    ///   - sleep: waits between attempts (injectable so tests do not wait).
    ///   - random: jitter source in 0..<1.
    ///   - log: progress lines (retries); never given headers or tokens.
    ///   - record: called with every response, before anything else happens.
    public init(configuration: AppStoreAPIConfiguration, tokens: APITokenProvider,
                transport: any HTTPTransport = URLSessionTransport(),
                clock: @escaping () -> EpochMillis = { Timestamp.millis(Date()) },
                sleep: @escaping (Double) -> Void = { Thread.sleep(forTimeInterval: $0) },
                random: @escaping () -> Double = { Double.random(in: 0..<1) },
                log: @escaping (String) -> Void = { _ in },
                record: @escaping (APIExchange) throws -> Void) {
        self.configuration = configuration
        self.tokens = tokens
        self.transport = transport
        self.clock = clock
        self.sleep = sleep
        self.random = random
        self.log = log
        self.record = record
    }

    /// The path (with prefix and query, without host) `call` is sent to.
    public func path(of call: APICall) -> String {
        switch call.family {
        case .classic: return AppStoreAPIPaths.classicPrefix + call.relativePath
        case .groups: return configuration.groupsPathPrefix + call.relativePath
        }
    }

    /// Sends `call`, retrying per the policy; records each response before continuing.
    ///
    /// HTTP errors are results, not throws: inspect ``APICallResult/isSuccess``. Throws only when
    /// the call may not be made (a guarded endpoint built without its guard, no token) or a
    /// response could not be recorded.
    public func send(_ call: APICall) throws -> APICallResult {
        if AssignedTransactionGuard.refusals[call.endpoint] != nil, !call.ownershipChecked {
            throw APIUsageError("\(call.endpoint.rawValue) must be built through AssignedTransactionGuard (Apple refuses it for ASSIGNED transactions)")
        }
        let path = path(of: call)
        let base = configuration.baseURL.absoluteString.hasSuffix("/")
            ? String(configuration.baseURL.absoluteString.dropLast()) : configuration.baseURL.absoluteString
        guard let url = URL(string: base + path) else { throw APIUsageError("cannot form a URL from \(base) and \(path)") }
        let bodyData = call.body.map { $0.canonicalData() }
        var attempts: [APIAttempt] = []
        var last: APIExchange?
        var attempt = 0
        while true {
            attempt += 1
            var headers = ["Authorization": "Bearer " + (try tokens.token()), "Accept": "application/json",
                           "User-Agent": "seatledger"]
            if bodyData != nil { headers["Content-Type"] = "application/json" }
            let request = HTTPRequest(method: call.method, url: url, headers: headers, body: bodyData, timeout: configuration.timeout)
            var response: HTTPResponse?
            var transportError: TransportError?
            do {
                response = try transport.send(request)
            } catch {
                transportError = error
            }
            var errorCode: Int64?
            if let response {
                let exchange = APIExchange(
                    endpoint: call.endpoint, method: call.method, path: path, requestBody: call.body, status: response.status,
                    body: Self.parseBody(response.body), respondedAt: clock(), attempt: attempt,
                    context: call.context.merging(["attempt": .count(attempt)]) { _, new in new },
                    environment: configuration.environment)
                try record(exchange)
                last = exchange
                errorCode = exchange.errorCode
            }
            attempts.append(APIAttempt(number: attempt, status: response?.status, transportError: transportError?.description, waitedAfter: 0))
            switch configuration.retry.decide(attempt: attempt, response: response, errorCode: errorCode, random: random()) {
            case .stop:
                return APICallResult(call: call, path: path, attempts: attempts, lastExchange: last, failure: nil)
            case .giveUp(let reason):
                return APICallResult(call: call, path: path, attempts: attempts, lastExchange: last,
                                     failure: "gave up: \(reason)" + (transportError.map { " (\($0.description))" } ?? ""))
            case .retry(let delay):
                let what = response.map { "HTTP \($0.status)" } ?? (transportError?.description ?? "no response")
                log("\(call.endpoint.rawValue): \(what); retrying in \(String(format: "%.1f", delay)) s "
                    + "(attempt \(attempt + 1) of \(configuration.retry.maximumAttempts))")
                attempts[attempts.count - 1].waitedAfter = delay
                sleep(delay)
            }
        }
    }

    /// The response body as JSON, never truncated and never decoded lossily.
    ///
    /// - Returns: `nil` when empty (or only whitespace); the parsed JSON when it is JSON; the whole
    ///   text as a JSON string when it is valid UTF-8; otherwise `{"base64": "<standard base64 of
    ///   every byte>"}`.
    static func parseBody(_ data: Data) -> JSONValue? {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
        if let json = try? JSONValue.parse(data) { return json }
        if let text = String(validating: data, as: UTF8.self) { return .string(text) }
        return ["base64": .string(data.base64EncodedString())]
    }
}
