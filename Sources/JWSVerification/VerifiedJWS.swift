import AppStoreModels
import Foundation

/// A JWS whose signature and certificate chain checked out, with its decoded parts.
public struct VerifiedJWS: Sendable {
    /// The decoded protected header (`alg`, `x5c`, …).
    public let header: JSONValue
    /// The decoded payload (always a JSON object).
    public let payload: JSONValue
    /// The payload bytes exactly as signed (base64url-decoded), kept as decoded and wrapped in
    /// `Data` only when asked for (most callers need only ``payload``).
    let payloadByteArray: [UInt8]
    /// The payload's `signedDate` (or the date member the caller named, e.g. an `AppTransaction`'s
    /// `receiptCreationDate`), if it had one: also the instant the chain was validated at.
    public let signedDate: Date?
    /// Lowercase hex SHA-256 of the configured trust anchor the chain ended at.
    public let rootFingerprint: String
    /// Lowercase hex SHA-256 of the intermediate certificate (`x5c[1]`).
    public let intermediateFingerprint: String
    /// Lowercase hex SHA-256 of the leaf certificate (`x5c[0]`).
    public let leafFingerprint: String

    /// The payload bytes exactly as signed (base64url-decoded).
    public var payloadBytes: Data { Data(payloadByteArray) }
}
