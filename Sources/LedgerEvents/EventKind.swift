import AppStoreModels

/// What an event records: a server notification or an App Store Server API response.
public struct EventKind: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An App Store Server Notification V2 (`signedPayload`).
    public static let notification = Self(rawValue: "notification")
    /// An `apiResponse` envelope.
    public static let apiResponse = Self(rawValue: "apiResponse")
    public static let knownValues: Set<String> = ["notification", "apiResponse"]
}

/// The kind of an identifier an event mentions; every kind is indexed.
public struct IdentifierKind: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let notificationUUID = Self(rawValue: "notificationUUID")
    public static let originalTransactionId = Self(rawValue: "originalTransactionId")
    public static let transactionId = Self(rawValue: "transactionId")
    public static let appTransactionId = Self(rawValue: "appTransactionId")
    public static let seatClaimId = Self(rawValue: "seatClaimId")
    public static let groupId = Self(rawValue: "groupId")
    /// A free-form member reference from an envelope's `context.memberRef`.
    public static let memberRef = Self(rawValue: "memberRef")
    /// The `requestIdentifier` of a Claim Seat request.
    public static let requestIdentifier = Self(rawValue: "requestIdentifier")
    /// The customer identifier in a Get Customer Groups path (which id kind Apple expects is undocumented).
    public static let customerId = Self(rawValue: "customerId")
    public static let knownValues: Set<String> = [
        "notificationUUID", "originalTransactionId", "transactionId", "appTransactionId", "seatClaimId", "groupId",
        "memberRef", "requestIdentifier", "customerId",
    ]
}

/// One identifier an event mentions, e.g. `seatClaimId 7a1e…`.
public struct EventIdentifier: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// What kind of identifier it is.
    public let kind: IdentifierKind
    /// Its value, verbatim.
    public let value: String

    /// Creates an identifier.
    public init(_ kind: IdentifierKind, _ value: String) {
        self.kind = kind
        self.value = value
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.kind.rawValue, lhs.value) < (rhs.kind.rawValue, rhs.value)
    }

    public var description: String { "\(kind.rawValue)=\(value)" }
}

/// Where an event came from, for replay and audit ("arrived via backfill").
public struct EventOrigin: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Delivered to us: a file, stdin, a spool directory or a queue.
    public static let live = Self(rawValue: "live")
    /// Recovered from Get Notification History.
    public static let backfill = Self(rawValue: "backfill")
    /// Appended with `seatledger record` or by the API client.
    public static let recorded = Self(rawValue: "recorded")
    public static let knownValues: Set<String> = ["live", "backfill", "recorded"]
}
