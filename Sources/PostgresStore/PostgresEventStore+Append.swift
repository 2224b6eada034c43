import AppStoreModels
import LedgerStorage
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

    /// Appends a retraction unless the event it withdraws is retracted already: the `ledger_head`
    /// row is locked first (the append lock every appender queues on), then the retractions of
    /// `eventId` are read under READ COMMITTED, so a racing retraction that committed while this
    /// one waited is seen and nothing is appended (``EventAlreadyRetracted``).
    public func commitRetraction(_ retraction: NewEvent, retracting eventId: String,
                                 afterAppend: (([LedgerEvent]) throws -> Void)?) throws -> BatchResult {
        try write {
            _ = try lockHead()
            try EventAlreadyRetracted.check(eventId, retractions: positions(mentioning: eventId, kind: .retractedEventId))
            return try appendInTransaction(events: [retraction], rejections: [], afterAppend: afterAppend)
        }
    }

    /// The append core, inside the caller's write transaction. Statements per batch:
    ///
    /// 1. `SELECT … FROM ledger_head FOR UPDATE`: takes the append lock (appenders queue here, and
    ///    under READ COMMITTED a waiter continues from the committed head);
    /// 2. `SELECT … FROM unnest($1) JOIN events ON event_id`: the batch's ids already
    ///    stored (race-free while the lock is held; the UNIQUE constraint backs it up);
    /// 3. ``AppendPlan`` decides duplicates, positions, chain hashes and outcomes, in memory, and
    ///    arrival ids continue the head's;
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
        var head = try lockHead()
        let plan = AppendPlan(events: events, head: (head.position, head.hash), recordedAt: now,
                              stored: try storedPositions(of: events))
        try copyEvents(plan.appended, sources: plan.appendedSources, previousHash: plan.previousHash)
        (head.position, head.hash) = plan.head
        if let first = plan.appended.first?.position {
            appendedInTransaction = min(appendedInTransaction?.lowerBound ?? first, first)...head.position
        }
        if !plan.arrivals.isEmpty {
            try connection.copy(into: "arrivals", columns: ["id", "event_id", "recorded_at", "source", "duplicate"]) { writer in
                for arrival in plan.arrivals {
                    head.lastArrivalId += 1
                    try writer.writeRow(.int64(head.lastArrivalId), .text(arrival.eventId), .int64(now), .text(arrival.source),
                                        .int64(arrival.duplicate ? 1 : 0))
                }
            }
        }
        let (quarantineIds, earlierQuarantineIds) = try quarantine(rejections, at: now, head: &head)
        try updateHead(head)
        try afterAppend?(plan.appended)
        return BatchResult(outcomes: plan.outcomes, quarantineIds: quarantineIds, appended: plan.appended,
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

    /// Positions of the batch's ids already stored, keyed by the ids' bytes (``AppendPlan``'s
    /// input), in one query (race-free while the append lock is held).
    private func storedPositions(of events: [NewEvent]) throws -> [[UInt8]: Int64] {
        guard !events.isEmpty else { return [:] }
        let result = try connection.run(
            "SELECT e.event_id, e.position FROM unnest($1::text[]) AS q(v) JOIN events e ON e.event_id = q.v",
            [PostgresArrayLiteral.texts(AppendPlan.distinctIds(of: events))])
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
                                    .int64(StoredDecoded.decoderVersion))
            }
        }
        try connection.copy(into: "event_keys", columns: ["key_value", "key_kind", "position"]) { writer in
            for (event, source) in zip(appended, sources) {
                for identifier in IdentifierIndexRows.stored(source.identifiers, eventId: event.eventId, kind: event.kind) {
                    try writer.writeRow(.text(identifier.value), .text(identifier.kind.rawValue), .int64(event.position))
                }
            }
        }
    }

    /// Quarantines `rejections` as ``QuarantinePlan`` says (the same bytes refused for the same
    /// reason are kept once while open): one lookup of the open rows, one `COPY` of the new ones,
    /// whose ids continue `head.lastQuarantineId`.
    private func quarantine(_ rejections: [QuarantineItem], at now: EpochMillis,
                            head: inout LockedHead) throws -> (ids: [Int64], earlier: Set<Int64>) {
        guard !rejections.isEmpty else { return ([], []) }
        var open: [QuarantinePlan.Key: Int64] = [:]
        let result = try connection.run("""
            SELECT raw_sha256, error_code, min(id) FROM quarantine
            WHERE raw_sha256 = ANY($1::text[]) AND state = 'open' GROUP BY raw_sha256, error_code
            """, [PostgresArrayLiteral.texts(Set(QuarantinePlan.digests(of: rejections)))])
        for row in result { open[QuarantinePlan.Key(digest: try row.text(0), errorCode: RejectionCode(rawValue: try row.text(1)))] = try row.int64(2) }
        let plan = QuarantinePlan(rejections: rejections, open: open)
        let newIds = plan.new.indices.map { head.lastQuarantineId + 1 + Int64($0) }
        head.lastQuarantineId += Int64(plan.new.count)
        if !plan.new.isEmpty {
            try connection.copy(into: "quarantine", columns: ["id", "recorded_at", "source", "error_code", "reason", "raw", "raw_sha256"]) { writer in
                for (id, entry) in zip(newIds, plan.new) {
                    try writer.writeRow(.int64(id), .int64(now), .text(entry.item.source), .text(entry.item.errorCode.rawValue),
                                        .text(entry.item.reason), .bytea(entry.item.raw), .text(entry.digest))
                }
            }
            try linkRecords(zip(newIds, plan.new).map { id, entry in
                let record = QuarantineRecord(id: id, recordedAt: now, source: entry.item.source, errorCode: entry.item.errorCode,
                                              reason: entry.item.reason, raw: entry.item.raw, state: "open", resolvedAt: nil, resolution: nil)
                return (.quarantine, String(id), RecordChain.quarantineDigest(record))
            })
        }
        return plan.quarantineIds(newIds: newIds)
    }

    /// The last position and its chain hash (0 and the genesis hash for an empty ledger).
    public func head() throws -> (position: Int64, hash: Data) {
        let result = try connection.run("SELECT position, hash FROM ledger_head")
        guard let row = result.first else { return (0, EventChain.genesis) }
        return (try row.int64(0), try row.bytea(1))
    }
}
