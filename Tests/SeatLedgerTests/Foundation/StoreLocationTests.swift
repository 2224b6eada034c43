import SeatLedger
import PostgresStore
import Testing

@Suite("Store locations (--db)")
struct StoreLocationTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    @Test("a postgresql:// or postgres:// URL selects PostgreSQL; anything else is a SQLite path", arguments: [
        ("postgresql://seatledger@db.internal/ledger", true),
        ("POSTGRES://u@h:5433/db", true),
        ("ledger.sqlite", false),
        ("/var/lib/seatledger/postgresql.sqlite", false),
        ("postgresql:/not-a-url", false),
    ])
    func parses(text: String, isPostgres: Bool) {
        switch StoreLocation(text) {
        case .postgres(let url): #expect(isPostgres && url == text)
        case .sqlite(let path): #expect(!isPostgres && path == text)
        }
    }

    @Test("messages never show a URL's password", arguments: [
        ("postgresql://seatledger:s3cret@db.internal/ledger", "postgresql://seatledger@db.internal/ledger"),
        ("postgresql://seatledger@db.internal/ledger?password=s3cret&sslmode=disable", "postgresql://seatledger@db.internal/ledger?sslmode=disable"),
        ("postgresql://seatledger@db.internal/ledger", "postgresql://seatledger@db.internal/ledger"),
        ("postgresql://db.internal/ledger", "postgresql://db.internal/ledger"),
    ])
    func redacts(url: String, shown: String) {
        #expect(StoreLocation(url).description == shown)
        #expect(!StoreLocation(url).description.contains("s3cret"))
    }

    @Test("a --db URL of another kind is refused naming it, not taken as a missing file",
          arguments: [("redis://127.0.0.1:6379/appstore", "(a Redis stream is an ingest source: `ingest --from redis://…`)"),
                      ("https://example.com/ledger", "")])
    func otherURLRefused(_ url: String, _ hint: String) throws {
        for arguments in [["groups", "--db", url], ["init", "--db", url, "--bundle-id", "b", "--environment", "Sandbox",
                                                    "--root-cert", TestPaths.testRoot.path]] {
            let result = try CLI.run(arguments)
            #expect(result.exitCode == 2, "\(result)")
            let scheme = url.components(separatedBy: "://")[0]
            #expect(result.stderr.contains("\(scheme):// is not a ledger location: give a SQLite file path or a postgresql:// URL\(hint.isEmpty ? "" : " " + hint)"),
                    "\(result)")
            #expect(!result.stderr.contains("create one with"), "\(result)")
        }
    }
}
