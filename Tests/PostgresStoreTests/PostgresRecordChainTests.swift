import Foundation
import LedgerStorage
import LedgerStoreConformance
import PostgresClient
import PostgresStore
import PostgresTestSupport
import Testing

/// The record chain on PostgreSQL: the same links as SQLite for the same writes, intact after
/// everything the store writes, and each edit made with plain SQL a finding.
@Suite("PostgreSQL record chain")
struct PostgresRecordChainTests {
    /// Every kind of write: creation (configuration, root), a quarantined input, its release by a
    /// retry, a configuration value and a root added.
    static func write(_ store: any LedgerStore) throws {
        _ = try store.commit(events: [TestData.notification(1)], rejections: [TestData.rejection("x"), TestData.rejection("y")])
        _ = try store.commitRetry(events: [NewEventForRetry(quarantineId: 1, event: TestData.apiEvent(3), isPrimary: true)])
        try store.setConfigValue("api_key_id", "KEY123")
        _ = try store.addRoots([StoredTrustRoot(fingerprint: "ee", der: [1, 2], subject: "CN=second", addedAt: 2)])
    }

    @Test("both engines write the same links for the same writes, and both are intact", arguments: Backend.allCases)
    func sameLinks(_ backend: Backend) throws {
        let fixture = try StoreFixture.make(backend)
        try Self.write(fixture.store)
        let report = try #require(try fixture.store.verifyRecordChain())
        #expect(report.isIntact, "\(report.findings)")
        let links = try #require(try fixture.store.recordLinks())
        let described = links.map { "\($0.kind) \($0.subject)" }
        // Creation: each configuration value, the root, the marker that tokens are covered; then what write(_:) did, in order.
        let creation = described.prefix { $0.hasPrefix("config ") }
        #expect(creation.contains("config bundle_id") && creation.contains("config environment"))
        #expect(Array(described.dropFirst(creation.count)) == [
            "trust_root \(TestData.root.fingerprint)", "config \(RecordChain.tokensCoveredKey)", "quarantine 1", "quarantine 2", "quarantine 1", "config api_key_id", "trust_root ee",
        ])
        #expect(links.map(\.seq) == Array(1...Int64(links.count)))
        #expect(report.headHash == links.last.map { $0.hash.map { String(format: "%02x", $0) }.joined() })
    }

    @Test("plain SQL that edits, adds or deletes a configuration value, root or quarantine row is a finding", arguments: [
        ("UPDATE quarantine SET reason = 'nothing' WHERE id = 2", "quarantine item #2 differs"),
        ("DELETE FROM quarantine WHERE id = 1", "quarantine item #1 was deleted"),
        ("INSERT INTO trust_roots VALUES ('00ff', '\\x3082', 'CN=Rogue', 1)", "trust root 00ff was added"),
        ("UPDATE config SET value = 'com.evil' WHERE key = 'bundle_id'", "configuration value bundle_id differs"),
    ])
    func tampering(_ sql: String, _ finding: String) throws {
        let fixture = try StoreFixture.make(.postgres)
        try Self.write(fixture.store)
        let owner = try #require(fixture.cluster).connect()
        try owner.execute(sql)
        let report = try #require(try fixture.store.verifyRecordChain())
        #expect(report.findings.count == 1 && report.findings.first?.contains(finding) == true, "\(report.findings)")
        #expect(throws: PostgresError.self) { try owner.execute("DELETE FROM record_chain WHERE seq = 1") }
        #expect(throws: PostgresError.self) { try owner.execute("TRUNCATE record_chain") }
    }

    @Test("a deleted arrival is found on both engines' summaries: a missing id and an event without its first arrival")
    func deletedArrival() throws {
        let fixture = try StoreFixture.make(.postgres)
        try Self.write(fixture.store)
        #expect(try fixture.store.arrivalSummary(limit: 5).findings.isEmpty)
        let owner = try #require(fixture.cluster).connect()
        try owner.execute("DELETE FROM arrivals WHERE id = 1")
        let summary = try fixture.store.arrivalSummary(limit: 5)
        #expect(summary.eventsWithoutArrivalCount == 1 && summary.eventsWithoutArrival.count == 1)
        #expect(summary.rows == summary.highestId - 1)
        #expect(summary.findings.count == 2, "\(summary.findings)")
    }

    @Test("two processes setting values at once: links stay gap-free and the chain intact (the append lock orders them)")
    func concurrentWriters() throws {
        let fixture = try StoreFixture.make(.postgres)
        let group = DispatchGroup()
        let failures = Guarded<[String]>([])
        for writer in 0..<2 {
            let store = try fixture.reopen()
            let box = UncheckedStore(store)
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    for n in 0..<25 { try box.store.setConfigValue("w\(writer)-\(n)", "\(n)") }
                } catch {
                    failures.withValue { $0.append("\(error)") }
                }
            }.start()
        }
        group.wait()
        #expect(failures.withValue { $0 }.isEmpty)
        let links = try #require(try fixture.store.recordLinks())
        #expect(links.map(\.seq) == Array(1...Int64(links.count)))
        #expect(links.filter { $0.kind == .config && $0.subject.hasPrefix("w") }.count == 50)
        #expect(try fixture.store.verifyRecordChain()?.isIntact == true)
    }
}

/// Hands a store to one thread. `@unchecked Sendable` is safe: each store is used by the thread it
/// is handed to alone, after it was created here.
private final class UncheckedStore: @unchecked Sendable {
    let store: any LedgerStore
    init(_ store: any LedgerStore) { self.store = store }
}
