import AppStoreModels
import CSQLite
import Foundation
import LedgerStorage

extension EventStore {
    // MARK: Group snapshots (a cache of folded groups, `group_snapshot`)
    //
    // A file without the table (an older schema opened read-only, which cannot be written
    // anyway) reads none and skips the writes.

    /// The snapshots of the groups whose keys are in `first ... last`, by group key.
    public func groupSnapshots(from first: String, through last: String) throws -> [String: GroupSnapshot] {
        return try LedgerStoreError.wrappingFailures {
            guard hasGroupSnapshots, first <= last else { return [:] }
            let statement = try connection.prepare("""
                SELECT group_key, computed_at, valid_until, state FROM group_snapshot
                WHERE group_key BETWEEN ? AND ? ORDER BY group_key
                """)
            defer { statement.reset() }
            try statement.bind(.text(first), .text(last))
            var result: [String: GroupSnapshot] = [:]
            while try statement.step() {
                let key = statement.text(0)
                result[key] = GroupSnapshot(groupKey: key, computedAt: statement.int64(1), validUntil: statement.int64(2),
                                            state: statement.text(3))
            }
            return result
        }
    }

    /// When each stored snapshot was folded and until when it holds (read through
    /// `group_snapshot_validity`, not the states), by group key.
    public func groupSnapshotValidity() throws -> [String: GroupSnapshotValidity] {
        return try LedgerStoreError.wrappingFailures {
            guard hasGroupSnapshots else { return [:] }
            let statement = try connection.prepare("""
                SELECT group_key, computed_at, valid_until FROM group_snapshot INDEXED BY group_snapshot_validity
                """)
            defer { statement.reset() }
            var result: [String: GroupSnapshotValidity] = [:]
            while try statement.step() {
                result[statement.text(0)] = GroupSnapshotValidity(computedAt: statement.int64(1), validUntil: statement.int64(2))
            }
            return result
        }
    }

    /// Stores `snapshots`, replacing those of the same groups (inside the caller's transaction).
    public func storeGroupSnapshots(_ snapshots: [GroupSnapshot]) throws {
        try LedgerStoreError.wrappingFailures {
            guard hasGroupSnapshots, !snapshots.isEmpty else { return }
            let statement = try connection.prepare("""
                INSERT INTO group_snapshot(group_key, computed_at, valid_until, state) VALUES (?, ?, ?, ?)
                ON CONFLICT(group_key) DO UPDATE SET computed_at = excluded.computed_at, valid_until = excluded.valid_until,
                    state = excluded.state
                """)
            defer { statement.reset() }
            for snapshot in snapshots {
                statement.reset()
                try statement.bind(.text(snapshot.groupKey), .integer(snapshot.computedAt), .integer(snapshot.validUntil),
                                   .text(snapshot.state)).run()
            }
        }
    }

    /// Deletes the snapshots of the given groups (inside the caller's transaction).
    public func deleteGroupSnapshots(groupKeys: Set<String>) throws {
        try LedgerStoreError.wrappingFailures {
            guard hasGroupSnapshots, !groupKeys.isEmpty else { return }
            let statement = try connection.prepare("DELETE FROM group_snapshot WHERE group_key = ?")
            defer { statement.reset() }
            for key in groupKeys {
                statement.reset()
                try statement.bind(.text(key)).run()
            }
        }
    }

    /// Deletes every snapshot.
    public func clearGroupSnapshots() throws {
        try LedgerStoreError.wrappingFailures {
            guard hasGroupSnapshots else { return }
            try connection.execute("DELETE FROM group_snapshot")
        }
    }
}
