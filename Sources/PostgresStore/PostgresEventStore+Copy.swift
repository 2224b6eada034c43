import AppStoreModels
import LedgerStorage
import Foundation
import LedgerEvents
import PostgresClient

extension PostgresEventStore {
    /// Streams stored records from `position` in log order, `batchSize` at a time (keyset pages:
    /// one query for the rows with their decode and facts, one for the pages' identifier keys).
    public func forEachStoredRecord(from position: Int64, batchSize: Int,
                                    _ body: ([StoredEventRecord]) throws -> Void) throws {
        return try LedgerStoreError.wrappingFailures {
            try flushPendingFacts()
            var next = position
            while true {
                let rows = try connection.run("""
                    SELECT e.position, e.event_id, e.kind, e.type, e.subtype, e.status, e.occurred_at, e.recorded_at, e.source,
                           e.origin, e.raw, e.prev_hash, e.hash, d.decoded, d.verification, d.decoder_version, f.facts
                    FROM events e LEFT JOIN event_decoded d ON d.position = e.position
                         LEFT JOIN event_facts f ON f.position = e.position
                    WHERE e.position >= $1 ORDER BY e.position LIMIT $2
                    """, [.int64(next), .int64(Int64(max(1, batchSize)))])
                guard let first = rows.first, let last = rows.last else { return }
                let firstPosition = try first.int64(0), lastPosition = try last.int64(0)
                var identifiers: [Int64: [EventIdentifier]] = [:]
                let keys = try connection.run(
                    "SELECT position, key_kind, key_value FROM event_keys WHERE position BETWEEN $1 AND $2 ORDER BY position, key_kind, key_value",
                    [.int64(firstPosition), .int64(lastPosition)])
                for key in keys {
                    identifiers[try key.int64(0), default: []].append(EventIdentifier(IdentifierKind(rawValue: try key.text(1)), try key.text(2)))
                }
                let batch = try rows.map { row in
                    let event = LedgerEvent(
                        position: try row.int64(0), eventId: try row.text(1), kind: EventKind(rawValue: try row.text(2)),
                        type: try row.optionalText(3), subtype: try row.optionalText(4), status: try row.optionalInt64(5),
                        occurredAt: try row.int64(6), recordedAt: try row.int64(7), source: try row.text(8),
                        origin: EventOrigin(rawValue: try row.text(9)), raw: try row.bytea(10), decoded: .null, verification: [],
                        hash: try row.bytea(12))
                    return StoredEventRecord(event: event, previousHash: try row.bytea(11), decodedText: try row.optionalText(13),
                                             verificationText: try row.optionalText(14), decoderVersion: try row.optionalInt64(15),
                                             identifiers: IdentifierIndexRows.identifiers(rows: identifiers[event.position] ?? [],
                                                                                          eventId: event.eventId, kind: event.kind),
                                             facts: try row.optionalBytea(16))
                }
                try body(batch)
                next = lastPosition + 1
            }
        }
    }

    /// Appends records copied from another store, verbatim, in one transaction (under the append
    /// lock, like any append).
    ///
    /// Each record must continue the chain (``ChainContinuity``); otherwise nothing of the batch is
    /// written and ``ChainContinuityError`` says where. Arrivals are logged at the
    /// records' own recording times, as SQLite's store does.
    public func appendVerbatim(_ records: [StoredEventRecord]) throws {
        try LedgerStoreError.wrappingFailures {
            guard !records.isEmpty else { return }
            try write {
                var head = try lockHead()
                let start = head
                (head.position, head.hash) = try ChainContinuity.check(records, after: (head.position, head.hash), location: location)
                try connection.copy(into: "events", columns: Self.eventRowColumns) { writer in
                    for record in records {
                        let event = record.event
                        try writer.writeRow([
                            .int64(event.position), .text(event.eventId), .text(event.kind.rawValue), .optional(event.type),
                            .optional(event.subtype), .optional(event.status), .int64(event.occurredAt), .int64(event.recordedAt),
                            .text(event.source), .text(event.origin.rawValue), .bytea(event.raw), .bytea(record.previousHash),
                            .bytea(event.hash),
                        ])
                    }
                }
                let decoded = records.filter { $0.decodedText != nil }
                if !decoded.isEmpty {
                    try connection.copy(into: "event_decoded", columns: ["position", "decoded", "verification", "decoder_version"]) { writer in
                        for record in decoded {
                            try writer.writeRow(.int64(record.event.position), .optional(record.decodedText),
                                                .text(record.verificationText ?? "[]"), .int64(record.decoderVersion ?? 1))
                        }
                    }
                }
                let keyRows = records.map { IdentifierIndexRows.stored($0.identifiers, eventId: $0.event.eventId, kind: $0.event.kind) }
                if keyRows.contains(where: { !$0.isEmpty }) {
                    try connection.copy(into: "event_keys", columns: ["key_value", "key_kind", "position"]) { writer in
                        for (record, rows) in zip(records, keyRows) {
                            for identifier in rows {
                                try writer.writeRow(.text(identifier.value), .text(identifier.kind.rawValue), .int64(record.event.position))
                            }
                        }
                    }
                }
                try connection.copy(into: "arrivals", columns: ["id", "event_id", "recorded_at", "source", "duplicate"]) { writer in
                    for record in records {
                        head.lastArrivalId += 1
                        try writer.writeRow(.int64(head.lastArrivalId), .text(record.event.eventId), .int64(record.event.recordedAt),
                                            .text(record.event.source), .int64(0))
                    }
                }
                try updateHead(head)
                // The copied facts go through the transaction's facts buffer: new positions are COPYed at COMMIT.
                appendedInTransaction = (start.position + 1)...head.position
                for record in records {
                    if let facts = record.facts { try storeFacts(position: record.event.position, facts: facts) }
                }
            }
        }
    }
}
