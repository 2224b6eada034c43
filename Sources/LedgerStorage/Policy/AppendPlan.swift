import AppStoreModels
import Foundation
import LedgerEvents

/// What one append does, decided once for every engine: which messages are duplicates, the
/// positions and chain hashes of the rest, each message's outcome, and the arrivals to log.
///
/// Pure: an engine reads the head and the batch's already-stored ids, makes the plan, then writes
/// ``appended`` (with ``appendedSources``) and ``arrivals`` in its own SQL, in the same transaction.
public struct AppendPlan: Sendable {
    /// One message received, for the `arrivals` log.
    public struct Arrival: Sendable, Equatable {
        /// The event id.
        public let eventId: String
        /// Where the message came from.
        public let source: String
        /// Whether it was already in the ledger (or earlier in the batch).
        public let duplicate: Bool
    }

    /// One outcome per message, in the batch's order.
    public private(set) var outcomes: [AppendOutcome] = []
    /// The events to append, positions ascending, with their recording time and chain hashes.
    public private(set) var appended: [LedgerEvent] = []
    /// The messages ``appended`` came from, in the same order (their decoded text and identifiers).
    public private(set) var appendedSources: [NewEvent] = []
    /// The arrivals to log, one per message, in the batch's order.
    public private(set) var arrivals: [Arrival] = []
    /// The chain hash before the first appended event (the head's hash when planned).
    public let previousHash: Data
    /// When the appended events and the arrivals are recorded (transaction time).
    public let recordedAt: EpochMillis
    /// The head after the append.
    public private(set) var head: (position: Int64, hash: Data)

    /// Plans appending `events` after `head`, recorded at `now`.
    ///
    /// - Parameter stored: the positions of those of the batch's ids already stored, keyed by the
    ///   id's UTF-8 bytes, as a UNIQUE index compares them (Swift's `String` equality would take
    ///   canonically equivalent spellings for one id). An id twice in the batch is a duplicate of
    ///   its first occurrence.
    public init(events: [NewEvent], head: (position: Int64, hash: Data), recordedAt now: EpochMillis,
                stored: [[UInt8]: Int64]) {
        previousHash = head.hash
        recordedAt = now
        self.head = head
        outcomes.reserveCapacity(events.count)
        arrivals.reserveCapacity(events.count)
        var inBatch: [[UInt8]: Int64] = [:]
        for event in events {
            let key = Array(event.eventId.utf8)
            if let existing = inBatch[key] ?? stored[key] {
                outcomes.append(.duplicate(existingPosition: existing))
                arrivals.append(Arrival(eventId: event.eventId, source: event.source, duplicate: true))
                continue
            }
            let position = self.head.position + 1
            let row = EventChain.Row(position: position, eventId: event.eventId, kind: event.kind.rawValue,
                                     type: event.type, subtype: event.subtype, status: event.status,
                                     occurredAt: event.occurredAt, recordedAt: now, source: event.source,
                                     origin: event.origin.rawValue, raw: event.raw)
            let hash = EventChain.hash(previous: self.head.hash, row: row)
            appended.append(LedgerEvent(position: position, eventId: event.eventId, kind: event.kind, type: event.type,
                                        subtype: event.subtype, status: event.status, occurredAt: event.occurredAt,
                                        recordedAt: now, source: event.source, origin: event.origin, raw: event.raw,
                                        decoded: event.decoded, verification: event.verification, hash: hash))
            appendedSources.append(event)
            arrivals.append(Arrival(eventId: event.eventId, source: event.source, duplicate: false))
            outcomes.append(.appended(position: position))
            inBatch[key] = position
            self.head = (position, hash)
        }
    }

    /// The distinct ids of `events` (by bytes, first spelling kept), for the engine's lookup of
    /// those already stored.
    public static func distinctIds(of events: [NewEvent]) -> [String] {
        var seen = Set<[UInt8]>()
        return events.map(\.eventId).filter { seen.insert(Array($0.utf8)).inserted }
    }
}
