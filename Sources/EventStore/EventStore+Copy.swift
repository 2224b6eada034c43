import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage

extension EventStore {
    /// Streams stored records from `position` in log order, `batchSize` at a time.
    public func forEachStoredRecord(from position: Int64, batchSize: Int,
                                    _ body: ([StoredEventRecord]) throws -> Void) throws {
        return try LedgerStoreError.wrappingFailures {
            let rows = try connection.prepare("""
                SELECT e.position, e.event_id, e.kind, e.type, e.subtype, e.status, e.occurred_at, e.recorded_at, e.source,
                       e.origin, e.raw, e.prev_hash, e.hash, d.decoded, d.verification, d.decoder_version, f.facts
                FROM events e LEFT JOIN event_decoded d ON d.position = e.position LEFT JOIN event_facts f ON f.position = e.position
                WHERE e.position >= ? ORDER BY e.position LIMIT ?
                """)
            let keys = try connection.prepare(
                "SELECT position, key_kind, key_value FROM event_keys WHERE position BETWEEN ? AND ? ORDER BY position, key_kind, key_value")
            var next = position
            while true {
                var batch: [StoredEventRecord] = []
                rows.reset()
                try rows.bind(.integer(next), .integer(Int64(max(1, batchSize))))
                var pending: [(LedgerEvent, Data, String?, String?, Int64?, Data?)] = []
                while try rows.step() {
                    let event = LedgerEvent(
                        position: rows.int64(0), eventId: rows.text(1), kind: EventKind(rawValue: rows.text(2)),
                        type: rows.optionalText(3), subtype: rows.optionalText(4), status: rows.optionalInt64(5),
                        occurredAt: rows.int64(6), recordedAt: rows.int64(7), source: rows.text(8),
                        origin: EventOrigin(rawValue: rows.text(9)), raw: rows.blob(10), decoded: .null, verification: [],
                        hash: rows.blob(12))
                    pending.append((event, rows.blob(11), rows.optionalText(13), rows.optionalText(14), rows.optionalInt64(15),
                                    rows.optionalBlob(16)))
                }
                rows.reset()
                guard let first = pending.first?.0.position, let last = pending.last?.0.position else { return }
                var identifiers: [Int64: [EventIdentifier]] = [:]
                keys.reset()
                try keys.bind(.integer(first), .integer(last))
                while try keys.step() {
                    identifiers[keys.int64(0), default: []].append(EventIdentifier(IdentifierKind(rawValue: keys.text(1)), keys.text(2)))
                }
                keys.reset()
                for (event, previous, decoded, verification, version, facts) in pending {
                    batch.append(StoredEventRecord(event: event, previousHash: previous, decodedText: decoded,
                                                   verificationText: verification, decoderVersion: version,
                                                   identifiers: IdentifierIndexRows.identifiers(rows: identifiers[event.position] ?? [],
                                                                                                eventId: event.eventId, kind: event.kind),
                                                   facts: facts))
                }
                try body(batch)
                next = last + 1
            }
        }
    }

    /// Appends records copied from another store, verbatim, in one transaction.
    ///
    /// Each record must continue the chain (``ChainContinuity``); otherwise nothing of the batch is
    /// written and ``ChainContinuityError`` says where.
    public func appendVerbatim(_ records: [StoredEventRecord]) throws {
        try LedgerStoreError.wrappingFailures {
            guard !records.isEmpty else { return }
            try write {
                let insertEvent = try connection.prepare(Self.insertEventSQL)
                let insertDecoded = try connection.prepare(Self.insertDecodedSQL)
                let insertKey = try connection.prepare("INSERT OR IGNORE INTO event_keys(key_value, key_kind, position) VALUES (?, ?, ?)")
                let insertArrival = try connection.prepare(
                    "INSERT INTO arrivals(event_id, recorded_at, source, duplicate) VALUES (?, ?, ?, 0)")
                let insertFacts = try connection.prepare("INSERT OR REPLACE INTO event_facts(position, facts) VALUES (?, ?)")
                _ = try ChainContinuity.check(records, after: try head(), location: path)
                for record in records {
                    let event = record.event
                    insertEvent.reset()
                    try insertEvent.bind([
                        .integer(event.position), .text(event.eventId), .text(event.kind.rawValue), .optional(event.type),
                        .optional(event.subtype), .optional(event.status), .integer(event.occurredAt), .integer(event.recordedAt),
                        .text(event.source), .text(event.origin.rawValue), .blob(event.raw), .blob(record.previousHash),
                        .blob(event.hash),
                    ]).run()
                    if let decoded = record.decodedText {
                        insertDecoded.reset()
                        try insertDecoded.bind(.integer(event.position), .text(decoded), .text(record.verificationText ?? "[]"),
                                               .integer(record.decoderVersion ?? 1)).run()
                    }
                    for identifier in IdentifierIndexRows.stored(record.identifiers, eventId: event.eventId, kind: event.kind) {
                        insertKey.reset()
                        try insertKey.bind(.text(identifier.value), .text(identifier.kind.rawValue), .integer(event.position)).run()
                    }
                    insertArrival.reset()
                    try insertArrival.bind(.text(event.eventId), .integer(event.recordedAt), .text(event.source)).run()
                    if let facts = record.facts {
                        insertFacts.reset()
                        try insertFacts.bind(.integer(event.position), .blob(facts)).run()
                    }
                }
            }
        }
    }
}
