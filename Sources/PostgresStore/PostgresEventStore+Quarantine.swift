import AppStoreModels
import LedgerStorage
import Foundation
import LedgerEvents
import PostgresClient

extension PostgresEventStore {
    /// Locks the rows (`FOR UPDATE`, in id order) and reads their states: a concurrent retry or
    /// dismissal of the same item waits here, then finds it resolved.
    public func lockQuarantineStates(ids: [Int64]) throws -> [Int64: String] {
        guard !ids.isEmpty else { return [:] }
        var states: [Int64: String] = [:]
        for row in try connection.run("SELECT id, state FROM quarantine WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE",
                                      [PostgresArrayLiteral.integers(ids.sorted())]) {
            states[try row.int64(0)] = try row.text(1)
        }
        return states
    }

    /// Sets every row's state and resolution in one `UPDATE … FROM unnest(…)`.
    public func resolveQuarantine(_ resolutions: [QuarantineRetryPlan.Resolution], at now: EpochMillis) throws {
        guard !resolutions.isEmpty else { return }
        try connection.run("""
            UPDATE quarantine q SET state = u.state, resolved_at = $4, resolution = u.resolution
            FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u(id, state, resolution)
            WHERE q.id = u.id
            """, [
                PostgresArrayLiteral.integers(resolutions.map(\.id)),
                PostgresArrayLiteral.texts(resolutions.map(\.state)),
                PostgresArrayLiteral.texts(resolutions.map(\.resolution)),
                .int64(now),
            ])
    }
}
