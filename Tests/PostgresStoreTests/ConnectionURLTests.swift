import LedgerStorage
import PostgresStore
import Testing

/// Issue #23 item 5: SeatLedger parses and redacts a PostgreSQL URL itself, before libpq sees it.
@Suite("PostgreSQL connection URLs: redaction and checks")
struct ConnectionURLTests {
    @Test("redact removes the password whatever the URL's shape or the scheme's case", arguments: [
        ("postgresql://u:pw@db/ledger", "postgresql://u@db/ledger"),
        ("POSTGRESQL://u:pw@db/ledger", "POSTGRESQL://u@db/ledger"),
        ("Postgres://u:pw@db:5432/ledger?sslmode=require", "Postgres://u@db:5432/ledger?sslmode=require"),
        ("postgresql://u:pw@[::1:5432/db", "postgresql://u@[::1:5432/db"),
        ("postgresql://u:p%zzw@db/ledger", "postgresql://u@db/ledger"),
        ("postgresql://u:p/w@db/ledger", "postgresql://u@db/ledger"),
        ("postgresql://db/ledger?user=u&password=pw&sslmode=require", "postgresql://db/ledger?user=u&sslmode=require"),
        ("postgresql://db/ledger?PASSWORD=pw", "postgresql://db/ledger"),
        ("host=db password='p w' dbname=ledger", "host=db dbname=ledger"),
    ])
    func redacts(_ input: String, _ expected: String) {
        #expect(PostgresConnectionURL.redact(input) == expected)
    }

    @Test("checked lower-cases the scheme and refuses what libpq would quote back, naming the URL redacted", arguments: [
        "postgresql://u:s3cr3t@[::1:5432/db",
        "postgresql://u:s3cr%zzet@db/ledger",
        "POSTGRESQL://u:s3cr3t@db/ledger?sslmode=%g1",
    ])
    func refusesMalformed(_ url: String) {
        do {
            _ = try PostgresConnectionURL.checked(url)
            Issue.record("\(url) was accepted")
        } catch {
            #expect(!error.description.contains("s3cr"), "password shown: \(error.description)")
            #expect(error.description.contains("PostgreSQL URL"))
        }
    }

    @Test("checked accepts well-formed URLs, normalising only the scheme")
    func acceptsWellFormed() throws {
        #expect(try PostgresConnectionURL.checked("POSTGRESQL://u@[::1]:5432/db") == "postgresql://u@[::1]:5432/db")
        #expect(try PostgresConnectionURL.checked("postgres://u:p%40ss@db/x") == "postgres://u:p%40ss@db/x")
        #expect(try PostgresConnectionURL.checked("host=db dbname=x") == "host=db dbname=x")
    }

    @Test("scrub removes the password (as written and percent-decoded) from a libpq message")
    func scrubs() {
        let url = "postgresql://u:p%40ss@db/x"
        #expect(PostgresConnectionURL.scrub("bad: postgresql://u:p%40ss@db/x and p@ss", of: url) == "bad: postgresql://u:***@db/x and ***")
    }
}
