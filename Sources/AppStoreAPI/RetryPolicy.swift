import AppStoreModels
import Foundation

/// When and how long to wait before repeating an App Store Server API request.
///
/// - `429` (`RateLimitExceededError`): wait `Retry-After` (seconds or an HTTP date) plus a little
///   jitter; without the header, back off exponentially. A `Retry-After` longer than
///   ``maximumRetryAfter`` ends the call instead of retrying early.
/// - `5xx` (including `GeneralInternalError`) and any response whose `errorCode` is
///   `GeneralInternalRetryableError` (5000001): exponential backoff with jitter.
/// - No response (timeout, connection failure): exponential backoff with jitter (safe: reads are
///   idempotent and Claim Seat is idempotent per `requestIdentifier`).
/// - Any other status: not retried.
///
/// At most ``maximumAttempts`` requests are made in total.
public struct RetryPolicy: Sendable, Equatable {
    /// Requests in total, the first included (≥ 1).
    public var maximumAttempts: Int
    /// The first backoff delay (seconds); doubles on each retry.
    public var baseDelay: Double
    /// The largest backoff delay (seconds).
    public var maximumDelay: Double
    /// The longest `Retry-After` honoured (seconds); longer ends the call.
    public var maximumRetryAfter: Double

    /// `GeneralInternalRetryableError`'s code in Apple's server libraries.
    public static let generalInternalRetryableErrorCode: Int64 = 5_000_001

    /// Creates a policy (defaults: 5 attempts, 0.5 s doubling up to 30 s, `Retry-After` up to 120 s).
    public init(maximumAttempts: Int = 5, baseDelay: Double = 0.5, maximumDelay: Double = 30, maximumRetryAfter: Double = 120) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maximumDelay = max(0, maximumDelay)
        self.maximumRetryAfter = max(0, maximumRetryAfter)
    }

    /// What to do after one attempt.
    public enum Decision: Sendable, Equatable {
        /// Stop: the outcome is final.
        case stop
        /// Wait this many seconds, then try again.
        case retry(after: Double)
        /// Retryable, but no attempts (or patience) left; the reason says why.
        case giveUp(String)
    }

    /// Whether a response with `status` and `errorCode` may succeed when repeated.
    public static func isRetryable(status: Int, errorCode: Int64?) -> Bool {
        status == 429 || (500...599).contains(status) || errorCode == generalInternalRetryableErrorCode
    }

    /// The decision after attempt number `attempt` (1-based) got `response` (or none: `nil`).
    ///
    /// - Parameter random: a uniform value in 0..<1 for jitter.
    public func decide(attempt: Int, response: HTTPResponse?, errorCode: Int64?, now: Date = Date(),
                       random: Double) -> Decision {
        if let response, !Self.isRetryable(status: response.status, errorCode: errorCode) { return .stop }
        guard attempt < maximumAttempts else {
            let what = response.map { "HTTP \($0.status)" } ?? "no response"
            return .giveUp("\(what) after \(attempt) attempt\(attempt == 1 ? "" : "s") (the limit)")
        }
        if let response, response.status == 429, let header = response.headers["retry-after"],
           let seconds = Self.retryAfterSeconds(header, now: now) {
            guard seconds <= maximumRetryAfter else {
                return .giveUp("Apple asked to retry after \(Int(seconds)) s, more than the \(Int(maximumRetryAfter)) s this client waits")
            }
            return .retry(after: seconds + min(1, max(0.05, seconds * 0.1)) * random)
        }
        return .retry(after: backoff(retry: attempt, random: random))
    }

    /// Exponential backoff with "equal jitter": half the step fixed, half random.
    public func backoff(retry: Int, random: Double) -> Double {
        let step = min(maximumDelay, baseDelay * pow(2, Double(max(0, retry - 1))))
        return step / 2 + step / 2 * min(1, max(0, random))
    }

    /// `Retry-After` as seconds from `now`: delta-seconds or an HTTP date; `nil` when unreadable.
    public static func retryAfterSeconds(_ header: String, now: Date = Date()) -> Double? {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds >= 0, seconds.isFinite { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
