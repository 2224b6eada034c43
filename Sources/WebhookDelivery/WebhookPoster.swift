import AppStoreAPI
import Foundation
import StandardWebhooks

/// Sends one webhook delivery: a signed `POST` of the body to an endpoint, and what came back.
///
/// The request carries `content-type: application/json`, `user-agent: SeatLedger-Webhooks/1` and
/// the three Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`,
/// one signature per secret of the signer: several during a rotation). The poster reads no wall
/// clock: the caller passes the timestamp (Unix seconds) it signs with; the latency is measured
/// with `ContinuousClock`. Redirects are never followed (the default transport is a
/// ``URLSessionTransport`` made with `followsRedirects: false`) and a 3xx counts as a failure.
/// The poster sends exactly once: retrying is the caller's (see ``DeliveryBackoff``).
///
/// ```swift
/// let poster = WebhookPoster(timeout: .seconds(10))
/// let outcome = try poster.post(to: endpoint, messageID: transitionID, timestamp: nowSeconds,
///                               body: body, signer: WebhookSigner(secrets: endpointSecrets))
/// if !outcome.succeeded { /* schedule a retry */ }
/// ```
public struct WebhookPoster: Sendable {
    /// The `user-agent` of every delivery.
    public static let userAgent = "SeatLedger-Webhooks/1"
    /// The most bytes of an answer kept in ``DeliveryAttemptOutcome/responseSnippet``.
    public static let snippetByteLimit = 512

    /// How long to wait for the whole answer.
    public let timeout: Duration
    /// What sends the request.
    public let transport: any HTTPTransport

    /// A poster waiting at most `timeout` for an answer, sending through `transport` (by default a
    /// ``URLSessionTransport`` that does not follow redirects).
    public init(timeout: Duration = .seconds(10), transport: (any HTTPTransport)? = nil) {
        precondition(timeout > .zero, "a delivery timeout is positive")
        self.timeout = timeout
        self.transport = transport ?? URLSessionTransport(timeout: Self.seconds(timeout), followsRedirects: false)
    }

    /// Delivers `body` to `endpoint` once, signed by `signer` for `messageID` at `timestamp`.
    ///
    /// - Parameters:
    ///   - endpoint: the validated endpoint URL.
    ///   - messageID: the `webhook-id`, the same on every retry of the delivery.
    ///   - timestamp: the `webhook-timestamp`, Unix seconds of this attempt (signed afresh on each).
    ///   - body: the exact JSON bytes sent and signed.
    ///   - signer: the endpoint's secrets, newest first.
    /// - Returns: the outcome; a failure to connect or to get an answer in time is an outcome with
    ///   no status, not an error.
    /// - Throws: ``WebhookSigningError`` when the delivery cannot be signed (an invalid id); nothing
    ///   is sent then.
    public func post(to endpoint: WebhookEndpointURL, messageID: String, timestamp: Int64, body: [UInt8],
                     signer: WebhookSigner) throws(WebhookSigningError) -> DeliveryAttemptOutcome {
        var headers = ["content-type": "application/json", "user-agent": Self.userAgent]
        for (name, value) in try signer.headers(id: messageID, timestamp: timestamp, body: body) { headers[name] = value }
        let request = HTTPRequest(method: "POST", url: endpoint.url, headers: headers, body: Data(body), timeout: Self.seconds(timeout))

        let clock = ContinuousClock()
        let start = clock.now
        let result: Result<HTTPResponse, TransportError>
        do { result = .success(try transport.send(request)) } catch { result = .failure(error) }
        let latency = Self.milliseconds(clock.now - start)

        switch result {
        case let .failure(error):
            return DeliveryAttemptOutcome(status: nil, latencyMilliseconds: latency, error: error.description)
        case let .success(response):
            var error: String?
            if (300..<400).contains(response.status) {
                let location = response.headers["location"].map { " to " + Self.snippet(Array($0.utf8), limit: 200) } ?? ""
                error = "answered \(response.status), a redirect\(location), which is not followed"
            }
            return DeliveryAttemptOutcome(status: response.status, latencyMilliseconds: latency,
                                          responseSnippet: Self.snippet([UInt8](response.body)), error: error)
        }
    }

    /// ``post(to:messageID:timestamp:body:signer:)`` for a body given as text (its UTF-8 bytes).
    public func post(to endpoint: WebhookEndpointURL, messageID: String, timestamp: Int64, body: String,
                     signer: WebhookSigner) throws(WebhookSigningError) -> DeliveryAttemptOutcome {
        try post(to: endpoint, messageID: messageID, timestamp: timestamp, body: Array(body.utf8), signer: signer)
    }

    /// At most `limit` bytes of `bytes` as text: cut before a UTF-8 sequence the limit would split,
    /// invalid bytes as U+FFFD, control characters (C0, DEL, C1) as spaces; never more than `limit`
    /// bytes of UTF-8.
    public static func snippet(_ bytes: [UInt8], limit: Int = WebhookPoster.snippetByteLimit) -> String {
        var end = min(limit, bytes.count)
        // Back up over continuation bytes so a multi-byte character is not split.
        if end < bytes.count {
            while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        }
        var scalars = String.UnicodeScalarView()
        for scalar in String(decoding: bytes[..<end], as: UTF8.self).unicodeScalars {
            scalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        var text = String(scalars)
        // Invalid bytes became U+FFFD (three bytes each): trim back under the limit.
        while text.utf8.count > limit { text.unicodeScalars.removeLast() }
        return text
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
