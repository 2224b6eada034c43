import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage

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

    /// The rows' states (the write transaction holds the file's write lock already).
    public func lockQuarantineStates(ids: [Int64]) throws(SQLiteError) -> [Int64: String] {
        var states: [Int64: String] = [:]
        for id in ids { states[id] = try quarantineRecord(id: id)?.state }
        return states
    }

    /// Sets each row's state and resolution, one `UPDATE` each.
    public func resolveQuarantine(_ resolutions: [QuarantineRetryPlan.Resolution], at now: EpochMillis) throws(SQLiteError) {
        let update = try connection.prepare("UPDATE quarantine SET state = ?, resolved_at = ?, resolution = ? WHERE id = ?")
        for resolved in resolutions {
            update.reset()
            try update.bind(.text(resolved.state), .integer(now), .text(resolved.resolution), .integer(resolved.id)).run()
        }
    }
}
