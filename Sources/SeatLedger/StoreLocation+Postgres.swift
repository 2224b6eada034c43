import EventStore
import Foundation

/// PostgreSQL is not wired in yet: a clear error instead of a confusing "file not found".
struct PostgresNotAvailable: Error, CustomStringConvertible {
    let location: String
    var description: String { "PostgreSQL ledgers (\(location)) are not supported by this build yet" }
}

extension StoreLocation {
    static func openPostgres(_ url: String) throws -> any LedgerStore {
        throw PostgresNotAvailable(location: redacted(url))
    }

    static func createPostgres(_ url: String, configuration: LedgerConfiguration, roots: [StoredTrustRoot]) throws -> any LedgerStore {
        throw PostgresNotAvailable(location: redacted(url))
    }
}
