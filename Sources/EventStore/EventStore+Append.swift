import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage

extension EventStore {
    /// Inserts one `events` row (every column, hashes included).
    static let insertEventSQL = """
        INSERT INTO events(position, event_id, kind, type, subtype, status, occurred_at, recorded_at, source,
                           origin, raw, prev_hash, hash)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    /// Inserts one `event_decoded` row.
    static let insertDecodedSQL = "INSERT INTO event_decoded(position, decoded, verification, decoder_version) VALUES (?, ?, ?, ?)"

    /// The write transaction (`BEGIN IMMEDIATE`) holds the file's write lock already: reads the head.
    public func lockHeadForAppend() throws -> (position: Int64, hash: Data) { try head() }

    /// Writes the plan's rows with prepared statements: `events`, `event_decoded`, `event_keys`,
    /// `arrivals` and `quarantine` (ids from the rowid). The head is the last `events` row.
    public func writeAppend(_ plan: AppendPlan, quarantine: QuarantinePlan) throws(SQLiteError) -> [Int64] {
        let now = plan.recordedAt
        if !plan.appended.isEmpty {
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
        }
        if !plan.arrivals.isEmpty {
            let insertArrival = try connection.prepare(
                "INSERT INTO arrivals(event_id, recorded_at, source, duplicate) VALUES (?, ?, ?, ?)")
            for arrival in plan.arrivals {
                insertArrival.reset()
                try insertArrival.bind(.text(arrival.eventId), .integer(now), .text(arrival.source),
                                       .integer(arrival.duplicate ? 1 : 0)).run()
            }
        }
        guard !quarantine.new.isEmpty else { return [] }
        let insert = try connection.prepare(
            "INSERT INTO quarantine(recorded_at, source, error_code, reason, raw, raw_sha256) VALUES (?, ?, ?, ?, ?, ?)")
        var newIds: [Int64] = []
        for entry in quarantine.new {
            let item = entry.item
            insert.reset()
            try insert.bind(.integer(now), .text(item.source), .text(item.errorCode.rawValue), .text(item.reason), .blob(item.raw),
                            .text(entry.digest)).run()
            newIds.append(connection.lastInsertRowID)
        }
        return newIds
    }

    /// Positions of the given ids already stored, keyed by the ids' bytes, one lookup each.
    public func storedPositions(ofEventIds eventIds: [String]) throws(SQLiteError) -> [[UInt8]: Int64] {
        guard !eventIds.isEmpty else { return [:] }
        let find = try connection.prepare("SELECT position FROM events WHERE event_id = ?")
        defer { find.reset() }
        var stored: [[UInt8]: Int64] = [:]
        for id in eventIds {
            find.reset()
            try find.bind(.text(id))
            if try find.step() { stored[Array(id.utf8)] = find.int64(0) }
        }
        return stored
    }

    /// The lowest open quarantine id per (digest, error code), one lookup per digest.
    public func openQuarantineIds(digests: Set<String>) throws(SQLiteError) -> [QuarantinePlan.Key: Int64] {
        guard !digests.isEmpty else { return [:] }
        let findOpen = try connection.prepare(
            "SELECT error_code, min(id) FROM quarantine WHERE raw_sha256 = ? AND state = 'open' GROUP BY error_code")
        defer { findOpen.reset() }
        var open: [QuarantinePlan.Key: Int64] = [:]
        for digest in digests {
            findOpen.reset()
            try findOpen.bind(.text(digest))
            while try findOpen.step() { open[QuarantinePlan.Key(digest: digest, errorCode: RejectionCode(rawValue: findOpen.text(0)))] = findOpen.int64(1) }
        }
        return open
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
    public func head() throws -> (position: Int64, hash: Data) {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1")
            defer { statement.reset() }
            guard try statement.step() else { return (0, EventChain.genesis) }
            return (statement.int64(0), statement.blob(1))
        }
    }
}
