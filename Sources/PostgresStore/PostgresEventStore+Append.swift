import AppStoreModels
import EventStore
import Foundation
import JWSVerification
import LedgerEvents
import PostgresClient

extension PostgresEventStore {
    /// Appends a batch of verified events and quarantines a batch of rejections, atomically.
    ///
    /// Duplicates (same event id already stored, or twice in the batch) append nothing and are
    /// logged in `arrivals`. `afterAppend` runs inside the same transaction with the appended
    /// events, so projections commit with the events or not at all.
    public func commit(events: [NewEvent], rejections: [QuarantineItem],
                       afterAppend: (([LedgerEvent]) throws -> Void)?) throws -> BatchResult {
        try write {
            try appendInTransaction(events: events, rejections: rejections, afterAppend: afterAppend)
        }
    }

    /// The append core, inside the caller's write transaction. Statements per batch:
    ///
    /// 1. `SELECT … FROM ledger_head FOR UPDATE`: takes the append lock (appenders queue here, and
    ///    under READ COMMITTED a waiter continues from the committed head);
    /// 2. `SELECT … FROM unnest($1) JOIN events ON event_id`: the batch's ids already
    ///    stored (race-free while the lock is held; the UNIQUE constraint backs it up);
    /// 3. positions, chain hashes and arrival ids are assigned here, in memory (`EventChain`);
    /// 4. binary `COPY` into `events`, `event_decoded`, `event_keys` and `arrivals`;
    /// 5. rejections: one lookup of open quarantine rows with the same bytes, one `COPY` of the new ones;
    /// 6. `UPDATE ledger_head` with the new position, hash and ids; then `afterAppend`.
    ///
    /// The result is exactly ``EventStore``'s for the same inputs.
    func appendInTransaction(events: [NewEvent], rejections: [QuarantineItem],
                             afterAppend: (([LedgerEvent]) throws -> Void)?) throws -> BatchResult {
        guard !events.isEmpty || !rejections.isEmpty else {
            try afterAppend?([])
            return BatchResult(outcomes: [], quarantineIds: [], appended: [])
        }
        let now = clock()
        let start = try lockHead()
        var head = start
        let stored = try storedPositions(of: events)

        var outcomes: [AppendOutcome] = []
        outcomes.reserveCapacity(events.count)
        var appended: [LedgerEvent] = []
        var appendedSources: [NewEvent] = []
        var arrivals: [(eventId: String, source: String, duplicate: Bool)] = []
        arrivals.reserveCapacity(events.count)
        // Keyed by the id's bytes, as the UNIQUE constraint compares them (Swift's String equality
        // would take canonically equivalent spellings for one id).
        var inBatch: [[UInt8]: Int64] = [:]
        for event in events {
            let key = Array(event.eventId.utf8)
            if let existing = inBatch[key] ?? stored[key] {
                outcomes.append(.duplicate(existingPosition: existing))
                arrivals.append((event.eventId, event.source, true))
                continue
            }
            head.position += 1
            let row = EventChain.Row(position: head.position, eventId: event.eventId, kind: event.kind.rawValue,
                                     type: event.type, subtype: event.subtype, status: event.status,
                                     occurredAt: event.occurredAt, recordedAt: now, source: event.source,
                                     origin: event.origin.rawValue, raw: event.raw)
            let hash = EventChain.hash(previous: head.hash, row: row)
            arrivals.append((event.eventId, event.source, false))
            inBatch[key] = head.position
            outcomes.append(.appended(position: head.position))
            appended.append(LedgerEvent(position: head.position, eventId: event.eventId, kind: event.kind, type: event.type,
                                        subtype: event.subtype, status: event.status, occurredAt: event.occurredAt,
                                        recordedAt: now, source: event.source, origin: event.origin, raw: event.raw,
                                        decoded: event.decoded, verification: event.verification, hash: hash))
            appendedSources.append(event)
            head.hash = hash
        }
        try copyEvents(appended, sources: appendedSources, previousHash: start.hash)
        if let first = appended.first?.position {
            appendedInTransaction = min(appendedInTransaction?.lowerBound ?? first, first)...head.position
        }
        if !arrivals.isEmpty {
            try connection.copy(into: "arrivals", columns: ["id", "event_id", "recorded_at", "source", "duplicate"]) { writer in
                for arrival in arrivals {
                    head.lastArrivalId += 1
                    try writer.writeRow(.int64(head.lastArrivalId), .text(arrival.eventId), .int64(now), .text(arrival.source),
                                        .int64(arrival.duplicate ? 1 : 0))
                }
            }
        }
        let (quarantineIds, earlierQuarantineIds) = try quarantine(rejections, at: now, head: &head)
        try updateHead(head)
        try afterAppend?(appended)
        return BatchResult(outcomes: outcomes, quarantineIds: quarantineIds, appended: appended,
                           earlierQuarantineIds: earlierQuarantineIds)
    }

    /// The head row as the append lock sees it.
    struct LockedHead {
        var position: Int64
        var hash: Data
        var lastArrivalId: Int64
        var lastQuarantineId: Int64
    }

    /// The columns of an `events` row, in the order the COPYs write them.
    static let eventRowColumns = [
        "position", "event_id", "kind", "type", "subtype", "status", "occurred_at", "recorded_at", "source", "origin",
        "raw", "prev_hash", "hash",
    ]

    /// Writes the head row back (inside the transaction that locked it).
    func updateHead(_ head: LockedHead) throws {
        try connection.run(
            "UPDATE ledger_head SET position = $1, hash = $2, last_arrival_id = $3, last_quarantine_id = $4",
            [.int64(head.position), .bytea(head.hash), .int64(head.lastArrivalId), .int64(head.lastQuarantineId)])
    }

    /// Locks the head row until the transaction ends and reads it.
    func lockHead() throws -> LockedHead {
        let sql = "SELECT position, hash, last_arrival_id, last_quarantine_id FROM ledger_head FOR UPDATE"
        let result = try connection.run(sql)
        guard result.rowCount == 1, let row = result.first else {
            throw PostgresError(kind: .server, message: "ledger_head has \(result.rowCount) rows; a ledger has exactly one", sql: sql)
        }
        return LockedHead(position: try row.int64(0), hash: try row.bytea(1), lastArrivalId: try row.int64(2),
                          lastQuarantineId: try row.int64(3))
    }

    /// Positions of the batch's event ids that are already stored, by event id.
    /// Positions of the events already stored, keyed by the bytes of their ids.
    private func storedPositions(of events: [NewEvent]) throws -> [[UInt8]: Int64] {
        guard !events.isEmpty else { return [:] }
        var seen = Set<[UInt8]>()
        let ids = events.map(\.eventId).filter { seen.insert(Array($0.utf8)).inserted }
        let result = try connection.run(
            "SELECT e.event_id, e.position FROM unnest($1::text[]) AS q(v) JOIN events e ON e.event_id = q.v",
            [PostgresArrayLiteral.texts(ids)])
        var positions: [[UInt8]: Int64] = [:]
        for row in result { positions[Array(try row.text(0).utf8)] = try row.int64(1) }
        return positions
    }

    /// Writes the appended events' rows, decoded JSON and identifier keys (binary COPY).
    private func copyEvents(_ appended: [LedgerEvent], sources: [NewEvent], previousHash: Data) throws {
        guard !appended.isEmpty else { return }
        try connection.copy(into: "events", columns: Self.eventRowColumns) { writer in
            var previous = previousHash
            for event in appended {
                try writer.writeRow([
                    .int64(event.position), .text(event.eventId), .text(event.kind.rawValue), .optional(event.type),
                    .optional(event.subtype), .optional(event.status), .int64(event.occurredAt), .int64(event.recordedAt),
                    .text(event.source), .text(event.origin.rawValue), .bytea(event.raw), .bytea(previous), .bytea(event.hash),
                ])
                previous = event.hash
            }
        }
        try connection.copy(into: "event_decoded", columns: ["position", "decoded", "verification", "decoder_version"]) { writer in
            for (event, source) in zip(appended, sources) {
                try writer.writeRow(.int64(event.position), .text(source.decodedText), .text(source.verificationText),
                                    .int64(EventStore.decoderVersion))
            }
        }
        try connection.copy(into: "event_keys", columns: ["key_value", "key_kind", "position"]) { writer in
            for (event, source) in zip(appended, sources) {
                for identifier in Set(source.identifiers) {
                    try writer.writeRow(.text(identifier.value), .text(identifier.kind.rawValue), .int64(event.position))
                }
            }
        }
    }

    /// Quarantines `rejections` (the same bytes refused for the same reason are kept once, while
    /// open); returns one quarantine id per rejection, and those of them that were open before.
    /// Ids continue `head.lastQuarantineId`.
    private func quarantine(_ rejections: [QuarantineItem], at now: EpochMillis,
                            head: inout LockedHead) throws -> (ids: [Int64], earlier: Set<Int64>) {
        guard !rejections.isEmpty else { return ([], []) }
        struct Key: Hashable {
            let digest: String
            let errorCode: String
        }
        let digests = rejections.map { SHA256Digest.hex($0.raw) }
        var open: [Key: Int64] = [:]
        let result = try connection.run("""
            SELECT raw_sha256, error_code, min(id) FROM quarantine
            WHERE raw_sha256 = ANY($1::text[]) AND state = 'open' GROUP BY raw_sha256, error_code
            """, [PostgresArrayLiteral.texts(Set(digests))])
        for row in result { open[Key(digest: try row.text(0), errorCode: try row.text(1))] = try row.int64(2) }
        let earlier = Set(open.values)

        var ids: [Int64] = []
        ids.reserveCapacity(rejections.count)
        var new: [(id: Int64, item: QuarantineItem, digest: String)] = []
        for (item, digest) in zip(rejections, digests) {
            let key = Key(digest: digest, errorCode: item.errorCode)
            if let id = open[key] {
                ids.append(id)
                continue
            }
            head.lastQuarantineId += 1
            open[key] = head.lastQuarantineId
            new.append((head.lastQuarantineId, item, digest))
            ids.append(head.lastQuarantineId)
        }
        if !new.isEmpty {
            try connection.copy(into: "quarantine", columns: ["id", "recorded_at", "source", "error_code", "reason", "raw", "raw_sha256"]) { writer in
                for entry in new {
                    try writer.writeRow(.int64(entry.id), .int64(now), .text(entry.item.source), .text(entry.item.errorCode),
                                        .text(entry.item.reason), .bytea(entry.item.raw), .text(entry.digest))
                }
            }
            try linkRecords(new.map { entry in
                let record = QuarantineRecord(id: entry.id, recordedAt: now, source: entry.item.source, errorCode: entry.item.errorCode,
                                              reason: entry.item.reason, raw: entry.item.raw, state: "open", resolvedAt: nil, resolution: nil)
                return (.quarantine, String(entry.id), RecordChain.quarantineDigest(record))
            })
        }
        return (ids, earlier.intersection(ids))
    }

    /// The last position and its chain hash (0 and the genesis hash for an empty ledger).
    public func head() throws -> (position: Int64, hash: Data) {
        let result = try connection.run("SELECT position, hash FROM ledger_head")
        guard let row = result.first else { return (0, EventChain.genesis) }
        return (try row.int64(0), try row.bytea(1))
    }
}
