import AppStoreModels

/// What an event records: a server notification or an App Store Server API response.
public struct EventKind: OpenStringEnum {
    /// The value as stored in the `kind` column.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An App Store Server Notification V2 (`signedPayload`).
    public static let notification = Self(rawValue: "notification")
    /// An `apiResponse` envelope.
    public static let apiResponse = Self(rawValue: "apiResponse")
    /// An operator's decision recorded in the log (`quarantine dismiss`, `retract`): who, why,
    /// about what. Not from Apple and never signed. A dismissal carries no identifiers, so no
    /// projection reads it; a retraction carries the retracted event's, and projections skip
    /// that event from then on.
    public static let decision = Self(rawValue: "decision")
    /// A StoreKit value the app sent its server (a transaction's `jwsRepresentation` or a signed
    /// `AppTransaction`), Apple-signed, with the app's user id for that person when the app server
    /// gave one (`{"storeKit": {"userId": …, "signedTransaction" | "signedAppTransaction": …}}`).
    /// The content is Apple's; the link to the user id is the app server's word (see `Events/README.md`).
    public static let storeKit = Self(rawValue: "storeKit")
    /// The four kinds above.
    public static let knownValues: Set<String> = ["notification", "apiResponse", "decision", "storeKit"]
}

/// The kind of an identifier an event mentions; every kind is indexed.
public struct IdentifierKind: OpenStringEnum {
    /// The value as stored in the `key_kind` column.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `notificationUUID`: Apple's unique id of a notification (the event id of a notification event).
    public static let notificationUUID = Self(rawValue: "notificationUUID")
    /// `originalTransactionId`: a subscription's first transaction id, which names a purchaser's group.
    public static let originalTransactionId = Self(rawValue: "originalTransactionId")
    /// `transactionId`: one transaction's id (also the id in a transaction, history or status API path).
    public static let transactionId = Self(rawValue: "transactionId")
    /// `appTransactionId`: a customer's app-download id; identifies a member.
    public static let appTransactionId = Self(rawValue: "appTransactionId")
    /// `seatClaimId`: one claim of a seat (each claim or reclaim gets a new UUID).
    public static let seatClaimId = Self(rawValue: "seatClaimId")
    /// `groupId`: Apple's id of a group (Get Customer Groups, Get Group Members).
    public static let groupId = Self(rawValue: "groupId")
    /// A free-form member reference from an envelope's `context.memberRef`.
    public static let memberRef = Self(rawValue: "memberRef")
    /// The `requestIdentifier` of a Claim Seat request.
    public static let requestIdentifier = Self(rawValue: "requestIdentifier")
    /// The customer identifier in a Get Customer Groups path (which id kind Apple expects is undocumented).
    public static let customerId = Self(rawValue: "customerId")
    /// The event id a retraction withdraws (indexed on the retraction, to find it by that event).
    public static let retractedEventId = Self(rawValue: "retractedEventId")
    /// The app's own id of a person (`storeKit.userId`), which the app server linked to the Apple
    /// identities of the same event: reads resolve it through those links, never by itself.
    public static let appUserId = Self(rawValue: "appUserId")
    /// `appAccountToken`: the UUID an app sets on a purchase (a transaction carries it back).
    public static let appAccountToken = Self(rawValue: "appAccountToken")
    /// The kinds above.
    public static let knownValues: Set<String> = [
        "notificationUUID", "originalTransactionId", "transactionId", "appTransactionId", "seatClaimId", "groupId",
        "memberRef", "requestIdentifier", "customerId", "retractedEventId", "appUserId", "appAccountToken",
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

    /// Orders by kind, then value.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.kind.rawValue, lhs.value) < (rhs.kind.rawValue, rhs.value)
    }

    /// `kind=value`.
    public var description: String { "\(kind.rawValue)=\(value)" }
}

/// The provenance of an event: the path it reached the ledger by, which also names the command
/// or entry point that appended it (replay and audit show it: "arrived via backfill").
///
/// Stored in the `origin` column, which the hash chain covers, so provenance cannot be edited
/// without breaking the chain. Events appended before provenance was recorded per path carry
/// `live` (a file, stdin, a spool directory, a queue or a library caller: which one is unknown)
/// or `recorded` (an API response; `record` or the API client). See `Events/README.md`.
public struct EventOrigin: OpenStringEnum {
    /// The value as stored in the `origin` column.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An event stored before provenance was recorded per path (which path is unknown). No path
    /// of this build records it: every message names its own origin (``InboundMessage`` takes one).
    public static let live = Self(rawValue: "live")
    /// Recovered from Get Notification History (`seatledger backfill`, the API client).
    public static let backfill = Self(rawValue: "backfill")
    /// An API response the operator recorded: `seatledger record`, `Ledger.append(apiResponseEnvelope:)`
    /// (and, before provenance was recorded per path, the API client too).
    public static let recorded = Self(rawValue: "recorded")
    /// An App Store Server Notification POSTed to the webhook (`serve`'s `POST /notifications`,
    /// `LedgerPool.append(notificationBody:source:)`, `Ledger.append(notificationBody:)`).
    public static let webhook = Self(rawValue: "webhook")
    /// A line of a file given to `seatledger ingest FILE`.
    public static let file = Self(rawValue: "file")
    /// A line read by `seatledger ingest -` from standard input.
    public static let stdin = Self(rawValue: "stdin")
    /// A file of a spool directory (`seatledger ingest --spool DIR`).
    public static let spool = Self(rawValue: "spool")
    /// An entry of a queue (`seatledger ingest --from redis://…`).
    public static let queue = Self(rawValue: "queue")
    /// A response of the ledger's own App Store Server API client (`reconcile`, `seats`, `serve`'s seat routes).
    public static let apiClient = Self(rawValue: "api-client")
    /// A quarantined message appended by `seatledger quarantine retry` (its original path is in its source).
    public static let quarantineRetry = Self(rawValue: "quarantine-retry")
    /// A decision the operator recorded with the CLI (`seatledger quarantine dismiss`, `seatledger retract`).
    public static let operatorDecision = Self(rawValue: "operator")
    /// Posted by the app server on an authenticated route of `serve` (`POST /v1/storekit`,
    /// `POST /v1/api-responses`); the event's source names the token.
    public static let appServer = Self(rawValue: "app-server")
    /// The origins above.
    public static let knownValues: Set<String> = ["live", "backfill", "recorded", "webhook", "file", "stdin", "spool", "queue",
                                                  "api-client", "quarantine-retry", "operator", "app-server"]

    /// Whether an API-response envelope arriving this way is applied without the operator
    /// allowing it: only the ledger's own API client (`api-client`, `backfill`) and an import the
    /// operator names (`recorded`). The webhook, files, stdin, spools, queues and library callers
    /// (`live`) carry only Apple-signed notifications unless the operator allows more.
    public var trustsAPIResponses: Bool { self == .recorded || self == .apiClient || self == .backfill }

    /// Whether a StoreKit input (`{"storeKit": …}`, or a bare JWS whose payload is a StoreKit
    /// transaction or `AppTransaction`) arriving this way is applied: only from the app server's
    /// route (`app-server`) and an operator's import (`file`, `stdin`). A quarantine retry applies
    /// one only when the operator vouches for it (`quarantine retry --storekit`): the quarantine
    /// cannot prove which path an input came by, and its user id is the sender's word.
    ///
    /// Apple signs these values, but they come from the app, not from Apple's webhook: the webhook,
    /// spools and queues carry Apple's notifications, and anyone who can write to them could attach
    /// a user id of their choosing to a transaction they hold. Every other origin, and any origin
    /// added later, applies none until it is named here.
    public var acceptsStoreKitInput: Bool {
        self == .appServer || self == .file || self == .stdin
    }
}
