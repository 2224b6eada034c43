import Foundation
import LedgerStorage
import PostgresClient
import PostgresStore
import PostgresTestSupport
import SeatLedger
import Testing

/// Issue #48, finding 2: `api_tokens` is covered by the record chain (a link when a token is
/// added and when it is revoked), so a token inserted, or a revoked one brought back by clearing
/// `revoked_at`, is a `verify` finding naming it, on both engines, through the binary.
@Suite("API tokens in the record chain (issue 48)", .serialized)
struct TokenChainTests {
    init() { PostgresLedgerEngine.register() }

    /// A ledger at `db` with a token `app` added and a token `old` added then revoked, all through the CLI.
    static func ledgerWithTokens(_ db: String) throws {
        let created = try CLI.run(["init", "--db", db, "--bundle-id", TestLedger.bundleId, "--environment", "Sandbox",
                                   "--root-cert", TestPaths.testRoot.path])
        try #require(created.exitCode == 0, "\(created)")
        for name in ["app", "old"] {
            let added = try CLI.run(["token", "add", name, "--scope", "read", "--db", db])
            try #require(added.exitCode == 0, "\(added)")
        }
        let revoked = try CLI.run(["token", "revoke", "old", "--db", db])
        try #require(revoked.exitCode == 0, "\(revoked)")
        let verify = try CLI.run(["verify", "--db", db])
        try #require(verify.exitCode == 0, "tokens written through SeatLedger keep the record chain intact: \(verify)")
    }

    /// `verify` on `db` finds `finding` (exit 1, also in --json's records).
    static func expectFinding(_ db: String, _ finding: String) throws {
        let verify = try CLI.run(["verify", "--db", db])
        #expect(verify.exitCode == 1, "\(verify)")
        #expect(verify.stdout.contains(finding), "\(verify)")
        #expect(try CLI.run(["verify", "--db", db, "--json"]).json()["records"]?["intact"] == false)
    }

    static let inserted = "INSERT INTO api_tokens (name, scope, sha256, created_at) VALUES ('backdoor', 'read', '"
        + String(repeating: "ab", count: 32) + "', 1)"
    static let cleared = "UPDATE api_tokens SET revoked_at = NULL WHERE name = 'old'"

    @Test("SQLite: an inserted token and a cleared revoked_at are verify findings naming the token", arguments: [
        (TokenChainTests.inserted, "API token backdoor was added outside SeatLedger"),
        (TokenChainTests.cleared, "API token old differs from what SeatLedger wrote"),
    ])
    func sqlite(_ sql: String, _ finding: String) throws {
        let directory = try TemporaryDirectory(label: "tokens")
        let db = directory.path("ledger.sqlite")
        try Self.ledgerWithTokens(db)
        let raw = try RawSQLite(path: db)
        try raw.execute(sql)
        raw.close()
        try Self.expectFinding(db, finding)
    }

    @Test("PostgreSQL: an inserted token and a cleared revoked_at (as the tables' owner) are verify findings naming the token")
    func postgres() throws {
        let cluster = try PostgresTestCluster()
        let db = cluster.url()
        try Self.ledgerWithTokens(db)
        let connection = try cluster.connect()
        try connection.execute(Self.inserted)
        try Self.expectFinding(db, "API token backdoor was added outside SeatLedger")
        try connection.execute("DELETE FROM api_tokens WHERE name = 'backdoor'")
        try connection.execute(Self.cleared)
        try Self.expectFinding(db, "API token old differs from what SeatLedger wrote")
    }

    @Test("an anchor names a token changed without `token … --anchor`; `token add --anchor` records its own change")
    func anchorCoversTokens() throws {
        let directory = try TemporaryDirectory(label: "tokens-anchor")
        let db = directory.path("ledger.sqlite")
        try Self.ledgerWithTokens(db)
        let anchor = directory.path("head.anchor")
        #expect(try CLI.run(["verify", "--db", db, "--anchor", anchor]).exitCode == 0)
        #expect(try CLI.run(["token", "add", "next", "--scope", "read", "--db", db, "--anchor", anchor]).exitCode == 0)
        #expect(try CLI.run(["verify", "--db", db, "--anchor", anchor]).exitCode == 0, "the operator's own change")
        #expect(try CLI.run(["token", "revoke", "next", "--db", db]).exitCode == 0)  // without the anchor
        let verify = try CLI.run(["verify", "--db", db, "--anchor", anchor])
        #expect(verify.exitCode == 1, "\(verify)")
        #expect(verify.stdout.contains("API token next (scope read, revoked) is not as the anchor records it"), "\(verify)")
    }
}
