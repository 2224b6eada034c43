import Foundation
import JWSVerification
import LedgerStorage
import SeatLedger
import SeatLedgerService

/// The ledger a command works on, from its command line: `--db PATH|URL`; else `--config FILE`
/// with `--ledger NAME` (a ledger of a `serve` deployment file, ``DeploymentFile``); else
/// `$SEATLEDGER_DB` (an empty one counts as unset); else `$SEATLEDGER_CONFIG` with `--ledger`;
/// else `./seatledger.sqlite`.
///
/// Every command that opens a ledger lists ``options`` and opens it through this type, so where
/// a ledger is found is decided here alone.
struct LedgerLocation: Sendable {
    /// The path or URL, as given (`--db`, the file's `db`, the environment or the default).
    let path: String
    /// The ledger's name in the deployment file it came from, if it came from one.
    let name: String?

    /// `--db PATH|URL`.
    static let db = Option<String?>(
        "db", value: "PATH|URL", help: "ledger file or postgresql:// URL (default: $SEATLEDGER_DB, else ./seatledger.sqlite)", column: 19)
    /// `--config FILE`: a `serve` deployment file.
    static let config = Option<String?>(
        "config", value: "FILE", help: "a serve deployment file (default: $SEATLEDGER_CONFIG); the ledger is its --ledger", column: 19)
    /// `--ledger NAME`: a ledger of `--config` (`token add` takes several).
    static let ledger = Option<[String]>(
        repeating: "ledger", value: "NAME", help: "the ledger of --config to work on (optional when the file has one)",
        completion: .none, column: 19, parse: .text)

    /// The options that say where the ledger is.
    static let options: [any DeclaredOption] = [db, config, ledger]

    /// `$SEATLEDGER_DB` when set and not empty, else `./seatledger.sqlite`.
    static var fromEnvironment: LedgerLocation {
        LedgerLocation(path: environment("SEATLEDGER_DB") ?? "seatledger.sqlite", name: nil)
    }

    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The one ledger `arguments` name.
    init(_ arguments: Arguments) throws {
        let names = try arguments[Self.ledger]
        guard names.count <= 1 else {
            throw UsageError(message: "--ledger is given \(names.count) times: this command works on one ledger at a time")
        }
        self = try Self.all(arguments)[0]
    }

    private init(path: String, name: String?) {
        self.path = path
        self.name = name
    }

    /// The deployment file `arguments` name (`--config`, else `$SEATLEDGER_CONFIG` when neither
    /// `--db` nor `$SEATLEDGER_DB` says otherwise or `--ledger` is given), if any.
    static func deploymentFile(_ arguments: Arguments) throws -> (path: String, file: DeploymentFile)? {
        let given = try arguments[Self.config]
        let names = try arguments[Self.ledger]
        if try arguments[Self.db] != nil {
            if given != nil || !names.isEmpty {
                throw UsageError(message: "--db and --\(given != nil ? "config" : "ledger") both name the ledger: give one (--db PATH, or --config FILE --ledger NAME)")
            }
            return nil
        }
        guard let path = given ?? ((names.isEmpty && environment("SEATLEDGER_DB") != nil) ? nil : environment("SEATLEDGER_CONFIG")) else {
            if !names.isEmpty { throw UsageError(message: "--ledger names a ledger of a deployment file: give --config FILE (or $SEATLEDGER_CONFIG)") }
            return nil
        }
        do {
            return (path, try DeploymentFile.read(path))
        } catch {
            throw InputError(message: "\(given == nil ? "$SEATLEDGER_CONFIG" : "--config") \(error.description)")
        }
    }

    /// Every ledger `arguments` name: the `--db` one, or each `--ledger` of the deployment file
    /// (its only ledger when none is named), or the environment's default.
    static func all(_ arguments: Arguments) throws -> [LedgerLocation] {
        if let db = try arguments[Self.db] {
            _ = try deploymentFile(arguments)   // refuses --db with --config or --ledger
            return [LedgerLocation(path: db, name: nil)]
        }
        guard let (path, file) = try deploymentFile(arguments) else { return [fromEnvironment] }
        let names = try arguments[Self.ledger]
        guard !names.isEmpty else {
            guard file.ledgers.count == 1 else {
                throw UsageError(message: "\(path) has \(file.ledgers.count) ledgers (" + file.ledgers.map(\.name).joined(separator: ", ")
                                 + "): name one with --ledger NAME")
            }
            return [LedgerLocation(path: file.ledgers[0].db, name: file.ledgers[0].name)]
        }
        return try names.map { name in
            guard let entry = file.ledger(named: name) else {
                throw UsageError(message: "--ledger \(name): \(path) has no ledger of that name; it has " + file.ledgers.map(\.name).joined(separator: ", "))
            }
            return LedgerLocation(path: entry.db, name: entry.name)
        }
    }

    /// The storage location (a SQLite file or a PostgreSQL URL).
    var store: StoreLocation { StoreLocation(path) }

    /// How messages name the ledger (a URL without its password; and its name in the deployment file).
    var description: String { name.map { "\($0) (\(store.description))" } ?? store.description }

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
