import AppStoreModels
import Foundation

extension EventStore {
    /// Quarantined inputs, oldest first; `state` filters (`open`, `released`, `duplicate`).
    public func quarantine(state: String? = nil, limit: Int = Int.max) throws(SQLiteError) -> [QuarantineRecord] {
        let statement: SQLiteStatement
        let columns = "id, recorded_at, source, error_code, reason, raw, state, resolved_at, resolution"
        if let state {
            statement = try connection.prepare("SELECT \(columns) FROM quarantine WHERE state = ? ORDER BY id LIMIT ?")
            try statement.bind(.text(state), .integer(Int64(min(limit, Int(Int64.max)))))
        } else {
            statement = try connection.prepare("SELECT \(columns) FROM quarantine ORDER BY id LIMIT ?")
            try statement.bind(.integer(Int64(min(limit, Int(Int64.max)))))
        }
        var records: [QuarantineRecord] = []
        while try statement.step() { records.append(readQuarantine(statement)) }
        return records
    }

    /// How many quarantined inputs are in `state`.
    public func quarantineCount(state: String) throws(SQLiteError) -> Int {
        let statement = try connection.prepare("SELECT count(*) FROM quarantine WHERE state = ?")
        defer { statement.reset() }
        try statement.bind(.text(state))
        _ = try statement.step()
        return Int(statement.int64(0))
    }

    /// One quarantined input.
    public func quarantineRecord(id: Int64) throws(SQLiteError) -> QuarantineRecord? {
        let statement = try connection.prepare(
            "SELECT id, recorded_at, source, error_code, reason, raw, state, resolved_at, resolution FROM quarantine WHERE id = ?")
        defer { statement.reset() }
        try statement.bind(.integer(id))
        return try statement.step() ? readQuarantine(statement) : nil
    }

    private func readQuarantine(_ statement: SQLiteStatement) -> QuarantineRecord {
        QuarantineRecord(id: statement.int64(0), recordedAt: statement.int64(1), source: statement.text(2),
                         errorCode: RejectionCode(rawValue: statement.text(3)), reason: statement.text(4), raw: statement.blob(5),
                         state: statement.text(6), resolvedAt: statement.optionalInt64(7),
                         resolution: statement.optionalText(8))
    }

    /// Marks a quarantined input resolved by a retry (called inside the retry's transaction).
    func resolveQuarantine(id: Int64, state: String, resolution: String, at time: EpochMillis) throws(SQLiteError) {
        try connection.prepare("UPDATE quarantine SET state = ?, resolved_at = ?, resolution = ? WHERE id = ?")
            .bind(.text(state), .integer(time), .text(resolution), .integer(id)).run()
        if let record = try quarantineRecord(id: id) {
            try linkRecords([(.quarantine, String(id), RecordChain.quarantineDigest(record))])
        }
    }

    /// Commits a retry: the events appended, and each quarantine id's resolution, atomically.
    ///
    /// A retried item that is rejected again stays `open` (its row is not duplicated).
    public func commitRetry(events: [NewEventForRetry], afterAppend: (([LedgerEvent]) throws -> Void)? = nil) throws -> BatchResult {
        try write {
            // Inside the write lock: an item another command resolved since the caller read it is
            // not applied (a dismissal must not be overridden by a retry, nor recorded twice).
            var states: [Int64: String] = [:]
            for id in Set(events.map(\.quarantineId)) { states[id] = try quarantineRecord(id: id)?.state }
            try QuarantineItemNotOpen.check(events, states: states)
            let result = try commitInTransaction(events: events.map(\.event), rejections: [], afterAppend: afterAppend)
            let now = clock()
            for (item, outcome) in zip(events, result.outcomes) {
                switch outcome {
                case .appended(let position):
                    let (state, resolution) = item.appendedResolution(at: position)
                    try resolveQuarantine(id: item.quarantineId, state: state, resolution: resolution, at: now)
                case .duplicate(let position):
                    if item.isPrimary {
                        try resolveQuarantine(id: item.quarantineId, state: "duplicate",
                                              resolution: "already in the ledger at position \(position)", at: now)
                    }
                }
            }
            return result
        }
    }
}

import LedgerEvents
import LedgerStorage
