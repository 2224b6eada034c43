import AppStoreModels
import Foundation
import LedgerEvents

/// Rejected inputs kept with their raw bytes, for `seatledger quarantine` and retries: read once
/// for every engine over ``TransactionalStore/database``. Quarantine rows are written by the
/// append (``AppendRows``).
public protocol QuarantineStore: TransactionalStore {}

extension QuarantineStore {
    private static var columns: String { "id, recorded_at, source, error_code, reason, raw, state, resolved_at, resolution" }

    /// Quarantined inputs, oldest first, at most `limit` (a negative one: no limit), optionally in
    /// one state (`open`, `released`, `duplicate`, `dismissed`).
    public func quarantine(state: String?, limit: Int) throws -> [QuarantineRecord] {
        let limit = SQLValue.integer(limit < 0 ? Int64.max : Int64(clamping: limit))
        if let state {
            return try database.query("SELECT \(Self.columns) FROM quarantine WHERE state = ? ORDER BY id LIMIT ?",
                                      [.text(state), limit], QuarantineRecord.init(row:))
        }
        return try database.query("SELECT \(Self.columns) FROM quarantine ORDER BY id LIMIT ?", [limit], QuarantineRecord.init(row:))
    }

    /// One quarantine record.
    public func quarantineRecord(id: Int64) throws -> QuarantineRecord? {
        try database.query("SELECT \(Self.columns) FROM quarantine WHERE id = ?", [.integer(id)], QuarantineRecord.init(row:)).first
    }

    /// How many items are in `state`, without reading their raw bytes (`/metrics` asks at every scrape).
    public func quarantineCount(state: String) throws -> Int {
        Int(try database.query("SELECT count(*) FROM quarantine WHERE state = ?", [.text(state)]) { try $0.int64(0) }.first ?? 0)
    }
}

extension QuarantineRecord {
    /// A record from a row of `id, recorded_at, source, error_code, reason, raw, state, resolved_at, resolution`.
    init(row: any SQLRow) throws {
        self.init(id: try row.int64(0), recordedAt: try row.int64(1), source: try row.text(2),
                  errorCode: RejectionCode(rawValue: try row.text(3)), reason: try row.text(4), raw: try row.blob(5),
                  state: try row.text(6), resolvedAt: try row.optionalInt64(7), resolution: try row.optionalText(8))
    }
}
