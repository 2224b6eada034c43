import Foundation

/// Verifies a Standard Webhooks delivery: its three headers against one or more secrets, and its
/// timestamp against an injected `now` within a tolerance.
///
/// A delivery is accepted when `webhook-id`, `webhook-timestamp` and `webhook-signature` are each
/// present once (names compared case-insensitively), the timestamp is decimal Unix seconds no
/// more than `tolerance` seconds before or after `now`, and at least one `v1,` signature of the
/// header equals, compared in constant time, the HMAC-SHA256 of `"<id>.<timestamp>.<body>"`
/// under one of the secrets. Signatures of other versions (`v1a,…`) are skipped. The verifier
/// reads no clock: the caller passes `now`.
///
/// ```swift
/// let verifier = WebhookVerifier(secrets: [secret])
/// try verifier.verify(headers: request.headers, body: request.body, now: Date())
/// ```
public struct WebhookVerifier: Sendable {
    /// The tolerance the specification recommends: 5 minutes either side of `now`.
    public static let defaultTolerance: Int64 = 300

    /// The secrets a signature may be made with (any one matching is enough).
    public let secrets: [WebhookSecret]
    /// How far, in seconds, a timestamp may lie before or after `now`.
    public let tolerance: Int64

    /// A verifier accepting signatures by any of `secrets` (not empty) within `tolerance` seconds.
    public init(secrets: [WebhookSecret], tolerance: Int64 = WebhookVerifier.defaultTolerance) {
        precondition(!secrets.isEmpty, "a webhook verifier needs at least one secret")
        precondition(tolerance >= 0, "a tolerance is not negative")
        self.secrets = secrets
        self.tolerance = tolerance
    }

    /// A verifier for one secret.
    public init(secret: WebhookSecret, tolerance: Int64 = WebhookVerifier.defaultTolerance) {
        self.init(secrets: [secret], tolerance: tolerance)
    }

    /// Verifies a delivery and returns its id and timestamp, or throws the first thing wrong, in
    /// this order: a header missing or repeated, a malformed timestamp, a timestamp too old or too
    /// new for `now` (floored to whole seconds), a malformed signature entry, no matching signature.
    @discardableResult
    public func verify(headers: [(name: String, value: String)], body: [UInt8], now: Date) throws(WebhookVerificationError) -> VerifiedWebhook {
        let id = try Self.single(WebhookSigner.idHeader, in: headers)
        let timestampText = try Self.single(WebhookSigner.timestampHeader, in: headers)
        let signatureText = try Self.single(WebhookSigner.signatureHeader, in: headers)

        guard !timestampText.isEmpty, timestampText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let timestamp = Int64(timestampText) else {
            throw .malformedTimestamp
        }
        let current = Int64(now.timeIntervalSince1970.rounded(.down))
        if timestamp < current - tolerance { throw .timestampTooOld(timestamp: timestamp, now: current, tolerance: tolerance) }
        if timestamp > current + tolerance { throw .timestampTooNew(timestamp: timestamp, now: current, tolerance: tolerance) }

        var offered: [[UInt8]] = []
        for entry in signatureText.split(separator: " ", omittingEmptySubsequences: true) {
            guard let comma = entry.firstIndex(of: ",") else { throw .malformedSignature }
            guard entry[..<comma] == "v1" else { continue }
            guard let bytes = Data(base64Encoded: String(entry[entry.index(after: comma)...])) else { throw .malformedSignature }
            offered.append([UInt8](bytes))
        }
        for secret in secrets {
            let expected: [UInt8]
            do { expected = try WebhookSigner.tag(key: secret.key, id: id, timestamp: timestamp, body: body) } catch {
                throw .openSSL(error.description)
            }
            // Every offered signature is compared, so the time taken does not say which matched.
            var matched = false
            for signature in offered where constantTimeEqual(signature, expected) { matched = true }
            if matched { return VerifiedWebhook(id: id, timestamp: timestamp) }
        }
        throw .noMatchingSignature(offered: offered.count)
    }

    /// ``verify(headers:body:now:)`` for headers in a dictionary (names in any case).
    @discardableResult
    public func verify(headers: [String: String], body: [UInt8], now: Date) throws(WebhookVerificationError) -> VerifiedWebhook {
        try verify(headers: headers.map { (name: $0.key, value: $0.value) }, body: body, now: now)
    }

    /// ``verify(headers:body:now:)`` for a body given as text (its UTF-8 bytes).
    @discardableResult
    public func verify(headers: [(name: String, value: String)], body: String, now: Date) throws(WebhookVerificationError) -> VerifiedWebhook {
        try verify(headers: headers, body: Array(body.utf8), now: now)
    }

    static func single(_ name: String, in headers: [(name: String, value: String)]) throws(WebhookVerificationError) -> String {
        let values = headers.filter { $0.name.lowercased() == name }.map(\.value)
        guard let value = values.first, !value.isEmpty else { throw .missingHeader(name) }
        guard values.count == 1 else { throw .repeatedHeader(name) }
        return value
    }
}

/// What a verified delivery carried besides its body.
public struct VerifiedWebhook: Sendable, Equatable {
    /// The `webhook-id`: the same across retries, for de-duplication.
    public let id: String
    /// The `webhook-timestamp` in Unix seconds.
    public let timestamp: Int64
}

/// Why a delivery was refused. Messages never contain a secret or a signature.
public enum WebhookVerificationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The named header is absent or empty.
    case missingHeader(String)
    /// The named header appears more than once.
    case repeatedHeader(String)
    /// `webhook-timestamp` is not decimal Unix seconds.
    case malformedTimestamp
    /// The timestamp lies more than `tolerance` seconds before `now`.
    case timestampTooOld(timestamp: Int64, now: Int64, tolerance: Int64)
    /// The timestamp lies more than `tolerance` seconds after `now`.
    case timestampTooNew(timestamp: Int64, now: Int64, tolerance: Int64)
    /// An entry of `webhook-signature` is not `<version>,<signature>`, or a `v1` signature is not base64.
    case malformedSignature
    /// None of the `offered` `v1` signatures was made with any of the verifier's secrets over this
    /// id, timestamp and body.
    case noMatchingSignature(offered: Int)
    /// OpenSSL could not compute the HMAC.
    case openSSL(String)

    /// What is wrong.
    public var description: String {
        switch self {
        case let .missingHeader(name): "webhook refused: header \(name) is missing"
        case let .repeatedHeader(name): "webhook refused: header \(name) appears more than once"
        case .malformedTimestamp: "webhook refused: \(WebhookSigner.timestampHeader) is not Unix seconds"
        case let .timestampTooOld(timestamp, now, tolerance): "webhook refused: timestamp \(timestamp) is \(now - timestamp) s before now (\(now)), more than \(tolerance) s"
        case let .timestampTooNew(timestamp, now, tolerance): "webhook refused: timestamp \(timestamp) is \(timestamp - now) s after now (\(now)), more than \(tolerance) s"
        case .malformedSignature: "webhook refused: \(WebhookSigner.signatureHeader) has an entry that is not <version>,<base64>"
        case let .noMatchingSignature(offered): "webhook refused: none of the \(offered) v1 signatures matches a secret"
        case let .openSSL(reason): "webhook verification failed: \(reason)"
        }
    }
}
