import EventStore
import Foundation
import PostgresClient

extension PostgresEventStore {
    // MARK: Group index and snapshots

    /// Group keys any of `identifiers` belongs to, in one query.
    public func groupKeys(forAny identifiers: Set<String>) throws -> Set<String> {
        guard !identifiers.isEmpty else { return [] }
        let result = try connection.run(
            "SELECT DISTINCT g.group_key FROM unnest($1::text[]) AS q(v) JOIN group_index g ON g.identifier = q.v",
            [PostgresArrayLiteral.texts(identifiers)])
        return Set(try result.map { try $0.text(0) })
    }

    /// Index rows of the given groups, by group key, then identifier and role (SQLite's order).
    public func groupIndexRows(groupKeys: Set<String>) throws -> [GroupIndexRow] {
        guard !groupKeys.isEmpty else { return [] }
        let result = try connection.run("""
            SELECT g.identifier, g.group_key, g.role FROM unnest($1::text[]) AS q(v) JOIN group_index g ON g.group_key = q.v
            ORDER BY g.group_key, g.identifier, g.role
            """, [PostgresArrayLiteral.texts(groupKeys)])
        return try result.map { GroupIndexRow(identifier: try $0.text(0), groupKey: try $0.text(1), role: try $0.text(2)) }
    }

    /// Replaces the projection rows of `removing` groups with new rows and snapshots, atomically
    /// (in the open transaction, or one of its own): three statements whatever the sizes.
    public func replaceGroups(removing: Set<String>, rows: [GroupIndexRow], states: [StoredGroupState]) throws {
        try atomically {
            if !removing.isEmpty {
                let keys = PostgresArrayLiteral.texts(removing)
                try connection.run("DELETE FROM group_index g USING unnest($1::text[]) AS q(v) WHERE g.group_key = q.v", [keys])
                try connection.run("DELETE FROM group_state s USING unnest($1::text[]) AS q(v) WHERE s.group_key = q.v", [keys])
            }
            if !rows.isEmpty {
                try connection.run("""
                    INSERT INTO group_index (identifier, group_key, role)
                    SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING
                    """, [PostgresArrayLiteral.texts(rows.map(\.identifier)), PostgresArrayLiteral.texts(rows.map(\.groupKey)),
                          PostgresArrayLiteral.texts(rows.map(\.role))])
            }
            if !states.isEmpty {
                // INSERT OR REPLACE semantics: the last snapshot of a key wins (one row per key per statement).
                var latest: [String: StoredGroupState] = [:]
                var order: [String] = []
                for state in states where latest.updateValue(state, forKey: state.groupKey) == nil { order.append(state.groupKey) }
                let unique = order.compactMap { latest[$0] }
                try connection.run("""
                    INSERT INTO group_state (group_key, state, as_of, last_position)
                    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
                    ON CONFLICT (group_key) DO UPDATE
                    SET state = EXCLUDED.state, as_of = EXCLUDED.as_of, last_position = EXCLUDED.last_position
                    """, [PostgresArrayLiteral.texts(unique.map(\.groupKey)), PostgresArrayLiteral.texts(unique.map(\.state)),
                          PostgresArrayLiteral.integers(unique.map(\.asOf)), PostgresArrayLiteral.integers(unique.map(\.lastPosition))])
            }
        }
    }

    /// Bulk-loads a rebuild's groups with binary `COPY` (the tables were emptied in this
    /// transaction, so there is nothing to conflict with): the upsert of ``replaceGroups(removing:rows:states:)``
    /// made the server parse every snapshot out of an array literal, and cost it twice the
    /// rebuilding client's time.
    public func insertRebuiltGroups(rows: [GroupIndexRow], states: [StoredGroupState]) throws {
        try atomically {
            if !rows.isEmpty {
                try connection.copy(into: "group_index", columns: ["identifier", "group_key", "role"]) { writer in
                    for row in rows { try writer.writeRow(.text(row.identifier), .text(row.groupKey), .text(row.role)) }
                }
            }
            if !states.isEmpty {
                try connection.copy(into: "group_state", columns: ["group_key", "state", "as_of", "last_position"]) { writer in
                    for state in states {
                        try writer.writeRow(.text(state.groupKey), .text(state.state), .int64(state.asOf), .int64(state.lastPosition))
                    }
                }
            }
        }
    }

    /// Every stored group snapshot, by key.
    public func groupStates() throws -> [StoredGroupState] {
        let result = try connection.run(
            "SELECT group_key, state, as_of, last_position FROM group_state ORDER BY group_key")
        return try result.map {
            StoredGroupState(groupKey: try $0.text(0), state: try $0.text(1), asOf: try $0.int64(2), lastPosition: try $0.int64(3))
        }
    }

    /// Every group key, ascending.
    public func allGroupKeys() throws -> [String] {
        try connection.run("SELECT group_key FROM group_state ORDER BY group_key").map { try $0.text(0) }
    }

    /// Deletes every projection row (group index and snapshots) before a rebuild; events are untouched.
    ///
    /// It first takes the append lock (`ledger_head FOR UPDATE`, which appenders queue on) for the
    /// rest of the transaction, as SQLite's `BEGIN IMMEDIATE` does: an append committing during the
    /// `DELETE` would otherwise leave rows the `DELETE` did not see, which the rebuild's `COPY`
    /// would then insert again (a unique violation), and the rebuild's scans would see different logs.
    public func clearProjections() throws {
        try atomically {
            _ = try connection.run("SELECT position FROM ledger_head FOR UPDATE")
            try connection.run("DELETE FROM group_index")
            _ = try connection.run("DELETE FROM group_state")
        }
    }
}
