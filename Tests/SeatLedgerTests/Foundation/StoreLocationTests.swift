import SeatLedger
import Testing

@Suite("Store locations (--db)")
struct StoreLocationTests {
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
}
