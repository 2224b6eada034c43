import AppStoreModels
import EventStore
import Foundation
import LedgerEvents
import LedgerIntake
import LedgerStorage
import PostgresStore
import PostgresTestSupport
import SeatLedger
import Testing

/// Issue #23 item 8 (in part): a quarantine item can be dismissed, the decision recorded in the log.
@Suite("Corrections: quarantine dismiss")
struct CorrectionTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    @Test("quarantine dismiss appends a decision event (who, why), marks the item dismissed, deletes nothing; verify stays clean")
    func dismissRecordsDecision() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let file = try test.directory.writeLines([try factory.notification(uuid: "keep-me"), "{ garbage"], to: "in.ndjson")
        #expect(try CLI.run(["ingest", "--db", test.path, file.path]).exitCode == 3)
        let item = try #require(try test.freshStore().quarantine().first)

        let missingReason = try CLI.run(["quarantine", "dismiss", String(item.id), "--db", test.path])
        #expect(missingReason.exitCode == 2, "\(missingReason)")
        let dismissed = try CLI.run(["quarantine", "dismiss", String(item.id), "--reason", "a test line, not from Apple",
                                     "--by", "ops-alice", "--db", test.path, "--json"])
        #expect(dismissed.exitCode == 0, "\(dismissed)")
        #expect(try dismissed.json()["decisionPosition"]?.int64Value == 2)

        let store = try test.freshStore()
        let record = try #require(try store.quarantineRecord(id: item.id))
        #expect(record.state == "dismissed")
        #expect(record.raw == Data("{ garbage".utf8), "the raw bytes stay")
        #expect(record.resolution?.contains("ops-alice") == true && record.resolution?.contains("a test line") == true)
        let decision = try #require(try store.event(at: 2))
        #expect(decision.kind == .decision && decision.origin == .operatorDecision)
        #expect(decision.decoded["decision"]?["reason"] == "a test line, not from Apple")
        #expect(decision.decoded["decision"]?["by"] == "ops-alice")
        #expect(decision.decoded["decision"]?["quarantineId"]?.int64Value == item.id)
        #expect(try store.event(id: "keep-me")?.position == 1)

        let again = try CLI.run(["quarantine", "dismiss", String(item.id), "--reason", "twice", "--db", test.path])
        #expect(again.exitCode == 2, "\(again)")
        let verify = try CLI.run(["verify", "--db", test.path])
        #expect(verify.exitCode == 0, "\(verify)")
        let list = try CLI.run(["quarantine", "list", "--state", "dismissed", "--db", test.path, "--json"])
        #expect(try list.json().arrayValue?.count == 1, "\(list)")
    }

    /// Dismisses the one quarantine item of `ledger` through the library and checks the result.
    static func dismissThroughLibrary(_ ledger: Ledger) throws {
        let (_, outcomes) = try ledger.ingestBatch([InboundMessage(raw: Data("not a message".utf8), source: "t", origin: .file)])
        guard case .quarantined(let id, _) = outcomes[0] else { Issue.record("\(outcomes[0])"); return }
        let position = try ledger.dismissQuarantine(id: id, reason: "noise", by: "test")
        #expect(try ledger.store.quarantineRecord(id: id)?.state == "dismissed")
        #expect(try ledger.store.event(at: position)?.kind == .decision)
        #expect(try ledger.store.verifyChain().isIntact)
        #expect(try ledger.staleProjections().isEmpty)
        #expect(throws: CorrectionError.self) { try ledger.dismissQuarantine(id: id, reason: "again", by: "test") }
    }

    @Test("the library records a dismissal on SQLite")
    func dismissOnSQLite() throws {
        try Self.dismissThroughLibrary(TestLedger().ledger)
    }

    @Test("the library records a dismissal on PostgreSQL")
    func dismissOnPostgres() throws {
        let cluster = try PostgresTestCluster()
        let template = try TestLedger()
        let store = try StoreLocation(cluster.url()).create(configuration: template.store.configuration(),
                                                            roots: template.store.trustRoots())
        try Self.dismissThroughLibrary(try Ledger.open(store: store))
    }
}
