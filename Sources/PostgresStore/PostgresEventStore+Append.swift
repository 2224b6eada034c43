import AppStoreModels
import LedgerStorage
import Foundation
import JWSVerification
import LedgerEvents
import PostgresClient

extension PostgresEventStore {
    /// Locks the `ledger_head` row until the transaction ends (the append lock every appender
    /// queues on; under READ COMMITTED a waiter continues from the committed head) and reads it.
    /// Arrival and quarantine ids continue the row's counters (``writeAppend(_:quarantine:)``).
    public func lockHeadForAppend() throws -> (position: Int64, hash: Data) {
        let head = try lockHead()
        lockedHead = head
        return (head.position, head.hash)
    }

    /// Writes the plan with binary `COPY` into `events`, `event_decoded`, `event_keys`, `arrivals`
    /// and `quarantine` (ids continuing the head row's), then `UPDATE ledger_head` with the new
    /// position, hash and ids: one statement per table, whatever the batch's size.
    public func writeAppend(_ plan: AppendPlan, quarantine: QuarantinePlan) throws -> [Int64] {
        guard var head = lockedHead else {
            throw PostgresError(kind: .usage, message: "writeAppend without lockHeadForAppend in the same transaction")
        }
        let now = plan.recordedAt
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
        let newIds = quarantine.new.indices.map { head.lastQuarantineId + 1 + Int64($0) }
        head.lastQuarantineId += Int64(quarantine.new.count)
        if !quarantine.new.isEmpty {
            try connection.copy(into: "quarantine", columns: ["id", "recorded_at", "source", "error_code", "reason", "raw", "raw_sha256"]) { writer in
                for (id, entry) in zip(newIds, quarantine.new) {
                    try writer.writeRow(.int64(id), .int64(now), .text(entry.item.source), .text(entry.item.errorCode.rawValue),
                                        .text(entry.item.reason), .bytea(entry.item.raw), .text(entry.digest))
                }
            }
        }
        try updateHead(head)
        lockedHead = head
        return newIds
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

    /// Positions of the given ids already stored, keyed by the ids' bytes, in one query.
    public func storedPositions(ofEventIds eventIds: [String]) throws -> [[UInt8]: Int64] {
        guard !eventIds.isEmpty else { return [:] }
        let result = try connection.run(
            "SELECT e.event_id, e.position FROM unnest($1::text[]) AS q(v) JOIN events e ON e.event_id = q.v",
            [PostgresArrayLiteral.texts(eventIds)])
        var positions: [[UInt8]: Int64] = [:]
        for row in result { positions[Array(try row.text(0).utf8)] = try row.int64(1) }
        return positions
    }

    /// The lowest open quarantine id per (digest, error code), in one query.
    public func openQuarantineIds(digests: Set<String>) throws -> [QuarantinePlan.Key: Int64] {
        guard !digests.isEmpty else { return [:] }
        var open: [QuarantinePlan.Key: Int64] = [:]
        let result = try connection.run("""
            SELECT raw_sha256, error_code, min(id) FROM quarantine
            WHERE raw_sha256 = ANY($1::text[]) AND state = 'open' GROUP BY raw_sha256, error_code
            """, [PostgresArrayLiteral.texts(digests)])
        for row in result { open[QuarantinePlan.Key(digest: try row.text(0), errorCode: RejectionCode(rawValue: try row.text(1)))] = try row.int64(2) }
        return open
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

    /// The last position and its chain hash (0 and the genesis hash for an empty ledger).
    public func head() throws -> (position: Int64, hash: Data) {
        return try LedgerStoreError.wrappingFailures {
            let result = try connection.run("SELECT position, hash FROM ledger_head")
            guard let row = result.first else { return (0, EventChain.genesis) }
            return (try row.int64(0), try row.bytea(1))
        }
    }
}
