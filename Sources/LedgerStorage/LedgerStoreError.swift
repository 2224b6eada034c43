import Foundation

/// Why a ledger could not be used, on any engine.
public enum LedgerStoreError: Error, Sendable, CustomStringConvertible {
    /// The file exists but is not a SeatLedger ledger.
    case notALedger(path: String)
    /// The file was written by a newer SeatLedger.
    case newerSchema(path: String, found: Int64, supported: Int64)
    /// No ledger at the path (run `seatledger init`).
    case missing(path: String)
    /// `init` was asked to create a ledger where one exists.
    case alreadyExists(path: String)
    /// The stored configuration is incomplete or unreadable.
    case badConfiguration(String)
    /// The database engine failed: its own error (SQLite's `SQLiteError`, PostgreSQL's
    /// `PostgresError`), whose text is this error's text.
    case database(any DatabaseFailure)
    /// The location is a URL of a kind no ledger lives at (`redis://…`); `hint` says what to do.
    case unsupportedLocation(scheme: String, hint: String)
    /// The location is a PostgreSQL URL, but this program registered no PostgreSQL engine.
    case engineNotLinked(location: String)

    /// The text a person reads (what the CLI prints for it).
    public var description: String {
        switch self {
        case .notALedger(let path):
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                return "\(path) is a directory, not a SeatLedger ledger file; pass the ledger file itself with --db"
            }
            return "\(path) is not a SeatLedger ledger (wrong or missing application id); refusing to open it"
        case .newerSchema(let path, let found, let supported):
            return "\(path) has ledger schema version \(found), newer than this seatledger supports (\(supported)); upgrade seatledger"
        case .missing(let path):
            return "no ledger at \(path); create one with `seatledger init --db \(path) …`"
        case .alreadyExists(let path):
            return "\(path) already exists; refusing to overwrite it"
        case .badConfiguration(let detail):
            return "ledger configuration is invalid: \(detail)"
        case .database(let error):
            return error.description
        case .unsupportedLocation(let scheme, let hint):
            return "\(scheme):// is not a ledger location: give a SQLite file path or a postgresql:// URL\(hint)"
        case .engineNotLinked(let location):
            return "\(location) is a PostgreSQL ledger, and this program was built without the PostgreSQL engine: "
                + "depend on the SeatLedgerPostgres product and call `PostgresLedgerEngine.register()` at start"
        }
    }
}

extension LedgerStoreError {
    /// `error` as a store's transactions throw it: an engine's own failure wrapped in
    /// ``database(_:)`` (one type for every engine), anything else (the caller's own errors thrown
    /// through the transaction, errors already wrapped) unchanged.
    public static func wrapping(_ error: any Error) -> any Error {
        if let failure = error as? any DatabaseFailure { return LedgerStoreError.database(failure) }
        return error
    }

    /// Runs `body`, one of an engine's store calls, with the engine's own failure leaving as
    /// ``database(_:)`` (``wrapping(_:)``), so a call outside a transaction throws what one inside
    /// does, on every engine.
    public static func wrappingFailures<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw wrapping(error) }
    }

    /// The engine's own failure `error` is or wraps (``database(_:)``), to match an engine's codes.
    public static func databaseFailure(in error: any Error) -> (any DatabaseFailure)? {
        if let failure = error as? any DatabaseFailure { return failure }
        if case .database(let failure)? = error as? LedgerStoreError { return failure }
        return nil
    }

    /// Whether `error` says the database file is damaged (SQLite `SQLITE_CORRUPT` / `SQLITE_NOTADB`
    /// met while reading a ledger it had opened), as opposed to a usage or environment failure.
    public static func isCorruption(_ error: any Error) -> Bool {
        databaseFailure(in: error)?.isCorruption ?? false
    }
}

/// A failure of a database engine's own call (SQLite's `SQLiteError`, PostgreSQL's
/// `PostgresError`), which ``LedgerStoreError/database(_:)`` carries without this module knowing
/// the engine.
public protocol DatabaseFailure: Error, Sendable, CustomStringConvertible {
    /// Whether it says the stored database is damaged (not a usage or environment failure).
    var isCorruption: Bool { get }
}
