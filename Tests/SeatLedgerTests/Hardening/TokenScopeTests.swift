import AppStoreModels
import Foundation
import LedgerStorage
import PostgresClient
import PostgresTestSupport
import SeatLedger
import PostgresStore
import Testing

/// Issue #50: a token carries a set of scopes (`token add NAME --scope read --scope record`, or
/// `--scope read,record`), stored in the one `scope` column sorted and joined with a space, so a
/// token of one scope is stored as before and older rows stay valid in the record chain.
@Suite("API tokens with several scopes (issue 50)", .serialized)
struct TokenScopeTests {
    init() { PostgresLedgerEngine.register() }

    /// Adds the tokens of ``scopesStoredSortedOnce(_:)`` on `db` through the CLI; their `--json` answers by name.
    static func addTokens(_ db: String) throws -> [String: JSONValue] {
        var answers: [String: JSONValue] = [:]
        for (name, scopes) in [("app-server", ["--scope", "record", "--scope", "read", "--scope", "link"]),
                               ("bot", ["--scope", "seats,read"]),
                               ("reader", ["--scope", "read", "--scope", "read,read"])] {
            let added = try CLI.run(["token", "add", name, "--db", db, "--json"] + scopes)
            try #require(added.exitCode == 0, "\(added)")
            answers[name] = try added.json()
        }
        return answers
    }

    /// What `token list --json` and the text list say of the tokens of ``addTokens(_:)``, and that
    /// `verify` finds the record chain intact.
    static func expectListed(_ db: String) throws {
        let listed = try CLI.run(["token", "list", "--db", db, "--json"])
        try #require(listed.exitCode == 0, "\(listed)")
        let rows = try listed.json().arrayValue ?? []
        let byName = Dictionary(rows.compactMap { row in row["name"]?.stringValue.map { ($0, row) } }) { first, _ in first }
        #expect(byName["app-server"]?["scope"] == "link read record", "\(listed.stdout)")
        #expect(byName["app-server"]?["scopes"] == ["link", "read", "record"], "\(listed.stdout)")
        #expect(byName["bot"]?["scope"] == "read seats")
        #expect(byName["bot"]?["scopes"] == ["read", "seats"])
        #expect(byName["reader"]?["scope"] == "read", "one scope is stored as before several were possible")
        #expect(byName["reader"]?["scopes"] == ["read"])
        let text = try CLI.run(["token", "list", "--db", db]).stdout
        #expect(text.contains("app-server  scopes link, read, record"), "\(text)")
        #expect(text.contains("reader  scope read  "), "\(text)")
        let verify = try CLI.run(["verify", "--db", db])
        #expect(verify.exitCode == 0, "tokens of several scopes keep the record chain intact: \(verify)")
    }

    @Test("SQLite: --scope repeated or comma-separated is one token of several scopes, stored sorted and space-joined, each once")
    func scopesStoredSortedOnce() throws {
        let directory = try TemporaryDirectory(label: "token-scopes")
        let db = directory.path("ledger.sqlite")
        try CLI.initLedger(db: db)
        let answers = try Self.addTokens(db)
        #expect(answers["app-server"]?["scope"] == "link read record")
        #expect(answers["app-server"]?["scopes"] == ["link", "read", "record"])
        #expect(answers["app-server"]?["token"]?.stringValue?.hasPrefix("slt_") == true)
        let stored = try Ledger.open(path: db, readOnly: true).store.apiTokens()
        #expect(stored.map(\.scope) == ["link read record", "read seats", "read"], "the scope column as written: \(stored)")
        try Self.expectListed(db)
        let added = try CLI.run(["token", "add", "two", "--scope", "read", "--scope", "record", "--db", db])
        #expect(added.exitCode == 0)
        #expect(added.stderr.contains("Token two (scopes read, record) added"), "\(added)")
    }

    @Test("PostgreSQL: the same tokens, the same stored text and listing, the record chain intact")
    func postgres() throws {
        let cluster = try PostgresTestCluster(database: "token_scopes")
        let db = cluster.url()
        try CLI.initLedger(db: db)
        _ = try Self.addTokens(db)
        let scopes = try cluster.connect().query("SELECT scope FROM api_tokens ORDER BY name").map { try $0.text(0) }
        #expect(scopes == ["link read record", "read seats", "read"])
        try Self.expectListed(db)
    }

    @Test("an unknown, empty or missing --scope is a usage error naming it, and stores nothing; --scope belongs to add only", arguments: [
        (["--scope", "admin"], "unknown scope \"admin\"; a scope is one of link, read, record, seats"),
        (["--scope", "read", "--scope", "Read"], "unknown scope \"Read\""),
        (["--scope", "read,"], "--scope has an empty scope in read,"),
        ([], "token add needs --scope (read, seats, link or record"),
    ])
    func badScopes(_ scopes: [String], _ message: String) throws {
        let directory = try TemporaryDirectory(label: "token-scopes-bad")
        let db = directory.path("ledger.sqlite")
        try CLI.initLedger(db: db)
        let refused = try CLI.run(["token", "add", "app", "--db", db] + scopes)
        #expect(refused.exitCode == 2, "\(refused)")
        #expect(refused.stderr.contains(message), "\(refused)")
        #expect(refused.stdout.isEmpty, "no token is printed: \(refused)")
        #expect(try Ledger.open(path: db, readOnly: true).store.apiTokens().isEmpty)
        let list = try CLI.run(["token", "list", "--scope", "read", "--db", db])
        #expect(list.exitCode == 2 && list.stderr.contains("--scope applies to `token add` only"), "\(list)")
    }
}
