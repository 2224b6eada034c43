import Foundation
import LedgerStorage
import PostgresClient
import PostgresStore
import PostgresTestSupport
import SeatLedger
import Testing

/// Issue #48, finding 3: rows removed from the end leave traces `verify` names (an event's caches
/// past the last event; on PostgreSQL the head row's counts), group-index rows no event supports
/// are named, and what leaves no trace is caught by the anchor (the record chain's head).
@Suite("Removed tails and unsupported index rows (issue 48, finding 3)", .serialized)
struct RemovedTailTests {
    init() { PostgresLedgerEngine.register() }

    /// A ledger at `db`: two subscriptions and one quarantined line, through the binary.
    static func ledger(_ db: String, directory: TemporaryDirectory) throws {
        let created = try CLI.run(["init", "--db", db, "--bundle-id", TestLedger.bundleId, "--environment", "Sandbox",
                                   "--root-cert", TestPaths.testRoot.path])
        try #require(created.exitCode == 0, "\(created)")
        let factory = try PayloadFactory()
        let lines = [try factory.notification(uuid: "tail-1", transaction: factory.transaction()),
                     try factory.notification(uuid: "tail-2", transaction: factory.transaction(originalTransactionId: "2000000000000777")),
                     "not json"]
        let file = try directory.writeLines(lines, to: "in.ndjson")
        let ingest = try CLI.run(["ingest", "--db", db, file.path])
        try #require(ingest.exitCode == 3, "\(ingest)")
        let verify = try CLI.run(["verify", "--db", db])
        try #require(verify.exitCode == 0, "\(verify)")
    }

    static func expectFinding(_ db: String, _ text: String, extra: [String] = []) throws {
        let verify = try CLI.run(["verify", "--db", db] + extra)
        #expect(verify.exitCode == 1, "\(verify)")
        #expect(verify.stdout.contains(text), "\(verify)")
    }

    @Test("SQLite: the last event deleted with its caches left is named, with and without --deep")
    func lastEventOnSQLite() throws {
        let directory = try TemporaryDirectory(label: "tail-sqlite")
        let db = directory.path("ledger.sqlite")
        try Self.ledger(db, directory: directory)
        let raw = try RawSQLite(path: db)
        try raw.execute("DROP TRIGGER events_append_only_delete")
        try raw.execute("DELETE FROM arrivals WHERE event_id = 'tail-2'")
        try raw.execute("DELETE FROM events WHERE position = 2")
        raw.close()
        try Self.expectFinding(db, "Removed rows FOUND: decoded payload rows at position(s) 2 past the last event (1)")
        try Self.expectFinding(db, "identifier index rows at position(s) 2", extra: ["--deep"])
        let json = try CLI.run(["verify", "--db", db, "--json"]).json()
        #expect(json["removed"]?["intact"] == false)
    }

    @Test("SQLite: the last quarantine row deleted with its link leaves no trace in the ledger; the anchor names it")
    func lastQuarantineOnSQLite() throws {
        let directory = try TemporaryDirectory(label: "tail-quarantine")
        let db = directory.path("ledger.sqlite")
        try Self.ledger(db, directory: directory)
        let anchor = directory.path("head.anchor")
        #expect(try CLI.run(["verify", "--db", db, "--anchor", anchor]).exitCode == 0)
        let raw = try RawSQLite(path: db)
        try raw.execute("DROP TRIGGER record_chain_append_only_delete")
        try raw.execute("DELETE FROM quarantine WHERE id = 1")
        try raw.execute("DELETE FROM record_chain WHERE seq = (SELECT max(seq) FROM record_chain)")
        raw.close()
        #expect(try CLI.run(["verify", "--db", db]).exitCode == 0, "nothing in the file shows it: only an anchor can")
        try Self.expectFinding(db, "links were removed from its end", extra: ["--anchor", anchor])
    }

    @Test("SQLite: a group_index row no event supports is named")
    func unsupportedIndexRow() throws {
        let directory = try TemporaryDirectory(label: "tail-index")
        let db = directory.path("ledger.sqlite")
        try Self.ledger(db, directory: directory)
        let raw = try RawSQLite(path: db)
        try raw.execute("INSERT INTO group_index VALUES ('8888', '9999999', 'purchaser')")
        raw.close()
        try Self.expectFinding(db, "Group index FOUND: rows of group 9999999 that no event supports")
    }

    @Test("PostgreSQL: the last event deleted (caches left) and the last quarantine row deleted with its link are named")
    func postgres() throws {
        let cluster = try PostgresTestCluster()
        let directory = try TemporaryDirectory(label: "tail-pg")
        let db = cluster.url()
        try Self.ledger(db, directory: directory)
        let connection = try cluster.connect()
        try connection.execute("SET session_replication_role = replica")  // the owner past the append-only triggers
        try connection.execute("DELETE FROM quarantine WHERE id = 1")
        try connection.execute("DELETE FROM record_chain WHERE seq = (SELECT max(seq) FROM record_chain)")
        try Self.expectFinding(db, "quarantine item #1 was issued")
        try connection.execute("DELETE FROM arrivals WHERE event_id = 'tail-2'")
        try connection.execute("DELETE FROM events WHERE position = 2")
        try connection.execute("UPDATE ledger_head SET position = 1, hash = (SELECT hash FROM events WHERE position = 1)")
        try Self.expectFinding(db, "decoded payload rows at position(s) 2 past the last event (1)")
    }
}
