import AppStoreModels
import EventStore
import Foundation
import LedgerStorage
@testable import SeatLedger
import Testing

/// The record chain covers what is not an event: configuration values, trust roots and quarantine
/// rows. Everything SeatLedger writes keeps `verify` intact; an edit, an addition or a deletion
/// made with another tool is a finding (exit 1) that names the row (issue 23, finding 6).
@Suite("Record chain: configuration, trust roots and quarantine (SQLite, CLI)")
struct RecordChainTests {
    /// A ledger with two quarantined inputs (one retried into the ledger after its root was added,
    /// one dismissed), an added root and a configuration value set: every kind of write.
    static func ledger() throws -> TestLedger {
        let test = try TestLedger()
        let p256 = try PayloadFactory(prefix: "p256-")
        let lines = [try p256.notification(uuid: "p256-1", transaction: p256.transaction()), "not json at all"]
        let file = try test.directory.writeLines(lines, to: "in.ndjson")
        let ingest = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", file.path])
        try #require(try ingest.json()["quarantined"] == 2, "\(ingest)")
        let addRoot = try CLI.run(["config", "add-root", TestPaths.p256Root.path, "--db", test.path])
        try #require(addRoot.exitCode == 0, "\(addRoot)")
        _ = try CLI.run(["quarantine", "retry", "1", "--db", test.path])
        let dismiss = try CLI.run(["quarantine", "dismiss", "2", "--reason", "garbage from a test", "--db", test.path])
        try #require(dismiss.exitCode == 0, "\(dismiss)")
        try test.reopen()
        try test.store.setConfigValue("api_key_id", "KEY123")
        return test
    }

    @Test("every write SeatLedger makes keeps the record chain intact; each row's latest link matches it")
    func writesStayIntact() throws {
        let test = try Self.ledger()
        let report = try #require(try test.store.verifyRecordChain())
        #expect(report.isIntact, "\(report.findings)")
        let links = try #require(try test.store.recordLinks())
        // Creation linked bundle_id, environment, created_at and the root; then 2 quarantine rows, a
        // root, a release, a dismissal (and the configuration values those commands set) and api_key_id.
        #expect(links.filter { $0.kind == .trustRoot }.count == 2)
        #expect(links.filter { $0.kind == .quarantine && $0.subject == "1" }.count == 2, "inserted, then released")
        #expect(links.filter { $0.kind == .quarantine && $0.subject == "2" }.count == 2, "inserted, then dismissed")
        #expect(links.contains { $0.kind == .config && $0.subject == "api_key_id" })
        #expect(links.map(\.seq) == Array(1...Int64(links.count)))
        let verify = try CLI.run(["verify", "--db", test.path])
        #expect(verify.exitCode == 0, "\(verify)")
        #expect(verify.stdout.contains("Record chain intact: \(links.count) links over configuration, trust roots and quarantine."), "\(verify)")
        let json = try CLI.run(["verify", "--db", test.path, "--json"]).json()
        #expect(json["records"]?["intact"] == true)
        #expect(json["records"]?["linksChecked"] == .int(Int64(links.count)))
    }

    struct Tamper: Sendable, CustomTestStringConvertible {
        let name: String
        let sql: String
        let finding: String
        var testDescription: String { name }
    }

    static let tampering: [Tamper] = [
        Tamper(name: "an edited quarantine reason", sql: "UPDATE quarantine SET reason = 'nothing to see' WHERE id = 2",
               finding: "quarantine item #2 differs from what SeatLedger wrote"),
        Tamper(name: "a quarantine item reopened", sql: "UPDATE quarantine SET state = 'open', resolved_at = NULL, resolution = NULL WHERE id = 2",
               finding: "quarantine item #2 differs"),
        Tamper(name: "a deleted quarantine item", sql: "DELETE FROM quarantine WHERE id = 1",
               finding: "quarantine item #1 was deleted outside SeatLedger"),
        Tamper(name: "a rogue trust root", sql: "INSERT INTO trust_roots SELECT '00ff', der, 'CN=Rogue', 1 FROM trust_roots LIMIT 1",
               finding: "trust root 00ff was added outside SeatLedger"),
        Tamper(name: "a deleted trust root", sql: "DELETE FROM trust_roots WHERE rowid = (SELECT max(rowid) FROM trust_roots)",
               finding: "was deleted outside SeatLedger"),
        Tamper(name: "a changed bundle id", sql: "UPDATE config SET value = 'com.evil.app' WHERE key = 'bundle_id'",
               finding: "configuration value bundle_id differs from what SeatLedger wrote"),
        Tamper(name: "a configuration value added", sql: "INSERT INTO config VALUES ('api_base_url', 'https://evil.example')",
               finding: "configuration value api_base_url was added outside SeatLedger"),
    ]

    @Test("a row edited, added or deleted with another tool is a verify finding naming it (exit 1)", arguments: tampering)
    func tamperingIsFound(_ tamper: Tamper) throws {
        let test = try Self.ledger()
        let sql = try RawSQLite(path: test.path)
        try sql.execute(tamper.sql)
        sql.close()
        let verify = try CLI.run(["verify", "--db", test.path])
        #expect(verify.exitCode == 1, "\(verify)")
        #expect(verify.stdout.contains("Record chain FOUND 1 problem(s):"), "\(verify)")
        #expect(verify.stdout.contains(tamper.finding), "\(verify)")
        #expect(verify.stdout.contains("Hash chain intact"), "the events are untouched: \(verify)")
        let json = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(json.exitCode == 1)
        #expect(try json.json()["records"]?["intact"] == false)
    }

    @Test("a deleted arrival record is a finding: a missing id, or an event without its first arrival", arguments: [
        ("DELETE FROM arrivals WHERE id = 1", "arrivals: 1 event(s) have no arrival record"),
        ("DELETE FROM arrivals WHERE id = 1", "arrivals: 1 of the ids 1…"),
    ])
    func deletedArrival(_ sql: String, _ finding: String) throws {
        let test = try Self.ledger()
        // A duplicate arrival too, so there is more than one row after the first.
        _ = try test.append(line: try PayloadFactory(prefix: "p256-").notification(uuid: "p256-1", transaction: PayloadFactory(prefix: "p256-").transaction()))
        #expect(try CLI.run(["verify", "--db", test.path]).exitCode == 0)
        let raw = try RawSQLite(path: test.path)
        try raw.execute(sql)
        raw.close()
        let verify = try CLI.run(["verify", "--db", test.path])
        #expect(verify.exitCode == 1, "\(verify)")
        #expect(verify.stdout.contains("Arrivals FOUND: \(finding)"), "\(verify)")
        #expect(try CLI.run(["verify", "--db", test.path, "--json"]).json()["arrivals"]?["intact"] == false)
    }

    @Test("the record chain is append-only: UPDATE and DELETE of a link are refused; a forged link is found")
    func appendOnly() throws {
        let test = try Self.ledger()
        let sql = try RawSQLite(path: test.path)
        defer { sql.close() }
        #expect(throws: (any Error).self) { try sql.execute("DELETE FROM record_chain WHERE seq = 1") }
        #expect(throws: (any Error).self) { try sql.execute("UPDATE record_chain SET digest = x'00' WHERE seq = 1") }
        // Past the triggers, a link rewritten to cover an edit breaks the chain at that link.
        try sql.execute("DROP TRIGGER record_chain_append_only_update")
        try sql.execute("UPDATE quarantine SET reason = 'edited' WHERE id = 2")
        try sql.execute("UPDATE record_chain SET digest = zeroblob(32) WHERE seq = (SELECT max(seq) FROM record_chain WHERE kind = 'quarantine')")
        let verify = try CLI.run(["verify", "--db", test.path])
        #expect(verify.exitCode == 1, "\(verify)")
        #expect(verify.stdout.contains("does not match its hash"), "\(verify)")
    }

    @Test("a schema 2 file: read as it is; a writer's open links every configuration value, root and quarantine row, and verify is intact")
    func upgradeSeals() throws {
        let test = try TestLedger()
        _ = try test.append(line: "not json")
        let sql = try RawSQLite(path: test.path)
        defer { sql.close() }
        try sql.execute("""
            DROP TRIGGER record_chain_append_only_update; DROP TRIGGER record_chain_append_only_delete; DROP TABLE record_chain;
            DROP TABLE group_snapshot;
            PRAGMA user_version = 2;
            """)
        let reader = try EventStore.open(at: test.path, readOnly: true)
        #expect(try reader.recordLinks() == nil)
        #expect(try reader.verifyRecordChain() == nil)
        let noChain = try CLI.run(["verify", "--db", test.path])
        #expect(noChain.exitCode == 0, "\(noChain)")
        #expect(noChain.stdout.contains("Record chain: none"), "\(noChain)")

        let writer = try EventStore.open(at: test.path)
        #expect(try sql.scalarInt("PRAGMA user_version") == 6)
        let links = try #require(try writer.recordLinks())
        let configKeys = try writer.configValues().count
        #expect(links.count == configKeys + (try writer.trustRoots().count) + 1)
        #expect(links.last?.kind == .quarantine && links.last?.subject == "1")
        #expect(try writer.verifyRecordChain()?.isIntact == true)
        #expect(try CLI.run(["verify", "--db", test.path]).exitCode == 0)
    }
}
