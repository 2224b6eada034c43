import Foundation
import LedgerEvents

/// One message as received: its bytes, where it came from, and how it reached us.
public struct InboundMessage: Sendable {
    /// The bytes exactly as received (an NDJSON line without its newline, a spool file, a queue entry).
    public let raw: Data
    /// Where it came from, e.g. `notifications.ndjson:12`.
    public let source: String
    /// How it reached us.
    public let origin: EventOrigin
    /// Set by a reader that refused the input before decoding (e.g. a line over the length limit).
    public let preRejection: IngestRejection?
    /// Whether an `apiResponse` envelope in this message is applied. An envelope carries no
    /// Apple signature of its own, so anyone who can write to a webhook, queue or spool could
    /// forge one; it is quarantined as `untrusted_api_response` unless this is set.
    public let acceptsAPIResponses: Bool
    /// Whether a StoreKit input in this message (`{"storeKit": …}`, or a bare JWS of a StoreKit
    /// transaction or `AppTransaction`) is applied. The app, not Apple, sends these: from a path
    /// that carries only Apple's notifications it is quarantined as `storekit_not_accepted_here`.
    /// The rule is ``EventOrigin/acceptsStoreKitInput``.
    public let acceptsStoreKit: Bool
    /// The stored event that holds exactly these bytes (set by a re-run's lookup,
    /// ``Ledger/markingStored(_:)``): the message is not decoded again, and the store, finding
    /// its id, records it as a duplicate arrival as it would the decoded event.
    package var stored: NewEvent?

    /// Creates a message.
    ///
    /// - Parameter acceptsAPIResponses: `nil` (the default) trusts envelopes only from the paths
    ///   ``EventOrigin/trustsAPIResponses`` names (the API client, `record`); `true` is the
    ///   operator allowing them for this input (`ingest --api-responses`).
    /// - Parameter acceptsStoreKit: `nil` (the default) applies StoreKit inputs only from the paths
    ///   ``EventOrigin/acceptsStoreKitInput`` names; `true` is for re-reading an event the ledger
    ///   already holds (`verify --deep`), which was accepted when it was appended.
    public init(raw: Data, source: String, origin: EventOrigin, preRejection: IngestRejection? = nil,
                acceptsAPIResponses: Bool? = nil, acceptsStoreKit: Bool? = nil) {
        self.raw = raw
        self.source = source
        self.origin = origin
        self.preRejection = preRejection
        self.acceptsAPIResponses = acceptsAPIResponses ?? origin.trustsAPIResponses
        self.acceptsStoreKit = acceptsStoreKit ?? origin.acceptsStoreKitInput
    }
}

/// What became of one inbound message.
public enum MessageOutcome: Sendable, Equatable {
    /// Appended: the message's own event and any events it carried (notification-history items).
    case appended(positions: [Int64], duplicatesCarried: Int)
    /// Already in the ledger.
    case duplicate(existingPosition: Int64)
    /// Refused and quarantined.
    case quarantined(id: Int64, rejection: IngestRejection)

    /// Whether the message is now safely recorded (appended, duplicate or quarantined: all durable).
    public var isSettled: Bool { true }
}

/// Totals of one ingest run, the `--json` summary.
public struct IngestSummary: Sendable, Equatable {
    /// Events appended (history items count individually).
    public var appended = 0
    /// Messages (or carried items) already in the ledger.
    public var duplicates = 0
    /// Messages refused and quarantined.
    public var quarantined = 0
    /// Of ``quarantined``, those whose bytes were already in quarantine, refused for the same
    /// reason by an earlier run (kept once: nothing new was stored for them).
    public var alreadyQuarantined = 0

    /// An empty summary.
    public init() {}

    /// Adds another summary's counts.
    public mutating func add(_ other: IngestSummary) {
        appended += other.appended
        duplicates += other.duplicates
        quarantined += other.quarantined
        alreadyQuarantined += other.alreadyQuarantined
    }
}
