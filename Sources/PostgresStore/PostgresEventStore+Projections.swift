import LedgerStorage
import Foundation
import PostgresClient

extension PostgresEventStore {
    // MARK: Group index

    /// Group keys any of `identifiers` belongs to, in one query.
    public func groupKeys(forAny identifiers: Set<String>) throws -> Set<String> {
        return try LedgerStoreError.wrappingFailures {
            guard !identifiers.isEmpty else { return [] }
            let result = try connection.run(
                "SELECT DISTINCT g.group_key FROM unnest($1::text[]) AS q(v) JOIN group_index g ON g.identifier = q.v",
                [PostgresArrayLiteral.texts(identifiers)])
            return Set(try result.map { try $0.text(0) })
        }
    }

    /// Index rows of the given groups, by group key, then identifier and role (SQLite's order).
    public func groupIndexRows(groupKeys: Set<String>) throws -> [GroupIndexRow] {
        return try LedgerStoreError.wrappingFailures {
            guard !groupKeys.isEmpty else { return [] }
            let result = try connection.run("""
                SELECT g.identifier, g.group_key, g.role FROM unnest($1::text[]) AS q(v) JOIN group_index g ON g.group_key = q.v
                ORDER BY g.group_key, g.identifier, g.role
                """, [PostgresArrayLiteral.texts(groupKeys)])
            return try result.map { GroupIndexRow(identifier: try $0.text(0), groupKey: try $0.text(1), role: try $0.text(2)) }
        }
    }

    /// Replaces the index rows of `removing` groups with new rows, atomically (in the open
    /// transaction, or one of its own): two statements whatever the sizes.
    public func replaceGroups(removing: Set<String>, rows: [GroupIndexRow]) throws {
        try LedgerStoreError.wrappingFailures {
            try atomically {
                if !removing.isEmpty {
                    try connection.run("DELETE FROM group_index g USING unnest($1::text[]) AS q(v) WHERE g.group_key = q.v",
                                       [PostgresArrayLiteral.texts(removing)])
                }
                if !rows.isEmpty {
                    try connection.run("""
                        INSERT INTO group_index (identifier, group_key, role)
                        SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING
                        """, [PostgresArrayLiteral.texts(rows.map(\.identifier)), PostgresArrayLiteral.texts(rows.map(\.groupKey)),
                              PostgresArrayLiteral.texts(rows.map(\.role))])
                }
            }
        }
    }

    /// Bulk-loads a rebuild's index rows with binary `COPY` (the index was emptied in this
    /// transaction, so there is nothing to conflict with).
    public func insertRebuiltGroups(rows: [GroupIndexRow]) throws {
        try LedgerStoreError.wrappingFailures {
            guard !rows.isEmpty else { return }
            try atomically {
                try connection.copy(into: "group_index", columns: ["identifier", "group_key", "role"]) { writer in
                    for row in rows { try writer.writeRow(.text(row.identifier), .text(row.groupKey), .text(row.role)) }
                }
            }
        }
    }

    /// Every group key in the index, ascending (by bytes: the column is `COLLATE "C"`).
    public func allGroupKeys() throws -> [String] {
        return try LedgerStoreError.wrappingFailures {
            try connection.run("SELECT DISTINCT group_key FROM group_index ORDER BY group_key").map { try $0.text(0) }
        }
    }

    /// Deletes every group index row before a rebuild; events and facts are untouched.
    ///
    /// It first takes the append lock (`ledger_head FOR UPDATE`, which appenders queue on) for the
    /// rest of the transaction, as SQLite's `BEGIN IMMEDIATE` does: an append committing during the
    /// `DELETE` would otherwise leave rows the `DELETE` did not see, which the rebuild's `COPY`
    /// would then insert again (a unique violation), and the rebuild's scans would see different logs.
    public func clearProjections() throws {
        try LedgerStoreError.wrappingFailures {
            try atomically {
                try holdAppendsForRebuild()
                try connection.run("DELETE FROM group_index")
            }
        }
    }

    /// Takes the append lock (`ledger_head FOR UPDATE`, which appenders queue on) for the rest of
    /// the transaction: a rebuild that rewrites only the groups that differ does not clear the
    /// index, and must still keep appends out while it scans the log and compares.
    public func holdAppendsForRebuild() throws {
        try LedgerStoreError.wrappingFailures {
            _ = try connection.run("SELECT position FROM ledger_head FOR UPDATE")
        }
    }
}
