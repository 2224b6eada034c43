import AppStoreModels
import Foundation
import LedgerEvents

/// One event exactly as a store holds it (row, chain link, cached decode, keys, facts), for
/// copying a ledger to another store with its chain intact.
public struct StoredEventRecord: Sendable {
    /// The event row: position, ids, times, source, origin, raw bytes and chain hash.
    public let event: LedgerEvent
    /// The chain hash of the event before it.
    public let previousHash: Data
    /// The stored decoded JSON text (the store's own form, copied verbatim).
    public let decodedText: String?
    /// The stored verification records (canonical JSON text).
    public let verificationText: String?
    /// The decoder version that wrote ``decodedText``.
    public let decoderVersion: Int64?
    /// The identifiers the event is indexed under.
    public let identifiers: [EventIdentifier]
    /// The cached projection facts, when present.
    public let facts: Data?

    /// Creates a record.
    public init(event: LedgerEvent, previousHash: Data, decodedText: String?, verificationText: String?,
                decoderVersion: Int64?, identifiers: [EventIdentifier], facts: Data?) {
        self.event = event
        self.previousHash = previousHash
        self.decodedText = decodedText
        self.verificationText = verificationText
        self.decoderVersion = decoderVersion
        self.identifiers = identifiers
        self.facts = facts
    }

    /// The chain row this record's hash covers.
    public var chainRow: EventChain.Row {
        EventChain.Row(position: event.position, eventId: event.eventId, kind: event.kind.rawValue, type: event.type,
                       subtype: event.subtype, status: event.status, occurredAt: event.occurredAt,
                       recordedAt: event.recordedAt, source: event.source, origin: event.origin.rawValue, raw: event.raw)
    }
}

/// A copied record does not continue the destination's chain, or its hash does not match its contents.
public struct ChainContinuityError: Error, Sendable, CustomStringConvertible {
    /// Where the destination stands.
    public let location: String
    /// The position of the refused record.
    public let position: Int64
    /// What is wrong.
    public let problem: String

    /// Creates an error (for other ``LedgerStore`` implementations).
    public init(location: String, position: Int64, problem: String) {
        self.location = location
        self.position = position
        self.problem = problem
    }

    /// The text a person reads (what the CLI prints for it).
    public var description: String { "\(location): refusing event at position \(position): \(problem)" }
}

/// The store cannot do what was asked (for example an engine without a copy path).
public struct StoreOperationUnsupported: Error, Sendable, CustomStringConvertible {
    /// The store.
    public let location: String
    /// The operation.
    public let operation: String

    /// The text a person reads (what the CLI prints for it).
    public var description: String { "\(location) does not support \(operation)" }
}
