import AppStoreModels
import Foundation
import LedgerEvents

/// The append-only, gap-free, hash-chained event log: reading it, verifying it, and copying it
/// verbatim to another store.
///
/// Appending is ``LedgerAppend`` (``LedgerStore/append(events:rejections:)``), written once over
/// the rows each engine writes (``AppendRows``). The reads whose SQL is the same on every engine
/// and that no hot path runs are written once over ``TransactionalStore/database``; the engines
/// keep the reads that serve entitlements, listings and the ingest (events by position or id,
/// identifier lookups) in their own fastest form.
public protocol EventLog: TransactionalStore {
    /// The last position and its chain hash (`(0, genesis)` when empty).
    func head() throws -> (position: Int64, hash: Data)
    /// Recomputes the hash chain from the raw bytes and reports the first break.
    func verifyChain(progress: ((Int64) -> Void)?) throws -> ChainVerification
    /// What `verify` checks of the arrivals log: its rows, its highest id, and the events (at most
    /// `limit` ids, and how many in all) that have no first, non-duplicate arrival.
    func arrivalSummary(limit: Int) throws -> ArrivalSummary
    /// Traces of rows removed from the end of the log or the quarantine, each in words: cached
    /// rows (decoded payload, identifier index, facts) at positions past the last event, and
    /// (PostgreSQL, whose head row counts them) positions or quarantine ids issued but gone. What
    /// was removed with every trace only a head anchor can prove. Empty: none found.
    func tailRemnants() throws -> [String]

    // MARK: Reading events

    /// The event at `position`.
    func event(at position: Int64) throws -> LedgerEvent?
    /// The event with `eventId`.
    func event(id eventId: String) throws -> LedgerEvent?
    /// The position and raw bytes of the event with `eventId` (no decoded JSON restored): what a
    /// re-run compares a line with before verifying it.
    func storedBytes(ofEventId eventId: String) throws -> (position: Int64, raw: Data)?
    /// The events at `positions`, in that order (missing ones skipped).
    func events(at positions: [Int64]) throws -> [LedgerEvent]
    /// Streams events from `position` in log order.
    func forEachEvent(from position: Int64, _ body: (LedgerEvent) throws -> Void) throws
    /// Positions of events that mention `value` (optionally as one kind of identifier).
    func positions(mentioning value: String, kind: IdentifierKind?) throws -> [Int64]
    /// Positions of events that mention any of `identifiers`.
    func positions(mentioningAny identifiers: Set<String>) throws -> Set<Int64>
    /// Positions of events that mention each of `identifiers`, in one round trip: every identifier
    /// is a key of the result (with an empty set when no event mentions it).
    func positions(byIdentifier identifiers: Set<String>) throws -> [String: Set<Int64>]
    /// How many duplicate arrivals each event had.
    func duplicateCounts(for eventIds: [String]) throws -> [String: Int]
    /// The leaf certificate fingerprint that signed each event, by event id.
    func leafFingerprints(at positions: Set<Int64>) throws -> [String: String]

    // MARK: Copying a ledger between stores

    /// Streams the stored records (row, chain link, decode, keys, facts) from `position` in log order.
    func forEachStoredRecord(from position: Int64, batchSize: Int, _ body: ([StoredEventRecord]) throws -> Void) throws
    /// Appends records copied from another store verbatim, in one transaction, refusing any that do
    /// not continue this store's chain (``ChainContinuityError``).
    func appendVerbatim(_ records: [StoredEventRecord]) throws
}

extension EventLog {
    /// None found: an engine that keeps no such traces.
    public func tailRemnants() throws -> [String] { [] }

    /// The number of events.
    public func eventCount() throws -> Int64 {
        try database.query("SELECT count(*) FROM events") { try $0.int64(0) }.first ?? 0
    }

    /// The latest Apple-signed time (`occurredAt`) of any event; `nil` when there are none.
    public func lastOccurredAt() throws -> EpochMillis? {
        try database.query("SELECT max(occurred_at) FROM events") { try $0.optionalInt64(0) }.first ?? nil
    }

    /// Every identifier value the events at `first` through `last` mention (the implied
    /// `notificationUUID`s included), in no order, with repeats: one query for a range, what a
    /// reader keeping an index of which identifiers a ledger knows reads.
    public func identifierValues(from first: Int64, through last: Int64) throws -> [String] {
        let sql = "SELECT key_value FROM event_keys WHERE position BETWEEN ? AND ? "
            + "UNION ALL SELECT event_id FROM events WHERE position BETWEEN ? AND ? AND kind = '\(EventKind.notification.rawValue)'"
        return try database.query(sql, [.integer(first), .integer(last), .integer(first), .integer(last)]) { try $0.text(0) }
    }

    /// The identifiers indexed for the event at `position`, by kind then value (the one its id
    /// implies included, ``IdentifierIndexRows``); none when there is no such event.
    public func identifiers(at position: Int64) throws -> [EventIdentifier] {
        var event: (id: String, kind: EventKind)?
        let sql = "SELECT e.event_id, e.kind, k.key_kind, k.key_value FROM events e LEFT JOIN event_keys k ON k.position = e.position "
            + "WHERE e.position = ?"
        let rows = try database.query(sql, [.integer(position)]) { row -> EventIdentifier? in
            if event == nil { event = (try row.text(0), EventKind(rawValue: try row.text(1))) }
            return try row.optionalText(2).map { EventIdentifier(IdentifierKind(rawValue: $0), try row.text(3)) }
        }
        guard let event else { return [] }
        return IdentifierIndexRows.identifiers(rows: rows.compactMap { $0 }, eventId: event.id, kind: event.kind)
    }
}


/// The words of ``EventLog/tailRemnants()`` findings, written once for both engines.
public enum TailRemnants {
    /// The caches an event leaves behind, by table.
    public static let caches = [("event_decoded", "decoded payload"), ("event_keys", "identifier index"), ("event_facts", "facts")]

    /// A finding for cached rows of `what` at `positions` past the last event `last`.
    public static func orphanCache(_ what: String, positions: [Int64], last: Int64) -> String {
        "\(what) rows at position(s) \(positions.map(String.init).joined(separator: ", ")) past the last event (\(last)): "
            + "the event(s) there were deleted, their caches left behind"
    }
}
