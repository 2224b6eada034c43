import EventStore
import Foundation
import PostgresStore

extension StoreLocation {
    /// Opens the PostgreSQL ledger at `url` (the database must hold one: `seatledger init --db URL`).
    static func openPostgres(_ url: String, readOnly: Bool) throws -> any LedgerStore {
        try PostgresEventStore.open(url: url, readOnly: readOnly)
    }

    /// Creates a ledger in the PostgreSQL database at `url` (refused if it already holds one).
    static func createPostgres(_ url: String, configuration: LedgerConfiguration, roots: [StoredTrustRoot]) throws -> any LedgerStore {
        try PostgresEventStore.create(url: url, configuration: configuration, roots: roots)
    }
}
