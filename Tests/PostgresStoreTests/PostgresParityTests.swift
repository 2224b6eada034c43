import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import LedgerStoreConformance
import PostgresClient
import PostgresStore
import PostgresTestSupport
import Testing

/// Where PostgreSQL could differ from SQLite: encodings, byte-wise ids and ordering, edits behind the triggers.
@Suite("PostgreSQL parity with SQLite")
struct PostgresParityTests {
    @Test("a database whose encoding is not UTF-8 is refused when the ledger is created (it would refuse events later)")
    func nonUTF8DatabaseRefused() throws {
        let cluster = try PostgresTestCluster()
        let admin = try PostgresConnection(url: cluster.url(database: "postgres"))
        try admin.execute("CREATE DATABASE latin TEMPLATE template0 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C'")
        do {
            _ = try PostgresEventStore.create(url: cluster.url(database: "latin"), configuration: TestData.configuration(),
                                              roots: [TestData.root])
            Issue.record("a LATIN1 database was accepted")
        } catch let error as LedgerStoreError {
            #expect("\(error)".contains("uses server encoding LATIN1; a SeatLedger ledger needs a UTF8 database"), "\(error)")
        }
        let tables = try PostgresConnection(url: cluster.url(database: "latin"))
            .query("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
        #expect(try tables.first?.int64(0) == 0, "nothing was created")
    }

    @Test("verify finds a superuser's edit and deletes made behind the triggers")
    func superuserEdits() throws {
        let fixture = try StoreFixture.make(.postgres)
        _ = try fixture.store.commit(events: (1...5).map { TestData.apiEvent($0) })
        let owner = try #require(fixture.cluster).connect()
        try owner.execute("SET session_replication_role = replica")
        try owner.execute("UPDATE events SET source = 'edited' WHERE position = 3")
        var v = try fixture.store.verifyChain()
        #expect(v.firstBadPosition == 3, "\(v)")
        try owner.execute("DELETE FROM events WHERE position = 3")
        v = try fixture.store.verifyChain()
        #expect(v.firstBadPosition == 3, "\(v)")
        try owner.execute("DELETE FROM events WHERE position = 5")
        v = try fixture.store.verifyChain()
        #expect(v.firstBadPosition == 3, "\(v)")
    }

    @Test("text keys order byte-wise on both backends (group keys, claim requests)", arguments: Backend.allCases)
    func ordering(_ backend: Backend) throws {
        let fixture = try StoreFixture.make(backend)
        let store = fixture.store
        let keys = ["b", "B", "a", "A", "é", "z", "_", "1", "a b", "ab", "Ab"]
        try store.write {
            try store.replaceGroups(removing: [], rows: keys.map { GroupIndexRow(identifier: "id-" + $0, groupKey: $0, role: "key") })
        }
        let bytewise = keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        #expect(try store.allGroupKeys() == bytewise)
        for (i, key) in keys.enumerated() {
            _ = try store.beginClaimRequest(originalTransactionId: "1", memberRef: key, appTransactionId: nil,
                                            newIdentifier: key, explicitIdentifier: nil, now: Int64(i % 2))
        }
        let claims = try store.claimRequests(originalTransactionId: "1", state: nil).map(\.requestIdentifier)
        let sortedByRule = keys.enumerated().map { (Int64($0.offset % 2), $0.element) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : Array($0.1.utf8).lexicographicallyPrecedes(Array($1.1.utf8)) }.map(\.1)
        #expect(claims == sortedByRule)
    }

    @Test("event ids compare byte for byte: a canonically equivalent spelling is another event", arguments: Backend.allCases)
    func canonicalIds(_ backend: Backend) throws {
        let fixture = try StoreFixture.make(backend)
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        _ = try fixture.store.commit(events: [TestData.apiEvent(1, id: nfc)])
        let result = try fixture.store.commit(events: [TestData.apiEvent(2, id: nfc), TestData.apiEvent(3, id: nfd)])
        #expect(result.outcomes == [.duplicate(existingPosition: 1), .appended(position: 2)], "\(backend) \(result.outcomes)")
    }
}
