import Synchronization

/// A storage engine for ledgers that live at a URL (`postgresql://…`) rather than in a SQLite file.
///
/// The core `SeatLedger` product knows SQLite files only, so an embedder of the SQLite ledger never
/// links a database client it does not use. The `SeatLedgerPostgres` product provides
/// `PostgresLedgerEngine` (module `PostgresStore`); register it once at start
/// (`PostgresLedgerEngine.register()`) and every `Ledger.open(path:)`, `StoreLocation` and
/// `seatledger --db` accepts `postgresql://` URLs.
public protocol LedgerStoreEngine: Sendable {
    /// The URL schemes this engine opens, lower-case, without `://` (`["postgresql", "postgres"]`).
    var schemes: [String] { get }
    /// Opens the existing ledger at `url`.
    func open(url: String, readOnly: Bool) throws -> any LedgerStore
    /// Creates a ledger at `url` with its trust configuration (refused where one exists).
    func create(url: String, configuration: LedgerConfiguration, roots: [StoredTrustRoot]) throws -> any LedgerStore
    /// `url` without any credential, for messages.
    func redacted(url: String) -> String
}

/// The engines this process can open ledgers with, beyond SQLite files.
public enum LedgerStoreEngines {
    /// Registered engines, newest first. A `Mutex` because registration may race with opens on
    /// other threads; engines are `Sendable` values.
    private static let registered = Mutex<[any LedgerStoreEngine]>([])

    /// Makes `engine` available to every ``StoreLocation`` of its schemes (replacing an earlier one).
    public static func register(_ engine: any LedgerStoreEngine) {
        registered.withLock { engines in
            engines.removeAll { Set($0.schemes).isSubset(of: engine.schemes) }
            engines.insert(engine, at: 0)
        }
    }

    /// The engine registered for `scheme` (compared case-insensitively), if any.
    public static func engine(forScheme scheme: String) -> (any LedgerStoreEngine)? {
        let lowered = scheme.lowercased()
        return registered.withLock { $0.first { $0.schemes.contains(lowered) } }
    }
}
