import AppStoreModels
@testable import EventStore
import Foundation
import LedgerEvents
import LedgerStorage
import Testing

/// How a rebuild refills the SQLite projections: the group index's secondary index is built once.
@Suite("Rebuilt projections on SQLite")
struct RebuiltProjectionsSQLiteTests {
    @Test("a rebuild's group-key index is dropped and built again in its transaction; a failure restores it")
    func groupKeyIndexBuiltAfter() throws {
        let directory = try TemporaryDirectory(label: "group-key-index")
        let store = try directory.bareStore("l.sqlite")
        func indexSQL() throws -> String? {
            try store.connection.scalarText("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'group_index_key'")
        }
        let original = try #require(try indexSQL())
        var insideHadIndex: Bool?
        try store.write {
            try store.clearProjections()
            try store.withGroupKeyIndexBuiltAfter {
                insideHadIndex = try indexSQL() != nil
                try store.insertRebuiltGroups(rows: [GroupIndexRow(identifier: "i1", groupKey: "g1", role: "key")])
            }
        }
        #expect(insideHadIndex == false)
        #expect(try indexSQL() == original)
        #expect(try store.connection.scalarInt("SELECT count(*) FROM group_index INDEXED BY group_index_key WHERE group_key = 'g1'") == 1)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write {
                try store.clearProjections()
                try store.withGroupKeyIndexBuiltAfter { throw Stop() }
            }
        }
        #expect(try indexSQL() == original)
        #expect(try store.groupKeys(forAny: ["i1"]) == ["g1"])
        // Outside a transaction it refuses, and the index stays.
        #expect(throws: SQLiteError.self) { try store.withGroupKeyIndexBuiltAfter { throw Stop() } }
        #expect(try indexSQL() == original)
    }

    @Test("inside the rebuild's block, index rows wait in a temporary table and go in sorted and de-duplicated at its end")
    func indexRowsStagedThenSorted() throws {
        let directory = try TemporaryDirectory(label: "staged-index-rows")
        let store = try directory.bareStore("l.sqlite")
        func count(_ sql: String) throws -> Int64? { try store.connection.scalarInt(sql) }
        // Rows in group order, identifiers out of order, one row twice, text that JSON must escape.
        let rows = (0..<300).reversed().flatMap { g in
            [GroupIndexRow(identifier: "k\(g)", groupKey: "g\(g)", role: "key"),
             GroupIndexRow(identifier: "z\(g * 7 % 300)", groupKey: "g\(g)", role: "alias")]
        } + [GroupIndexRow(identifier: "k5", groupKey: "g5", role: "key"),
             GroupIndexRow(identifier: "q\"\\\n\u{1}é名", groupKey: "g7", role: "alias"),
             GroupIndexRow(identifier: "a|b|", groupKey: "g8", role: "alias")]
        var stagedInside: Int64?
        var indexedInside: Int64?
        try store.write {
            try store.clearProjections()
            try store.withGroupKeyIndexBuiltAfter {
                try store.insertRebuiltGroups(rows: Array(rows.prefix(250)))
                try store.insertRebuiltGroups(rows: Array(rows.dropFirst(250)))
                stagedInside = try count("SELECT count(*) FROM temp.rebuilt_group_rows, json_each(rebuilt_group_rows.rows)")
                indexedInside = try count("SELECT count(*) FROM group_index")
            }
        }
        #expect(stagedInside == Int64(rows.count))
        #expect(indexedInside == 0)
        #expect(try count("SELECT count(*) FROM group_index") == 602)
        #expect(try store.groupKeys(forAny: ["a|b|"]) == ["g8"], "a '|' in an identifier survives (the first one ends the role)")
        #expect(try store.groupKeys(forAny: ["q\"\\\n\u{1}é名"]) == ["g7"], "escaped in the staged JSON, the same text back")
        #expect(try count("SELECT count(*) FROM sqlite_temp_master WHERE name = 'rebuilt_group_rows'") == 0, "the temporary table is dropped")
        #expect(try store.groupKeys(forAny: ["z7"]) == ["g1"])
        #expect(try store.groupIndexRows(groupKeys: ["g1"]).count == 2)
        #expect(try store.allGroupKeys().count == 300)
        // A role with a '|' could not be told from its identifier: refused, not mangled (SQLite's
        // error inside the store error every engine's transaction throws).
        #expect {
            try store.write {
                try store.withGroupKeyIndexBuiltAfter {
                    try store.insertRebuiltGroups(rows: [GroupIndexRow(identifier: "x", groupKey: "gx", role: "al|ias")])
                }
            }
        } throws: { error in
            LedgerStoreError.databaseFailure(in: error) is SQLiteError && error is LedgerStoreError
        }
        // A failing block leaves nothing staged behind, and rows written outside it go straight in.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write {
                try store.withGroupKeyIndexBuiltAfter {
                    try store.insertRebuiltGroups(rows: [GroupIndexRow(identifier: "x", groupKey: "gx", role: "key")])
                    throw Stop()
                }
            }
        }
        try store.write {
            try store.insertRebuiltGroups(rows: [GroupIndexRow(identifier: "y", groupKey: "gy", role: "key")])
        }
        #expect(try store.groupKeys(forAny: ["x"]).isEmpty)
        #expect(try store.groupKeys(forAny: ["y"]) == ["gy"])
    }

    @Test("a ledger connection does not zero the pages a DELETE frees (secure_delete FAST, whatever SQLite was built with)")
    func freedPagesNotZeroed() throws {
        let directory = try TemporaryDirectory(label: "secure-delete")
        let store = try directory.bareStore("l.sqlite")
        #expect(try store.connection.scalarInt("PRAGMA secure_delete") == 2)
        let reopened = try EventStore.open(at: directory.path("l.sqlite"))
        #expect(try reopened.connection.scalarInt("PRAGMA secure_delete") == 2)
    }

    @Test("events for facts are read through the covering metadata index; an older ledger gets it at a rebuild that derives facts")
    func metadataIndex() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction()))
        try test.append(line: factory.apiResponse(body: ["totalSeatCount": 5, "availableSeatCount": 4, "assignedSeatClaimIds": []]))
        let store = try EventStore.open(at: test.path)
        func hasIndex() throws -> Bool {
            try store.connection.scalarText("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'events_metadata'") != nil
        }
        #expect(try hasIndex(), "a new ledger has it")
        var plan: [String] = []
        let explain = try store.connection.prepare("EXPLAIN QUERY PLAN " + EventStore.eventsForFactsSQL)
        try explain.bind(.integer(1), .integer(2))
        while try explain.step() { plan.append(explain.text(3)) }
        explain.reset()
        #expect(plan.contains { $0.contains("COVERING INDEX events_metadata") }, "\(plan)")

        // A ledger from before the index: a warm rebuild leaves it so, one that derives facts adds it.
        try store.connection.execute("DROP INDEX events_metadata")
        #expect(try !hasIndex())
        try test.reopen()
        #expect(try test.ledger.rebuildProjections() == 1)
        #expect(try !hasIndex(), "nothing to derive: no scan of the log")
        try store.connection.execute("DELETE FROM event_facts")
        #expect(try test.ledger.rebuildProjections() == 1)
        #expect(try hasIndex())
        #expect(try store.positionsWithoutFacts().isEmpty)
        #expect(try test.ledger.staleProjections().isEmpty)
    }

    @Test("verify does not name sound groups as stale when facts are missing: it says it could not check, and why (exit 1); after rebuild it passes")
    func verifyWithMissingFacts() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction()))
        try test.append(line: factory.apiResponse(body: ["totalSeatCount": 5, "availableSeatCount": 4, "assignedSeatClaimIds": []]))
        let store = try EventStore.open(at: test.path)
        try store.connection.execute("DELETE FROM event_facts WHERE position = 2")
        let text = try CLI.run(["verify", "--db", test.path])
        #expect(text.exitCode == 1, "\(text)")
        #expect(text.stdout.contains("Projections NOT checked: 1 events have no cached projection facts"), "\(text)")
        #expect(!text.stdout.contains("STALE"), "\(text)")
        let json = try CLI.run(["verify", "--db", test.path, "--json"]).json()
        #expect(json["projectionsChecked"] == false && json["eventsWithoutFacts"] == 1 && json["staleGroups"] == [])
        #expect(try CLI.run(["rebuild", "--db", test.path]).exitCode == 0)
        let after = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(after.exitCode == 0, "\(after)")
        #expect(try after.json()["projectionsChecked"] == true)
    }

    @Test("rebuild --progress reports its last phases too (nothing to write, or the index rows put in place; then the snapshots folded, or none)",
          arguments: [false, true])
    func progressNamesTheLastPhase(emptiedIndex: Bool) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction()))
        let rows = try test.store.groupIndexRows(groupKeys: Set(try test.store.allGroupKeys())).count
        if emptiedIndex {
            let sql = try RawSQLite(path: test.path)
            try sql.execute("DELETE FROM group_index")
            sql.close()
        }
        let result = try CLI.run(["rebuild", "--db", test.path, "--progress"])
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stderr.split(separator: "\n")
        // Each counted step shows done of total, the share and its rate (its first and last report always).
        #expect(result.stderr.contains("rebuild: resolving identities: 1 of 1 events (100%) · "), "\(result)")
        if emptiedIndex {
            #expect(lines.contains("rebuild: putting \(rows) group index rows in place and committing"), "\(result)")
            #expect(result.stderr.contains("rebuild: writing the group index: 1 of 1 groups (100%) · "), "\(result)")
            // Then every group's snapshot is folded again, the last counted step.
            #expect(lines.contains("rebuild: folding 1 group snapshots"), "\(result)")
            #expect(lines.last?.hasPrefix("rebuild: folding group snapshots: 1 of 1 groups (100%) · ") == true, "\(result)")
        } else {
            #expect(lines.contains("rebuild: the group index matches the log: nothing to write"), "\(result)")
            #expect(lines.last == "rebuild: every group snapshot holds: none to fold", "\(result)")
            #expect(result.stderr.contains("rebuild: comparing the group index: 1 of 1 groups (100%) · "), "\(result)")
            #expect(!result.stderr.contains("writing the group index"), "\(result)")
        }
        #expect(result.stderr.contains("/s\n"), "\(result)")
    }
}
