import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents

/// What happened to one message handed to ``EventStore/commit(events:rejections:afterAppend:)``.
public enum AppendOutcome: Sendable, Equatable {
    /// Appended at this position.
    case appended(position: Int64)
    /// Already in the ledger (same event id) at this position; nothing appended.
    case duplicate(existingPosition: Int64)
}

/// A rejected input on its way to quarantine, raw bytes kept.
public struct QuarantineItem: Sendable {
    /// Where it came from (file and line, spool name, stream id).
    public let source: String
    /// Machine code, e.g. `bad_signature`.
    public let errorCode: String
    /// Human reason, e.g. `bad signature: …`.
    public let reason: String
    /// The input exactly as received.
    public let raw: Data

    /// Creates a quarantine item.
    public init(source: String, errorCode: String, reason: String, raw: Data) {
        self.source = source
        self.errorCode = errorCode
        self.reason = reason
        self.raw = raw
    }
}

/// The result of one committed batch.
public struct BatchResult: Sendable {
    /// One outcome per event handed in, same order.
    public let outcomes: [AppendOutcome]
    /// Quarantine ids, one per rejection handed in, same order.
    public let quarantineIds: [Int64]
    /// The events that were appended (positions ascending).
    public let appended: [LedgerEvent]
    /// The ids of ``quarantineIds`` that were open before this batch: the same bytes refused for
    /// the same reason by an earlier run (kept once; nothing new was stored for them).
    public let earlierQuarantineIds: Set<Int64>

    /// Creates a result (for other ``LedgerStore`` implementations).
    public init(outcomes: [AppendOutcome], quarantineIds: [Int64], appended: [LedgerEvent], earlierQuarantineIds: Set<Int64> = []) {
        self.outcomes = outcomes
        self.quarantineIds = quarantineIds
        self.appended = appended
        self.earlierQuarantineIds = earlierQuarantineIds
    }
}

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

    /// Inserts one `events` row (every column, hashes included).
    static let insertEventSQL = """
        INSERT INTO events(position, event_id, kind, type, subtype, status, occurred_at, recorded_at, source,
                           origin, raw, prev_hash, hash)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    /// Inserts one `event_decoded` row.
    static let insertDecodedSQL = "INSERT INTO event_decoded(position, decoded, verification, decoder_version) VALUES (?, ?, ?, ?)"

    func commitInTransaction(events: [NewEvent], rejections: [QuarantineItem],
                             afterAppend: (([LedgerEvent]) throws -> Void)?) throws -> BatchResult {
        let now = clock()
        var (position, previousHash) = try head()
        let findExisting = try connection.prepare("SELECT position FROM events WHERE event_id = ?")
        defer { findExisting.reset() }
        let insertEvent = try connection.prepare(Self.insertEventSQL)
        let insertDecoded = try connection.prepare(Self.insertDecodedSQL)
        let insertArrival = try connection.prepare(
            "INSERT INTO arrivals(event_id, recorded_at, source, duplicate) VALUES (?, ?, ?, ?)")

        var outcomes: [AppendOutcome] = []
        outcomes.reserveCapacity(events.count)
        var appended: [LedgerEvent] = []
        // Keyed by the id's bytes, as the UNIQUE index compares them (Swift's String equality would
        // take canonically equivalent spellings for one id).
        var inBatch: [[UInt8]: Int64] = [:]
        for event in events {
            let key = Array(event.eventId.utf8)
            var existing = inBatch[key]
            if existing == nil {
                findExisting.reset()
                try findExisting.bind(.text(event.eventId))
                if try findExisting.step() { existing = findExisting.int64(0) }
            }
            if let existing {
                outcomes.append(.duplicate(existingPosition: existing))
                insertArrival.reset()
                try insertArrival.bind(.text(event.eventId), .integer(now), .text(event.source), .integer(1)).run()
                continue
            }
            position += 1
            let row = EventChain.Row(position: position, eventId: event.eventId, kind: event.kind.rawValue,
                                     type: event.type, subtype: event.subtype, status: event.status,
                                     occurredAt: event.occurredAt, recordedAt: now, source: event.source,
                                     origin: event.origin.rawValue, raw: event.raw)
            let hash = EventChain.hash(previous: previousHash, row: row)
            insertEvent.reset()
            try insertEvent.bind([
                .integer(position), .text(event.eventId), .text(event.kind.rawValue), .optional(event.type),
                .optional(event.subtype), .optional(event.status), .integer(event.occurredAt), .integer(now),
                .text(event.source), .text(event.origin.rawValue), .blob(event.raw), .blob(previousHash), .blob(hash),
            ]).run()
            insertDecoded.reset()
            try insertDecoded.bind(.integer(position), .text(event.decodedText), .text(event.verificationText),
                                   .integer(EventStore.decoderVersion)).run()
            try insertKeys(Set(event.identifiers), position: position)
            insertArrival.reset()
            try insertArrival.bind(.text(event.eventId), .integer(now), .text(event.source), .integer(0)).run()
            inBatch[key] = position
            outcomes.append(.appended(position: position))
            appended.append(LedgerEvent(position: position, eventId: event.eventId, kind: event.kind, type: event.type,
                                        subtype: event.subtype, status: event.status, occurredAt: event.occurredAt,
                                        recordedAt: now, source: event.source, origin: event.origin, raw: event.raw,
                                        decoded: event.decoded, verification: event.verification, hash: hash))
            previousHash = hash
        }
        var quarantineIds: [Int64] = []
        var earlierQuarantineIds = Set<Int64>()
        if !rejections.isEmpty {
            var insertedNow = Set<Int64>()
            let findOpen = try connection.prepare(
                "SELECT id FROM quarantine WHERE raw_sha256 = ? AND error_code = ? AND state = 'open' LIMIT 1")
            defer { findOpen.reset() }
            let insertQuarantine = try connection.prepare(
                "INSERT INTO quarantine(recorded_at, source, error_code, reason, raw, raw_sha256) VALUES (?, ?, ?, ?, ?, ?)")
            for item in rejections {
                // The same refused bytes for the same reason are quarantined once (re-running an input adds nothing).
                let digest = SHA256Digest.hex(item.raw)
                findOpen.reset()
                try findOpen.bind(.text(digest), .text(item.errorCode))
                if try findOpen.step() {
                    let id = findOpen.int64(0)
                    quarantineIds.append(id)
                    if !insertedNow.contains(id) { earlierQuarantineIds.insert(id) }
                    continue
                }
                insertQuarantine.reset()
                try insertQuarantine.bind(.integer(now), .text(item.source), .text(item.errorCode), .text(item.reason),
                                          .blob(item.raw), .text(digest)).run()
                let id = connection.lastInsertRowID
                quarantineIds.append(id)
                insertedNow.insert(id)
                let record = QuarantineRecord(id: id, recordedAt: now, source: item.source, errorCode: item.errorCode, reason: item.reason,
                                              raw: item.raw, state: "open", resolvedAt: nil, resolution: nil)
                try linkRecords([(.quarantine, String(id), RecordChain.quarantineDigest(record))])
            }
        }
        if let afterAppend { try afterAppend(appended) }
        return BatchResult(outcomes: outcomes, quarantineIds: quarantineIds, appended: appended,
                           earlierQuarantineIds: earlierQuarantineIds)
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

    /// Version of the decoder that wrote `event_decoded`; bump to re-derive the cache.
    ///
    /// 2: `decoded` is stored without a notification's nested JWS strings (``StoredDecoded``);
    /// reads put them back from `raw`. Rows of version 1 hold them and read unchanged.
    public static let decoderVersion: Int64 = 2

    /// The last position and its hash (0 and the genesis hash for an empty ledger).
    public func head() throws(SQLiteError) -> (position: Int64, hash: Data) {
        let statement = try connection.prepare("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1")
        defer { statement.reset() }
        guard try statement.step() else { return (0, EventChain.genesis) }
        return (statement.int64(0), statement.blob(1))
    }
}
