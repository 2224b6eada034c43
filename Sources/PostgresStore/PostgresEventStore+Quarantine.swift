import AppStoreModels
import LedgerStorage
import Foundation
import LedgerEvents
import PostgresClient

extension PostgresEventStore {
    private static let quarantineColumns = "id, recorded_at, source, error_code, reason, raw, state, resolved_at, resolution"

    /// Quarantined inputs, oldest first; `state` filters (`open`, `released`, `duplicate`).
    public func quarantine(state: String?, limit: Int) throws -> [QuarantineRecord] {
        // As SQLite's LIMIT: a negative limit means no limit.
        let limit = PostgresValue.int64(limit < 0 ? Int64.max : Int64(clamping: limit))
        let result: PostgresResult
        if let state {
            result = try connection.run(
                "SELECT \(Self.quarantineColumns) FROM quarantine WHERE state = $1 ORDER BY id LIMIT $2",
                [.text(state), limit])
        } else {
            result = try connection.run(
                "SELECT \(Self.quarantineColumns) FROM quarantine ORDER BY id LIMIT $1", [limit])
        }
        return try result.map(readQuarantine)
    }

    /// One quarantined input.
    public func quarantineRecord(id: Int64) throws -> QuarantineRecord? {
        let result = try connection.run(
            "SELECT \(Self.quarantineColumns) FROM quarantine WHERE id = $1", [.int64(id)])
        return try result.first.map(readQuarantine)
    }

    /// How many quarantined inputs are in `state`.
    public func quarantineCount(state: String) throws -> Int {
        let result = try connection.run("SELECT count(*) FROM quarantine WHERE state = $1", [.text(state)])
        return Int(try result.first?.int64(0) ?? 0)
    }

    private func readQuarantine(_ row: PostgresRow) throws -> QuarantineRecord {
        QuarantineRecord(id: try row.int64(0), recordedAt: try row.int64(1), source: try row.text(2),
                         errorCode: RejectionCode(rawValue: try row.text(3)), reason: try row.text(4), raw: try row.bytea(5),
                         state: try row.text(6), resolvedAt: try row.optionalInt64(7), resolution: try row.optionalText(8))
    }

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
