import AppStoreModels
@testable import EventStore
import Foundation
import LedgerEvents
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
                try store.insertRebuiltGroups(rows: [GroupIndexRow(identifier: "i1", groupKey: "g1", role: "key")],
                                              states: [StoredGroupState(groupKey: "g1", state: "{}", asOf: 1, lastPosition: 1)])
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
}
