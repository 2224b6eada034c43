import AppStoreModels
import CSQLite
import Foundation
import LedgerStorage

extension EventStore {
    // MARK: Facts (a cache of the events' decoded payloads)

    /// Stores the projection facts of an event (inside the append transaction).
    public func storeFacts(position: Int64, facts: Data) throws {
        try LedgerStoreError.wrappingFailures {
            try connection.prepare("INSERT OR REPLACE INTO event_facts(position, facts) VALUES (?, ?)")
                .bind(.integer(position), .blob(facts)).run()
        }
    }

    /// Positions of events that mention any of `identifiers` (notifications whose ids they are
    /// included: ``IdentifierIndexRows``).
    public func positions(mentioningAny identifiers: Set<String>) throws -> Set<Int64> {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare(Self.mentioningSQL)
            var positions = Set<Int64>()
            for identifier in identifiers {
                statement.reset()
                try statement.bind(.text(identifier))
                while try statement.step() { positions.insert(statement.int64(0)) }
            }
            return positions
        }
    }

    /// Positions of events that mention each of `identifiers` (every identifier is a key).
    public func positions(byIdentifier identifiers: Set<String>) throws -> [String: Set<Int64>] {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare(Self.mentioningSQL)
            defer { statement.reset() }
            var result: [String: Set<Int64>] = [:]
            result.reserveCapacity(identifiers.count)
            for identifier in identifiers {
                statement.reset()
                try statement.bind(.text(identifier))
                var positions = Set<Int64>()
                while try statement.step() { positions.insert(statement.int64(0)) }
                result[identifier] = positions
            }
            return result
        }
    }

    /// The positions of the events that mention `?1`: its rows in the index, and the notification
    /// whose id it is.
    private static let mentioningSQL = "SELECT position FROM event_keys WHERE key_value = ?1 UNION ALL \(notificationWithIdSQL)"

    /// The stored facts of the given positions (encoded), by position.
    public func facts(at positions: Set<Int64>) throws -> [Int64: Data] {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("SELECT facts FROM event_facts WHERE position = ?")
            defer { statement.reset() }
            var result: [Int64: Data] = [:]
            for position in positions {
                statement.reset()
                try statement.bind(.integer(position))
                if try statement.step() { result[position] = statement.blob(0) }
            }
            return result
        }
    }

    /// Positions of events without stored facts (e.g. written by an older decoder), ascending.
    ///
    /// Positions are gap-free from 1 (the chain guarantees it), so this walks the small facts
    /// table against `1...max(position)` instead of scanning the events table, whose rows carry
    /// the raw bytes (a scan of it reads the whole log).
    public func positionsWithoutFacts() throws -> [Int64] {
        return try LedgerStoreError.wrappingFailures {
            let last = try connection.scalarInt("SELECT max(position) FROM events") ?? 0
            let statement = try connection.prepare("SELECT position FROM event_facts ORDER BY position")
            defer { statement.reset() }
            var positions: [Int64] = []
            var expected: Int64 = 1
            while try statement.step() {
                let position = statement.int64(0)
                while expected < min(position, last + 1) { positions.append(expected); expected += 1 }
                expected = max(expected, position + 1)
            }
            while expected <= last { positions.append(expected); expected += 1 }
            return positions
        }
    }

    // MARK: Group index

    /// Group keys any of `identifiers` belongs to.
    public func groupKeys(forAny identifiers: Set<String>) throws -> Set<String> {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("SELECT group_key FROM group_index WHERE identifier = ?")
            var keys = Set<String>()
            for identifier in identifiers {
                statement.reset()
                try statement.bind(.text(identifier))
                while try statement.step() { keys.insert(statement.text(0)) }
            }
            return keys
        }
    }

    /// Index rows of the given groups.
    public func groupIndexRows(groupKeys: Set<String>) throws -> [GroupIndexRow] {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("SELECT identifier, group_key, role FROM group_index WHERE group_key = ?")
            var rows: [GroupIndexRow] = []
            for key in groupKeys.sorted() {
                statement.reset()
                try statement.bind(.text(key))
                while try statement.step() {
                    rows.append(GroupIndexRow(identifier: statement.text(0), groupKey: statement.text(1), role: statement.text(2)))
                }
            }
            return rows
        }
    }

    /// Replaces the index rows of `removing` groups with new rows (same transaction as the caller's).
    public func replaceGroups(removing: Set<String>, rows: [GroupIndexRow]) throws {
        try LedgerStoreError.wrappingFailures {
            let deleteIndex = try connection.prepare("DELETE FROM group_index WHERE group_key = ?")
            for key in removing {
                deleteIndex.reset()
                try deleteIndex.bind(.text(key)).run()
            }
            let insertRow = try connection.prepare("INSERT OR IGNORE INTO group_index(identifier, group_key, role) VALUES (?, ?, ?)")
            for row in rows {
                insertRow.reset()
                try insertRow.bind(.text(row.identifier), .text(row.groupKey), .text(row.role)).run()
            }
        }
    }

    /// Every group key, ascending (by bytes): the keys of the group index.
    public func allGroupKeys() throws -> [String] {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("SELECT DISTINCT group_key FROM group_index ORDER BY group_key")
            var keys: [String] = []
            while try statement.step() { keys.append(statement.text(0)) }
            return keys
        }
    }

    /// Nothing to do: a write transaction (`BEGIN IMMEDIATE`) already holds the database's one
    /// write lock, which every append needs, until it commits.
    public func holdAppendsForRebuild() throws {
        try LedgerStoreError.wrappingFailures {  }
    }

    /// Deletes every group index row before a rebuild; events and facts are untouched.
    public func clearProjections() throws {
        try LedgerStoreError.wrappingFailures {
            try connection.execute("DELETE FROM group_index")
        }
    }

    /// Drops `group_index_key`, runs `body` and creates the index again (one sort instead of a
    /// B-tree insert per row). Inside the caller's transaction: if `body` throws, the rollback
    /// restores the index; readers keep their snapshot, index included, until the commit.
    /// Refused outside a transaction (only its rollback can bring the index back after a failure).
    public func withGroupKeyIndexBuiltAfter<T>(_ body: () throws -> T) throws -> T {
        guard connection.isInTransaction else {
            throw SQLiteError(resultCode: SQLITE_MISUSE, message: "the group-key index is only rebuilt inside a write transaction",
                              sql: "DROP INDEX group_index_key", path: path)
        }
        try connection.execute("DROP INDEX IF EXISTS group_index_key")
        // Index rows wait in a temporary table, one row per group holding its rows as a JSON array
        // of "role|identifier" strings (staging costs one insert per group, not one per index row).
        // They go into `group_index` at the end, sorted by its key: appends to the B-tree instead
        // of a random insert (and a page of the log written again after each spill) per row.
        try connection.execute("""
            CREATE TEMP TABLE IF NOT EXISTS rebuilt_group_rows(group_key TEXT NOT NULL, rows TEXT NOT NULL);
            DELETE FROM temp.rebuilt_group_rows;
            """)
        stagesRebuiltIndexRows = true
        defer { stagesRebuiltIndexRows = false }
        let result = try body()
        // The sort of the staged rows (and of the index after it) may use a second core: SQLite's
        // sorter hands runs to a helper thread (`PRAGMA threads`; 0, none, by default). Each helper
        // holds a run of up to the page cache's size in memory, so one, whatever the core count.
        try connection.execute("PRAGMA threads = \(ProcessInfo.processInfo.activeProcessorCount > 1 ? 1 : 0)")
        defer { try? connection.execute("PRAGMA threads = 0") }
        try connection.execute("""
            INSERT OR IGNORE INTO group_index(identifier, group_key, role)
                SELECT substr(row.value, instr(row.value, '|') + 1), staged.group_key, substr(row.value, 1, instr(row.value, '|') - 1)
                FROM temp.rebuilt_group_rows AS staged, json_each(staged.rows) AS row
                ORDER BY 1, 2, 3;
            DROP TABLE temp.rebuilt_group_rows;
            CREATE INDEX group_index_key ON group_index(group_key);
            """)
        return result
    }

    /// Adds the index rows of the groups a rebuild resolved to the emptied index; inside
    /// ``withGroupKeyIndexBuiltAfter(_:)`` they are staged and sorted at its end.
    public func insertRebuiltGroups(rows: [GroupIndexRow]) throws {
        try LedgerStoreError.wrappingFailures {
            guard stagesRebuiltIndexRows else { return try replaceGroups(removing: [], rows: rows) }
            let stage = try connection.prepare("INSERT INTO temp.rebuilt_group_rows(group_key, rows) VALUES (?, ?)")
            // SQLite's JSON and string functions end text at a NUL: a group with one in an identifier
            // (rare: `\u0000` in Apple's JSON) has its rows inserted directly instead, whole.
            var direct: [GroupIndexRow] = []
            var start = rows.startIndex
            while start < rows.endIndex {
                // The run of rows of one group, each as "role|identifier": `["key|2000…","alias|…",…]` (the
                // first '|' ends the role; roles never hold one, identifiers may).
                let key = rows[start].groupKey
                var end = start
                while end < rows.endIndex && rows[end].groupKey == key { end += 1 }
                if rows[start..<end].contains(where: { $0.identifier.utf8.contains(0) }) {
                    direct += rows[start..<end]
                    start = end
                    continue
                }
                var staged: [JSONValue] = []
                staged.reserveCapacity(end - start)
                for row in rows[start..<end] {
                    guard !row.role.utf8.contains(UInt8(ascii: "|")) else {
                        throw SQLiteError(resultCode: SQLITE_MISUSE, message: "a group index role holds '|': \(row.role)",
                                          sql: "INSERT INTO temp.rebuilt_group_rows", path: path)
                    }
                    staged.append(.string(row.role + "|" + row.identifier))
                }
                stage.reset()
                try stage.bind(.text(key), .text(JSONValue.array(staged).canonicalString())).run()
                start = end
            }
            try replaceGroups(removing: [], rows: direct)
        }
    }
}
