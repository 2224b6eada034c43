import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage

extension EventStore {
    /// Appends a batch of verified events and quarantines a batch of rejections, atomically.
    ///
    /// Duplicates (same event id already stored, or twice in the batch) append nothing and are
    /// logged in `arrivals`. `afterAppend` runs inside the same transaction with the appended
    /// events, so projections commit with the events or not at all.
    public func commit(events: [NewEvent], rejections: [QuarantineItem] = [],
                       afterAppend: (([LedgerEvent]) throws -> Void)? = nil) throws -> BatchResult {
        try write {
            try commitInTransaction(events: events, rejections: rejections, afterAppend: afterAppend)
        }
    }

    /// Appends a retraction unless the event it withdraws is retracted already, checked inside the
    /// write transaction (`BEGIN IMMEDIATE` holds the write lock, so no other writer commits between
    /// the check and the append): ``EventAlreadyRetracted``.
    public func commitRetraction(_ retraction: NewEvent, retracting eventId: String,
                                 afterAppend: (([LedgerEvent]) throws -> Void)? = nil) throws -> BatchResult {
        try write {
            try EventAlreadyRetracted.check(eventId, retractions: positions(mentioning: eventId, kind: .retractedEventId))
            return try commitInTransaction(events: [retraction], rejections: [], afterAppend: afterAppend)
        }
    }

    /// Inserts one `events` row (every column, hashes included).
    static let insertEventSQL = """
        INSERT INTO events(position, event_id, kind, type, subtype, status, occurred_at, recorded_at, source,
                           origin, raw, prev_hash, hash)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    /// Inserts one `event_decoded` row.
    static let insertDecodedSQL = "INSERT INTO event_decoded(position, decoded, verification, decoder_version) VALUES (?, ?, ?, ?)"

    /// The append core, inside the caller's write transaction: ``AppendPlan`` and
    /// ``QuarantinePlan`` decide; this writes their rows with prepared statements.
    func commitInTransaction(events: [NewEvent], rejections: [QuarantineItem],
                             afterAppend: (([LedgerEvent]) throws -> Void)?) throws -> BatchResult {
        let now = clock()
        let plan = AppendPlan(events: events, head: try head(), recordedAt: now, stored: try storedPositions(of: events))
        let insertEvent = try connection.prepare(Self.insertEventSQL)
        let insertDecoded = try connection.prepare(Self.insertDecodedSQL)
        var previousHash = plan.previousHash
        for (event, source) in zip(plan.appended, plan.appendedSources) {
            insertEvent.reset()
            try insertEvent.bind([
                .integer(event.position), .text(event.eventId), .text(event.kind.rawValue), .optional(event.type),
                .optional(event.subtype), .optional(event.status), .integer(event.occurredAt), .integer(event.recordedAt),
                .text(event.source), .text(event.origin.rawValue), .blob(event.raw), .blob(previousHash), .blob(event.hash),
            ]).run()
            insertDecoded.reset()
            try insertDecoded.bind(.integer(event.position), .text(source.decodedText), .text(source.verificationText),
                                   .integer(EventStore.decoderVersion)).run()
            try insertKeys(IdentifierIndexRows.stored(source.identifiers, eventId: event.eventId, kind: event.kind), position: event.position)
            previousHash = event.hash
        }
        let insertArrival = try connection.prepare(
            "INSERT INTO arrivals(event_id, recorded_at, source, duplicate) VALUES (?, ?, ?, ?)")
        for arrival in plan.arrivals {
            insertArrival.reset()
            try insertArrival.bind(.text(arrival.eventId), .integer(now), .text(arrival.source),
                                   .integer(arrival.duplicate ? 1 : 0)).run()
        }
        let (quarantineIds, earlierQuarantineIds) = try quarantine(rejections, at: now)
        if let afterAppend { try afterAppend(plan.appended) }
        return BatchResult(outcomes: plan.outcomes, quarantineIds: quarantineIds, appended: plan.appended,
                           earlierQuarantineIds: earlierQuarantineIds)
    }

    /// Positions of the batch's ids already stored, keyed by the ids' bytes (``AppendPlan``'s input).
    private func storedPositions(of events: [NewEvent]) throws(SQLiteError) -> [[UInt8]: Int64] {
        guard !events.isEmpty else { return [:] }
        let find = try connection.prepare("SELECT position FROM events WHERE event_id = ?")
        defer { find.reset() }
        var stored: [[UInt8]: Int64] = [:]
        for id in AppendPlan.distinctIds(of: events) {
            find.reset()
            try find.bind(.text(id))
            if try find.step() { stored[Array(id.utf8)] = find.int64(0) }
        }
        return stored
    }

    /// Quarantines `rejections` as ``QuarantinePlan`` says (the same bytes refused for the same
    /// reason are kept once while open), each new row linked into the record chain.
    private func quarantine(_ rejections: [QuarantineItem], at now: EpochMillis) throws -> (ids: [Int64], earlier: Set<Int64>) {
        guard !rejections.isEmpty else { return ([], []) }
        let findOpen = try connection.prepare(
            "SELECT error_code, min(id) FROM quarantine WHERE raw_sha256 = ? AND state = 'open' GROUP BY error_code")
        defer { findOpen.reset() }
        var open: [QuarantinePlan.Key: Int64] = [:]
        for digest in Set(QuarantinePlan.digests(of: rejections)) {
            findOpen.reset()
            try findOpen.bind(.text(digest))
            while try findOpen.step() { open[QuarantinePlan.Key(digest: digest, errorCode: RejectionCode(rawValue: findOpen.text(0)))] = findOpen.int64(1) }
        }
        let plan = QuarantinePlan(rejections: rejections, open: open)
        let insert = try connection.prepare(
            "INSERT INTO quarantine(recorded_at, source, error_code, reason, raw, raw_sha256) VALUES (?, ?, ?, ?, ?, ?)")
        var newIds: [Int64] = []
        for entry in plan.new {
            let item = entry.item
            insert.reset()
            try insert.bind(.integer(now), .text(item.source), .text(item.errorCode.rawValue), .text(item.reason), .blob(item.raw),
                            .text(entry.digest)).run()
            let id = connection.lastInsertRowID
            newIds.append(id)
            let record = QuarantineRecord(id: id, recordedAt: now, source: item.source, errorCode: item.errorCode, reason: item.reason,
                                          raw: item.raw, state: "open", resolvedAt: nil, resolution: nil)
            try linkRecords([(.quarantine, String(id), RecordChain.quarantineDigest(record))])
        }
        return plan.quarantineIds(newIds: newIds)
    }

    /// Indexes an event under its identifiers with multi-row `INSERT OR IGNORE`s of up to
    /// ``keysPerInsert`` rows (one statement per row count is cached), instead of one statement
    /// per identifier.
    private func insertKeys(_ identifiers: Set<EventIdentifier>, position: Int64) throws(SQLiteError) {
        let all = Array(identifiers)
        var start = 0
        while start < all.count {
            let chunk = all[start..<min(start + Self.keysPerInsert, all.count)]
            let rows = Array(repeating: "(?, ?, ?)", count: chunk.count).joined(separator: ", ")
            let insert = try connection.prepare("INSERT OR IGNORE INTO event_keys(key_value, key_kind, position) VALUES \(rows)")
            var values: [SQLiteValue] = []
            values.reserveCapacity(chunk.count * 3)
            for identifier in chunk {
                values.append(.text(identifier.value))
                values.append(.text(identifier.kind.rawValue))
                values.append(.integer(position))
            }
            try insert.bind(values).run()
            start += chunk.count
        }
    }

    /// The most identifier rows one `INSERT` into `event_keys` carries.
    static let keysPerInsert = 16

    /// The schema version this build writes to a ledger file (`PRAGMA user_version`).
    public static var schemaVersion: Int64 { LedgerSchema.currentVersion }

    /// Version of the decoder that wrote `event_decoded` (``StoredDecoded/decoderVersion``).
    public static var decoderVersion: Int64 { StoredDecoded.decoderVersion }

    /// The last position and its hash (0 and the genesis hash for an empty ledger).
    public func head() throws(SQLiteError) -> (position: Int64, hash: Data) {
        let statement = try connection.prepare("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1")
        defer { statement.reset() }
        guard try statement.step() else { return (0, EventChain.genesis) }
        return (statement.int64(0), statement.blob(1))
    }
}
