import Foundation

/// The gap-free, commit-ordered global position on PostgreSQL, in its smallest form (see README.md).
///
/// Every appending transaction moves one single-row counter, `ledger_head`, with
/// `UPDATE … SET position = position + n RETURNING position`. The row lock it takes is held to
/// COMMIT/ROLLBACK, so appenders serialise: positions are handed out and become visible in commit
/// order, with no gaps (a rollback restores the row, so nothing is consumed). A reader polling
/// `WHERE position > last ORDER BY position` therefore never skips an event.
public enum PostgresLedgerHead {
    /// The schema: the singleton head row and a minimal log keyed by position.
    public static let schemaSQL = """
        CREATE TABLE IF NOT EXISTS ledger_head (
            singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
            position bigint NOT NULL CHECK (position >= 0)
        );
        INSERT INTO ledger_head (singleton, position) VALUES (true, 0) ON CONFLICT DO NOTHING;
        CREATE TABLE IF NOT EXISTS ledger_log (
            position bigint PRIMARY KEY,
            payload bytea NOT NULL
        );
        """

    /// Rows per INSERT statement when appending (two parameters each).
    static let rowsPerInsert = 1000

    /// Creates the tables and the head row (idempotent).
    public static func createSchema(on connection: PostgresConnection) throws(PostgresError) {
        try connection.execute(schemaSQL)
    }

    /// Reserves the next `count` positions inside the caller's open transaction and returns them.
    ///
    /// Locks the head row until that transaction ends; must not be called outside one (the lock
    /// would be released at once and the positions' rows could commit out of order).
    public static func reserve(_ count: Int, on connection: PostgresConnection) throws(PostgresError) -> ClosedRange<Int64> {
        guard count > 0 else {
            throw PostgresError(kind: .usage, message: "reserve needs a positive count, got \(count)")
        }
        guard connection.isInTransaction else {
            throw PostgresError(kind: .usage, message: "reserve must run inside the appending transaction, so the head lock lasts until COMMIT")
        }
        let sql = "UPDATE ledger_head SET position = position + $1 RETURNING position"
        let result = try connection.preparedQuery(sql, [.int64(Int64(count))])
        guard result.rowCount == 1 else {
            throw PostgresError(kind: .server, message: "ledger_head has \(result.rowCount) rows; it must have exactly one", sql: sql)
        }
        let last = try result.int64(row: 0, column: 0)
        return (last - Int64(count) + 1)...last
    }

    /// Appends `payloads` in one transaction and returns their positions (consecutive, in order).
    public static func append(_ payloads: [Data], on connection: PostgresConnection) throws -> ClosedRange<Int64> {
        try connection.transaction {
            let positions = try reserve(payloads.count, on: connection)
            try insert(payloads, from: positions.lowerBound, on: connection)
            return positions
        }
    }

    /// Inserts `payloads` at consecutive positions from `first` (inside the appending transaction).
    public static func insert(_ payloads: [Data], from first: Int64, on connection: PostgresConnection) throws(PostgresError) {
        var offset = 0
        while offset < payloads.count {
            let chunk = payloads[offset..<min(offset + rowsPerInsert, payloads.count)]
            let tuples = (0..<chunk.count).map { "($\(2 * $0 + 1), $\(2 * $0 + 2))" }.joined(separator: ", ")
            var parameters: [PostgresValue] = []
            parameters.reserveCapacity(chunk.count * 2)
            for (index, payload) in chunk.enumerated() {
                parameters.append(.int64(first + Int64(offset + index)))
                parameters.append(.bytea(payload))
            }
            try connection.preparedQuery("INSERT INTO ledger_log (position, payload) VALUES \(tuples)", parameters)
            offset += chunk.count
        }
    }

    /// Up to `limit` entries after `position`, in position order (what a tailing reader polls).
    public static func read(after position: Int64, limit: Int, on connection: PostgresConnection) throws(PostgresError) -> [(position: Int64, payload: Data)] {
        let result = try connection.preparedQuery(
            "SELECT position, payload FROM ledger_log WHERE position > $1 ORDER BY position LIMIT $2",
            [.int64(position), .int64(Int64(limit))], resultFormat: .binary)
        var entries: [(position: Int64, payload: Data)] = []
        entries.reserveCapacity(result.rowCount)
        for row in result {
            entries.append((try row.int64(0), try row.bytea(1)))
        }
        return entries
    }

    /// The head's position: the last position handed out by a committed append.
    public static func head(on connection: PostgresConnection) throws(PostgresError) -> Int64 {
        try connection.scalarInt64("SELECT position FROM ledger_head") ?? 0
    }
}
