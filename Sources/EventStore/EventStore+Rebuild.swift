import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage

extension EventStore {
    /// Streams the stored facts rows whose positions lie in `positions`, in position order,
    /// `batchSize` rows at a time.
    ///
    /// One sequential scan of `event_facts` (of the range); the bytes are copied once, straight from SQLite's page,
    /// into the batch. `body` must not write to `event_facts` (the scan is still open).
    public func forEachFactsBatch(batchSize: Int, positions: ClosedRange<Int64>, _ body: (FactsRowBatch) throws -> Void) throws {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare(
                "SELECT position, facts FROM event_facts WHERE position BETWEEN ? AND ? ORDER BY position")
            defer { statement.reset() }
            _ = try statement.bind(.integer(positions.lowerBound), .integer(positions.upperBound))
            var batch = FactsRowBatch(reservingRows: batchSize)
            while try statement.step() {
                let position = statement.int64(0)
                statement.withBlob(1) { batch.append(position: position, $0) }
                if batch.count == batchSize {
                    try body(batch)
                    batch = FactsRowBatch(reservingRows: batchSize)
                }
            }
            if batch.count > 0 { try body(batch) }
        }
    }

    /// Total bytes of stored facts and their row count.
    public func factsVolume() throws -> (rows: Int64, bytes: Int64) {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("SELECT count(*), coalesce(sum(length(facts)), 0) FROM event_facts")
            defer { statement.reset() }
            guard try statement.step() else { return (0, 0) }
            return (statement.int64(0), statement.int64(1))
        }
    }

    /// What ``eventsForFacts(_:)`` runs: event metadata (through the covering index
    /// `events_metadata`) and decoded JSON of a range of positions (two integer parameters).
    /// Public for the benchmark's storage floor, which times the same query.
    public static let eventsForFactsSQL = """
        SELECT e.position, e.event_id, e.kind, e.type, e.subtype, e.status, e.occurred_at, e.recorded_at, e.source,
               e.origin, d.decoded
        FROM events e LEFT JOIN event_decoded d ON d.position = e.position
        WHERE e.position BETWEEN ? AND ? ORDER BY e.position
        """

    /// The events at `positions` (ascending), with their decoded JSON as text and no raw bytes.
    ///
    /// Reads the range `positions.first...positions.last` in one statement, skipping positions not asked for.
    public func eventsForFacts(_ positions: ArraySlice<Int64>) throws -> [EventForFacts] {
        return try LedgerStoreError.wrappingFailures {
            guard let first = positions.first, let last = positions.last else { return [] }
            let wanted = Set(positions)
            let statement = try connection.prepare(Self.eventsForFactsSQL)
            defer { statement.reset() }
            try statement.bind(.integer(first), .integer(last))
            var result: [EventForFacts] = []
            result.reserveCapacity(positions.count)
            while try statement.step() {
                let position = statement.int64(0)
                guard wanted.contains(position) else { continue }
                let metadata = LedgerEvent(
                    position: position, eventId: statement.text(1), kind: EventKind(rawValue: statement.text(2)),
                    type: statement.optionalText(3), subtype: statement.optionalText(4), status: statement.optionalInt64(5),
                    occurredAt: statement.int64(6), recordedAt: statement.int64(7), source: statement.text(8),
                    origin: EventOrigin(rawValue: statement.text(9)), raw: Data(), decoded: .null, verification: [], hash: Data())
                result.append(EventForFacts(metadata: metadata, decodedText: statement.optionalText(10) ?? "null"))
            }
            return result
        }
    }
}

extension EventStore {
    /// Creates the covering index deriving facts reads event metadata through, if the ledger
    /// (created by an older build) lacks it: one scan of the log, then every later derivation
    /// reads the index instead of the table (see ``LedgerSchema/metadataIndex``).
    public func ensureEventMetadataIndex() throws {
        try LedgerStoreError.wrappingFailures {
            try connection.execute(LedgerSchema.metadataIndex)
        }
    }

    /// Sets this connection's page cache size (a long sequential scan needs little cache).
    public func setPageCache(mebibytes: Int) throws(SQLiteError) {
        try connection.execute("PRAGMA cache_size = -\(max(1, mebibytes) * 1024)")
    }

    /// Whether the store lives in a file another connection can open.
    public var isFileBacked: Bool { !path.isEmpty && path != ":memory:" && !path.hasPrefix("file::memory:") }
}
