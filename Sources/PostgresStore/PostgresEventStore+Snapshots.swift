import LedgerStorage
import Foundation
import PostgresClient

extension PostgresEventStore {
    // MARK: Group snapshots (`group_snapshot`, as SQLite's)

    /// The snapshots of the groups whose keys are in `first ... last` (by bytes: `COLLATE "C"`), by group key.
    public func groupSnapshots(from first: String, through last: String) throws -> [String: GroupSnapshot] {
        return try LedgerStoreError.wrappingFailures {
            guard hasGroupSnapshots, first <= last else { return [:] }
            let result = try connection.run("""
                SELECT group_key, computed_at, valid_until, state FROM group_snapshot
                WHERE group_key BETWEEN $1 AND $2 ORDER BY group_key
                """, [.text(first), .text(last)])
            var snapshots: [String: GroupSnapshot] = [:]
            for row in result {
                let key = try row.text(0)
                snapshots[key] = GroupSnapshot(groupKey: key, computedAt: try row.int64(1), validUntil: try row.int64(2),
                                               state: try row.text(3))
            }
            return snapshots
        }
    }

    /// When each stored snapshot was folded and until when it holds, by group key.
    public func groupSnapshotValidity() throws -> [String: GroupSnapshotValidity] {
        return try LedgerStoreError.wrappingFailures {
            guard hasGroupSnapshots else { return [:] }
            var validity: [String: GroupSnapshotValidity] = [:]
            for row in try connection.run("SELECT group_key, computed_at, valid_until FROM group_snapshot") {
                validity[try row.text(0)] = GroupSnapshotValidity(computedAt: try row.int64(1), validUntil: try row.int64(2))
            }
            return validity
        }
    }

    /// Stores `snapshots`, replacing those of the same groups, in one statement (in the open
    /// transaction, or one of its own).
    public func storeGroupSnapshots(_ snapshots: [GroupSnapshot]) throws {
        try LedgerStoreError.wrappingFailures {
            guard !snapshots.isEmpty, try refreshGroupSnapshotPresence() else { return }
            _ = try connection.run("""
                INSERT INTO group_snapshot (group_key, computed_at, valid_until, state)
                SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[])
                ON CONFLICT (group_key) DO UPDATE SET computed_at = excluded.computed_at, valid_until = excluded.valid_until,
                    state = excluded.state
                """, [PostgresArrayLiteral.texts(snapshots.map(\.groupKey)), PostgresArrayLiteral.integers(snapshots.map(\.computedAt)),
                      PostgresArrayLiteral.integers(snapshots.map(\.validUntil)), PostgresArrayLiteral.texts(snapshots.map(\.state))])
        }
    }

    /// Deletes the snapshots of the given groups, in one statement.
    public func deleteGroupSnapshots(groupKeys: Set<String>) throws {
        try LedgerStoreError.wrappingFailures {
            guard !groupKeys.isEmpty, try refreshGroupSnapshotPresence() else { return }
            _ = try connection.run("DELETE FROM group_snapshot g USING unnest($1::text[]) AS q(v) WHERE g.group_key = q.v",
                                   [PostgresArrayLiteral.texts(groupKeys)])
        }
    }

    /// Deletes every snapshot.
    public func clearGroupSnapshots() throws {
        try LedgerStoreError.wrappingFailures {
            guard try refreshGroupSnapshotPresence() else { return }
            _ = try connection.run("DELETE FROM group_snapshot")
        }
    }

    /// ``hasGroupSnapshots``, looked up again while it is `false`: the tables' owner may have
    /// upgraded the ledger since this store opened it (one catalogue query per write until then).
    func refreshGroupSnapshotPresence() throws -> Bool {
        if !hasGroupSnapshots { hasGroupSnapshots = try snapshotTableExists() }
        return hasGroupSnapshots
    }

    /// Whether the ledger's schema has `group_snapshot`.
    func snapshotTableExists() throws -> Bool {
        try connection.query("SELECT to_regclass('group_snapshot') IS NOT NULL").first?.bool(0) ?? false
    }
}
