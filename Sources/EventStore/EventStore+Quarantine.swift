import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage

extension EventStore {
    /// The rows' states (the write transaction holds the file's write lock already).
    public func lockQuarantineStates(ids: [Int64]) throws -> [Int64: String] {
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
