import Foundation
import JWSVerification
import LedgerStorage
import SeatLedger

/// The ledger a command works on, from its command line: `--db PATH|URL`, else `$SEATLEDGER_DB`
/// (an empty one counts as unset), else `./seatledger.sqlite`.
///
/// Every command that opens a ledger lists ``options`` and opens it through this type, so where
/// a ledger is found is decided here alone.
struct LedgerLocation: Sendable {
    /// The path or URL, as given (`--db`, the environment or the default).
    let path: String

    /// `--db PATH|URL`.
    static let db = Option<LedgerLocation>(
        "db", value: "PATH|URL", help: "ledger file or postgresql:// URL (default: $SEATLEDGER_DB, else ./seatledger.sqlite)",
        column: 19, default: LedgerLocation.fromEnvironment, parse: OptionParser { LedgerLocation(path: $0) })

    /// The options that say where the ledger is.
    static let options: [any DeclaredOption] = [db]

    /// `$SEATLEDGER_DB` when set and not empty, else `./seatledger.sqlite`.
    static var fromEnvironment: LedgerLocation {
        LedgerLocation(path: ProcessInfo.processInfo.environment["SEATLEDGER_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? "seatledger.sqlite")
    }

    /// The ledger `arguments` name.
    init(_ arguments: Arguments) throws {
        self = try arguments[Self.db]
    }

    private init(path: String) {
        self.path = path
    }

    /// The storage location (a SQLite file or a PostgreSQL URL).
    var store: StoreLocation { StoreLocation(path) }

    /// How messages name the ledger (a URL without its password).
    var description: String { store.description }

    /// Opens the existing ledger (``Ledger/open(path:readOnly:)``).
    func open(readOnly: Bool = false) throws -> Ledger {
        try Ledger.open(path: path, readOnly: readOnly)
    }

    /// Opens the existing ledger's store alone, for checks that read no projection.
    func openStore(readOnly: Bool = false) throws -> any LedgerStore {
        try store.open(readOnly: readOnly)
    }

    /// Creates a new ledger here with its trust configuration (``Ledger/create(path:configuration:rootCertificates:)``).
    func create(configuration: LedgerConfiguration, rootCertificates: [TrustAnchor]) throws -> Ledger {
        try Ledger.create(path: path, configuration: configuration, rootCertificates: rootCertificates)
    }

    /// Opens a pool over the ledger with `readers` read connections (``LedgerPool/open(path:readers:)``).
    func openPool(readers: Int) throws -> LedgerPool {
        try LedgerPool.open(path: path, readers: readers)
    }
}
