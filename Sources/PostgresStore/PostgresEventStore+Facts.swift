import AppStoreModels
import LedgerStorage
import Foundation
import LedgerEvents
import PostgresClient

extension PostgresEventStore {
    // MARK: Facts (a cache of the events' decoded payloads)

    /// Stores the projection facts of an event (replacing any).
    ///
    /// Inside a write transaction the row is buffered and written with the others in one statement
    /// before anything reads `event_facts` and before COMMIT (the projection maintainer stores one
    /// row per appended event: one statement per batch instead of one per event). Outside, it is
    /// written at once.
    public func storeFacts(position: Int64, facts: Data) throws {
        try LedgerStoreError.wrappingFailures {
            if transactionState == .write {
                pendingFacts[position] = facts
                return
            }
            try connection.run(
                "INSERT INTO event_facts (position, facts) VALUES ($1, $2) ON CONFLICT (position) DO UPDATE SET facts = EXCLUDED.facts",
                [.int64(position), .bytea(facts)])
        }
    }

    /// Writes the buffered facts rows (last one per position wins, as with SQLite's INSERT OR REPLACE):
    /// rows of events this transaction appended are new, so they are bulk-loaded with binary COPY;
    /// any other row goes through one `INSERT … SELECT FROM unnest(…) ON CONFLICT DO UPDATE`.
    func flushPendingFacts() throws {
        guard !pendingFacts.isEmpty else { return }
        let rows = pendingFacts.sorted { $0.key < $1.key }
        pendingFacts.removeAll(keepingCapacity: true)
        var fresh: [(key: Int64, value: Data)] = []
        var others: [(key: Int64, value: Data)] = []
        for row in rows {
            if let appended = appendedInTransaction, appended.contains(row.key), !factsCopiedInTransaction.contains(row.key) {
                fresh.append(row)
            } else {
                others.append(row)
            }
        }
        if !fresh.isEmpty {
            try connection.copy(into: "event_facts", columns: ["position", "facts"]) { writer in
                for row in fresh { try writer.writeRow(.int64(row.key), .bytea(row.value)) }
            }
            factsCopiedInTransaction.formUnion(fresh.map(\.key))
        }
        if !others.isEmpty {
            try connection.run("""
                INSERT INTO event_facts (position, facts) SELECT * FROM unnest($1::bigint[], $2::bytea[])
                ON CONFLICT (position) DO UPDATE SET facts = EXCLUDED.facts
                """, [PostgresArrayLiteral.integers(others.map(\.key)), PostgresArrayLiteral.byteas(others.map(\.value))])
        }
    }

    /// The stored facts of the given positions (encoded), by position, in one query.
    public func facts(at positions: Set<Int64>) throws -> [Int64: Data] {
        return try LedgerStoreError.wrappingFailures {
            guard !positions.isEmpty else { return [:] }
            try flushPendingFacts()
            let result = try connection.run(
                "SELECT f.position, f.facts FROM unnest($1::bigint[]) AS q(v) JOIN event_facts f ON f.position = q.v",
                [PostgresArrayLiteral.integers(positions)])
            var facts: [Int64: Data] = [:]
            for row in result { facts[try row.int64(0)] = try row.bytea(1) }
            return facts
        }
    }

    /// Positions of events without stored facts (e.g. written by an older decoder), ascending.
    ///
    /// An anti-join against `1…max(position)` on the server (positions are gap-free from 1), so
    /// only the missing positions cross the wire and the events table's rows are never read.
    public func positionsWithoutFacts() throws -> [Int64] {
        return try LedgerStoreError.wrappingFailures {
            try flushPendingFacts()
            let result = try connection.run("""
                SELECT g.position FROM generate_series(1::bigint, (SELECT coalesce(max(position), 0) FROM events)) AS g(position)
                WHERE NOT EXISTS (SELECT 1 FROM event_facts f WHERE f.position = g.position) ORDER BY g.position
                """)
            return try result.map { try $0.int64(0) }
        }
    }

    /// The events at `positions` (ascending), with their decoded JSON as text and no raw bytes.
    ///
    /// Like SQLite's store: positions outside `positions.first...positions.last` are not returned.
    public func eventsForFacts(_ positions: ArraySlice<Int64>) throws -> [EventForFacts] {
        return try LedgerStoreError.wrappingFailures {
            guard let first = positions.first, let last = positions.last else { return [] }
            let result = try connection.run("""
                SELECT e.position, e.event_id, e.kind, e.type, e.subtype, e.status, e.occurred_at, e.recorded_at, e.source,
                       e.origin, d.decoded
                FROM events e LEFT JOIN event_decoded d ON d.position = e.position
                WHERE e.position BETWEEN $1 AND $2 AND e.position = ANY($3::bigint[]) ORDER BY e.position
                """, [.int64(first), .int64(last), PostgresArrayLiteral.integers(Set(positions))])
            return try result.map { row in
                let metadata = LedgerEvent(
                    position: try row.int64(0), eventId: try row.text(1), kind: EventKind(rawValue: try row.text(2)),
                    type: try row.optionalText(3), subtype: try row.optionalText(4), status: try row.optionalInt64(5),
                    occurredAt: try row.int64(6), recordedAt: try row.int64(7), source: try row.text(8),
                    origin: EventOrigin(rawValue: try row.text(9)), raw: Data(), decoded: .null, verification: [], hash: Data())
                return EventForFacts(metadata: metadata, decodedText: try row.optionalText(10) ?? "null")
            }
        }
    }

    /// Streams the stored facts rows in `positions`, in position order, `batchSize` rows at a time:
    /// one keyset page (`WHERE position > last AND position <= end ORDER BY position LIMIT batchSize`) per batch, so memory holds
    /// one batch whatever the size of the table. Inside ``read(_:)`` every page sees one snapshot.
    /// As with SQLite's store, a `batchSize` below 1 hands over every row in one batch.
    public func forEachFactsBatch(batchSize: Int, positions: ClosedRange<Int64>, _ body: (FactsRowBatch) throws -> Void) throws {
        return try LedgerStoreError.wrappingFailures {
            try flushPendingFacts()
            let pageSize = batchSize > 0 ? batchSize : 8_192
            // Keyset pagination from just before the range (positions start at 1).
            var after: Int64 = max(positions.lowerBound, 1) - 1
            var batch = FactsRowBatch(reservingRows: pageSize)
            while true {
                let result = try connection.run(
                    "SELECT position, facts FROM event_facts WHERE position > $1 AND position <= $3 ORDER BY position LIMIT $2",
                    [.int64(after), .int64(Int64(pageSize)), .int64(positions.upperBound)])
                for row in result {
                    let position = try row.int64(0)
                    try row.bytea(1).withUnsafeBytes { batch.append(position: position, $0) }
                    after = position
                }
                let lastPage = result.rowCount < pageSize
                if batchSize > 0, batch.count > 0 {
                    try body(batch)
                    batch = FactsRowBatch(reservingRows: pageSize)
                }
                if lastPage { break }
            }
            if batchSize <= 0, batch.count > 0 { try body(batch) }
        }
    }

    /// Total rows and bytes of stored facts.
    public func factsVolume() throws -> (rows: Int64, bytes: Int64) {
        return try LedgerStoreError.wrappingFailures {
            try flushPendingFacts()
            let result = try connection.run(
                "SELECT count(*), coalesce(sum(octet_length(facts)), 0)::bigint FROM event_facts")
            guard let row = result.first else { return (0, 0) }
            return (try row.int64(0), try row.int64(1))
        }
    }
}
