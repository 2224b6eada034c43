import Foundation

/// Signs webhook deliveries as the Standard Webhooks specification says.
///
/// For a message id, a Unix timestamp in seconds and the exact body bytes, the signed content is
/// `"<id>.<timestamp>.<body>"` and each signature is `v1,` + base64(HMAC-SHA256(key, content)),
/// one per secret, newest first, separated by single spaces (several during a rotation). The
/// same id, timestamp, body and secrets always give the same headers.
///
/// ```swift
/// let signer = WebhookSigner(secrets: [newSecret, oldSecret])
/// for (name, value) in try signer.headers(id: transitionID, timestamp: now, body: body) {
///     request.setValue(value, forHTTPHeaderField: name)
/// }
/// ```
public struct WebhookSigner: Sendable {
    /// The header carrying the message id, which stays the same across retries.
    public static let idHeader = "webhook-id"
    /// The header carrying the Unix timestamp (seconds) the message was signed at.
    public static let timestampHeader = "webhook-timestamp"
    /// The header carrying the space-separated `v1,<base64>` signatures.
    public static let signatureHeader = "webhook-signature"

    /// The secrets signed with, newest first (the order of the signatures).
    public let secrets: [WebhookSecret]

    /// A signer for one or more secrets, newest first; `secrets` must not be empty.
    public init(secrets: [WebhookSecret]) {
        precondition(!secrets.isEmpty, "a webhook signer needs at least one secret")
        self.secrets = secrets
    }

    /// A signer for one secret.
    public init(secret: WebhookSecret) { self.init(secrets: [secret]) }

    /// The three headers of a delivery, in this order: `webhook-id` (`id`), `webhook-timestamp`
    /// (`timestamp`, decimal Unix seconds) and `webhook-signature` (one `v1,` signature per
    /// secret, newest first). Throws ``WebhookSigningError/invalidID`` for an id that is empty,
    /// longer than 256 bytes or holds anything but printable ASCII without space (it must be
    /// a header value).
    public func headers(id: String, timestamp: Int64, body: [UInt8]) throws(WebhookSigningError) -> [(name: String, value: String)] {
        [
            (Self.idHeader, id),
            (Self.timestampHeader, String(timestamp)),
            (Self.signatureHeader, try signatures(id: id, timestamp: timestamp, body: body).joined(separator: " ")),
        ]
    }

    /// ``headers(id:timestamp:body:)`` for a body given as text (its UTF-8 bytes are signed).
    public func headers(id: String, timestamp: Int64, body: String) throws(WebhookSigningError) -> [(name: String, value: String)] {
        try headers(id: id, timestamp: timestamp, body: Array(body.utf8))
    }

    /// The `v1,<base64>` signatures, one per secret, newest first.
    public func signatures(id: String, timestamp: Int64, body: [UInt8]) throws(WebhookSigningError) -> [String] {
        try Self.checkID(id)
        var result: [String] = []
        for secret in secrets {
            result.append("v1," + Data(try Self.tag(key: secret.key, id: id, timestamp: timestamp, body: body)).base64EncodedString())
        }
        return result
    }

    /// HMAC-SHA256 of `"<id>.<timestamp>.<body>"` under `key`.
    static func tag(key: [UInt8], id: String, timestamp: Int64, body: [UInt8]) throws(WebhookSigningError) -> [UInt8] {
        try HMACSHA256.tag(key: key, parts: [Array(id.utf8), Array(".\(timestamp).".utf8), body])
    }

    static func checkID(_ id: String) throws(WebhookSigningError) {
        let bytes = Array(id.utf8)
        guard !bytes.isEmpty, bytes.count <= 256, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .invalidID }
    }
}

/// Why a delivery could not be signed.
public enum WebhookSigningError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message id is empty, longer than 256 bytes, or not printable ASCII without space.
    case invalidID
    /// OpenSSL failed at `operation` (`reason`: its error queue; never key material).
    case openSSL(operation: String, reason: String)

    /// What went wrong.
    public var description: String {
        switch self {
        case .invalidID: "webhook id must be 1 to 256 bytes of printable ASCII without space"
        case let .openSSL(operation, reason): "webhook signing failed in OpenSSL \(operation): \(reason)"
        }
    }
}
