import LedgerStorage

/// The PostgreSQL engine for ledgers at `postgresql://` and `postgres://` URLs.
///
/// ```swift
/// import PostgresStore                               // the SeatLedgerPostgres product
/// PostgresLedgerEngine.register()                      // once, at start
/// let ledger = try Ledger.open(path: "postgresql://seatledger@db.internal/ledger")
/// ```
public struct PostgresLedgerEngine: LedgerStoreEngine {
    /// The engine (it holds no state; each open makes its own connection).
    public init() {}

    /// Registers the engine with ``LedgerStoreEngines``, so `postgresql://` locations open.
    public static func register() { LedgerStoreEngines.register(PostgresLedgerEngine()) }

    /// `postgresql` and `postgres`.
    public var schemes: [String] { ["postgresql", "postgres"] }

    /// Opens the PostgreSQL ledger at `url` (the database must hold one: `seatledger init --db URL`).
    public func open(url: String, readOnly: Bool) throws -> any LedgerStore {
        try PostgresEventStore.open(url: url, readOnly: readOnly)
    }

    /// Creates a ledger in the PostgreSQL database at `url` (refused if it already holds one).
    public func create(url: String, configuration: LedgerConfiguration, roots: [StoredTrustRoot]) throws -> any LedgerStore {
        try PostgresEventStore.create(url: url, configuration: configuration, roots: roots)
    }

    /// `url` without its password (user info, `password=` parameter or `key=value` form).
    public func redacted(url: String) -> String { PostgresEventStore.redactedLocation(url) }
}
