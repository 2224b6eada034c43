import Foundation

/// A Standard Webhooks signing secret: 24 to 64 random bytes, written `whsec_` + base64.
///
/// The secret never shows in text by accident: `description`, `debugDescription`, `dump` and
/// `Mirror` give `whsec_…(redacted, sha256 prefix 1a2b3c4d)` (the first 8 hex digits of the
/// SHA-256 of the key bytes, enough to tell two secrets apart, useless to sign). The one place
/// that shows a secret to its owner reads ``revealedText``.
///
/// ```swift
/// let secret = WebhookSecret.generate()
/// print(secret)                  // whsec_…(redacted, sha256 prefix 5f0c9a1e)
/// show(secret.revealedText)      // whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw… (once, to its owner)
/// let again = try WebhookSecret(parsing: stored)
/// ```
public struct WebhookSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The text form's prefix, `whsec_`.
    public static let prefix = "whsec_"
    /// The fewest key bytes accepted (192 bits), as the specification recommends.
    public static let minimumByteCount = 24
    /// The most key bytes accepted (512 bits), as the specification recommends.
    public static let maximumByteCount = 64
    /// The length of a generated key (256 bits).
    public static let generatedByteCount = 32

    /// The HMAC key: the base64-decoded part of the text form.
    let key: [UInt8]

    /// Wraps key bytes; throws ``WebhookSecretError/tooShort(byteCount:minimum:)`` or
    /// ``WebhookSecretError/tooLong(byteCount:maximum:)`` outside 24…64 bytes.
    public init(keyBytes: [UInt8]) throws(WebhookSecretError) {
        if keyBytes.count < Self.minimumByteCount { throw .tooShort(byteCount: keyBytes.count, minimum: Self.minimumByteCount) }
        if keyBytes.count > Self.maximumByteCount { throw .tooLong(byteCount: keyBytes.count, maximum: Self.maximumByteCount) }
        key = keyBytes
    }

    /// Wraps key bytes already known to be 24…64 long (a generated key).
    private init(checkedKeyBytes: [UInt8]) {
        key = checkedKeyBytes
    }

    /// Parses the text form `whsec_<base64 of 24…64 bytes>` (standard alphabet, padded).
    /// Leading and trailing whitespace (a newline from a file) is ignored. Errors say what is
    /// wrong and never contain the text.
    public init(parsing text: String) throws(WebhookSecretError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(Self.prefix) else { throw .missingPrefix }
        let encoded = trimmed.dropFirst(Self.prefix.count)
        guard !encoded.isEmpty, let bytes = Data(base64Encoded: String(encoded)) else { throw .notBase64 }
        try self.init(keyBytes: [UInt8](bytes))
    }

    /// A new secret of 32 bytes from the system's cryptographically secure generator
    /// (`SystemRandomNumberGenerator`: `getrandom(2)` on Linux).
    public static func generate() -> WebhookSecret {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<generatedByteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return WebhookSecret(checkedKeyBytes: bytes)   // 32 bytes: inside 24…64
    }

    /// The secret itself, `whsec_` + base64: for the one place that shows it to its owner (and
    /// for storing it). Nothing else reveals it.
    public var revealedText: String { Self.prefix + Data(key).base64EncodedString() }

    /// The first 8 lowercase hex digits of the SHA-256 of the key bytes: names a secret in logs
    /// and listings without revealing it.
    public var fingerprint: String {
        sha256(key).prefix(4).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }

    /// `whsec_…(redacted, sha256 prefix <fingerprint>)`: never the secret.
    public var description: String { "\(Self.prefix)…(redacted, sha256 prefix \(fingerprint))" }

    /// The same as ``description``: never the secret.
    public var debugDescription: String { "WebhookSecret(\(description))" }

    /// A mirror with the fingerprint only, so `dump` and reflection never show the key bytes.
    public var customMirror: Mirror { Mirror(self, children: ["fingerprint": fingerprint], displayStyle: .struct) }
}

/// Why a text or byte string is not a webhook secret. The messages name the problem and never
/// contain the secret.
public enum WebhookSecretError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text does not start with `whsec_`.
    case missingPrefix
    /// The part after `whsec_` is empty or not base64 (standard alphabet, with padding).
    case notBase64
    /// The key has fewer than `minimum` bytes.
    case tooShort(byteCount: Int, minimum: Int)
    /// The key has more than `maximum` bytes.
    case tooLong(byteCount: Int, maximum: Int)

    /// What is wrong, without the secret.
    public var description: String {
        switch self {
        case .missingPrefix: "not a webhook secret: it must start with \(WebhookSecret.prefix)"
        case .notBase64: "not a webhook secret: the part after \(WebhookSecret.prefix) is not base64"
        case let .tooShort(count, minimum): "webhook secret too short: \(count) bytes, at least \(minimum) needed"
        case let .tooLong(count, maximum): "webhook secret too long: \(count) bytes, at most \(maximum) allowed"
        }
    }
}
