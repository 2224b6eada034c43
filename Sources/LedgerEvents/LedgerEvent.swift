import AppStoreModels
import Foundation

/// Which certificate chain vouched for one JWS inside an event.
public struct VerificationRecord: Sendable, Hashable {
    /// Where the JWS sits, e.g. `signedPayload`, `data.signedTransactionInfo`, `body.signedTransactions[0]`.
    public let path: String
    /// SHA-256 of the configured root that anchored the chain.
    public let rootFingerprint: String
    /// SHA-256 of the intermediate certificate.
    public let intermediateFingerprint: String
    /// SHA-256 of the leaf (signing) certificate.
    public let leafFingerprint: String

    /// Creates a record.
    public init(path: String, rootFingerprint: String, intermediateFingerprint: String, leafFingerprint: String) {
        self.path = path
        self.rootFingerprint = rootFingerprint
        self.intermediateFingerprint = intermediateFingerprint
        self.leafFingerprint = leafFingerprint
    }

    /// As JSON, for the stored verification column.
    public var json: JSONValue {
        .object([
            "path": .string(path), "root": .string(rootFingerprint),
            "intermediate": .string(intermediateFingerprint), "leaf": .string(leafFingerprint),
        ])
    }

    /// Reads a record back from JSON.
    public init?(json: JSONValue) {
        guard let path = json["path"]?.stringValue, let root = json["root"]?.stringValue,
              let intermediate = json["intermediate"]?.stringValue, let leaf = json["leaf"]?.stringValue else { return nil }
        self.init(path: path, rootFingerprint: root, intermediateFingerprint: intermediate, leafFingerprint: leaf)
    }
}

/// A verified, decoded message ready to append: everything an event row holds except its
/// position, recorded-at time and hashes, which the store assigns.
public struct NewEvent: Sendable {
    /// The idempotency key: `notificationUUID`, the SHA-256 of a canonical API envelope, or a
    /// decision's SHA-256 of its raw bytes.
    public let eventId: String
    /// Notification, API response or operator decision.
    public let kind: EventKind
    /// `notificationType`, or the API endpoint name.
    public let type: String?
    /// The notification `subtype`.
    public let subtype: String?
    /// HTTP status for API responses.
    public let status: Int64?
    /// When Apple signed it (`signedDate`), or when the API responded (`respondedAt`).
    public let occurredAt: EpochMillis
    /// The bytes exactly as received.
    public let raw: Data
    /// The decoded payload, nested signed data decoded too.
    public let decoded: JSONValue
    /// Every identifier the event mentions.
    public let identifiers: [EventIdentifier]
    /// One record per verified JWS.
    public let verification: [VerificationRecord]
    /// Where it came from (`file.ndjson:12`, `spool/abc.json`, `stdin:3`, `redis:1700-0`).
    public let source: String
    /// How it reached us.
    public let origin: EventOrigin
    /// ``decoded`` as the store keeps it: canonical JSON text of ``StoredDecoded/strip(_:kind:)``
    /// (without the nested JWS strings `raw` already holds). Rendered once when the event is
    /// created, on the decoding threads, so the single writer only copies it.
    public let decodedText: String
    /// ``verification`` as the store keeps it (canonical JSON array), rendered with ``decodedText``.
    public let verificationText: String

    /// Creates a new event.
    public init(eventId: String, kind: EventKind, type: String?, subtype: String?, status: Int64?,
                occurredAt: EpochMillis, raw: Data, decoded: JSONValue, identifiers: [EventIdentifier],
                verification: [VerificationRecord], source: String, origin: EventOrigin) {
        self.eventId = eventId
        self.kind = kind
        self.type = type
        self.subtype = subtype
        self.status = status
        self.occurredAt = occurredAt
        self.raw = raw
        self.decoded = decoded
        self.identifiers = identifiers
        self.verification = verification
        self.source = source
        self.origin = origin
        self.decodedText = StoredDecoded.storedText(decoded, kind: kind)
        self.verificationText = JSONValue.array(verification.map(\.json)).canonicalString()
    }
}

/// An event as stored in the ledger.
public struct LedgerEvent: Sendable {
    /// Gap-free position in the log, from 1.
    public let position: Int64
    /// The idempotency key: `notificationUUID`, or the SHA-256 of a canonical API envelope or decision.
    public let eventId: String
    /// Notification, API response or operator decision.
    public let kind: EventKind
    /// `notificationType`, the API endpoint name, or the decision type; verbatim.
    public let type: String?
    /// The notification `subtype` (`nil` for API responses and decisions).
    public let subtype: String?
    /// HTTP status of an API response (`nil` for notifications and decisions).
    public let status: Int64?
    /// Apple's signed time (valid time; drives `--as-of`).
    public let occurredAt: EpochMillis
    /// Our clock when it was committed (transaction time; drives `--known-at`).
    public let recordedAt: EpochMillis
    /// Where it came from (`notifications.ndjson:12`, `spool:abc.json`, `stdin:3`, `redis:<key>:<id>`).
    public let source: String
    /// The path it reached the ledger by (covered by the hash chain).
    public let origin: EventOrigin
    /// The bytes exactly as received.
    public let raw: Data
    /// The decoded payload (a cache of `raw`).
    public let decoded: JSONValue
    /// One record per verified JWS it carries (empty for a decision).
    public let verification: [VerificationRecord]
    /// This event's chain hash.
    public let hash: Data

    /// Creates a stored event.
    public init(position: Int64, eventId: String, kind: EventKind, type: String?, subtype: String?, status: Int64?,
                occurredAt: EpochMillis, recordedAt: EpochMillis, source: String, origin: EventOrigin, raw: Data,
                decoded: JSONValue, verification: [VerificationRecord], hash: Data) {
        self.position = position
        self.eventId = eventId
        self.kind = kind
        self.type = type
        self.subtype = subtype
        self.status = status
        self.occurredAt = occurredAt
        self.recordedAt = recordedAt
        self.source = source
        self.origin = origin
        self.raw = raw
        self.decoded = decoded
        self.verification = verification
        self.hash = hash
    }
}
