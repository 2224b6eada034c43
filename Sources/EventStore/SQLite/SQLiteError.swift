import Foundation
import CSQLite
import LedgerStorage

/// A failed `sqlite3_*` call: the result code, SQLite's message and the SQL that was running.
///
/// Modelled on GRDB's `DatabaseError`: one error type for every SQLite failure so callers can
/// switch on ``resultCode`` (e.g. `SQLITE_BUSY`, `SQLITE_CONSTRAINT`).
public struct SQLiteError: DatabaseFailure {
    /// The extended result code.
    public let resultCode: Int32
    /// SQLite's message for the failure.
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?
    /// The database file, when the failing connection knows it.
    public let path: String?

    /// Creates an error from its parts.
    public init(resultCode: Int32, message: String, sql: String? = nil, path: String? = nil) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// The primary result code (the low byte of the extended code).
    public var primaryResultCode: Int32 { resultCode & 0xFF }

    /// Whether a constraint (UNIQUE, CHECK, trigger RAISE(ABORT)) refused the statement.
    public var isConstraintViolation: Bool { primaryResultCode == SQLITE_CONSTRAINT }

    /// Whether SQLite refused a value it was given: too big (`SQLITE_TOOBIG`, "string or blob too
    /// big"), of the wrong type or out of range; not a failure of the database itself. A constraint
    /// (a trigger, UNIQUE) is not counted: it can come from the store's own state.
    public var isRefusalOfValue: Bool {
        [SQLITE_TOOBIG, SQLITE_MISMATCH, SQLITE_RANGE].contains(primaryResultCode)
    }

    /// Whether SQLite found the file damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
    public var isCorruption: Bool { primaryResultCode == SQLITE_CORRUPT || primaryResultCode == SQLITE_NOTADB }

    /// Whether another connection holds the lock.
    public var isBusy: Bool { primaryResultCode == SQLITE_BUSY || primaryResultCode == SQLITE_LOCKED }

    /// Why SQLite may not have opened `path`, looked at now: a missing directory, a file or
    /// directory this user may not read or write, else the question to ask.
    static func cannotOpenReason(_ path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            return "its directory \(directory) does not exist"
        }
        if FileManager.default.fileExists(atPath: path) {
            if access(path, R_OK) != 0 { return "permission denied: this user may not read it" }
            if access(path, W_OK) != 0 { return "this user may read it but not write it" }
        }
        if access(directory, W_OK | X_OK) != 0 { return "this user may not write in its directory \(directory) (SQLite keeps its -wal and -shm there)" }
        return "does its directory exist, and may this user write there?"
    }

    /// Longest SQL text quoted in ``description`` (the append statements run to hundreds of characters).
    static let quotedSQLLimit = 120

    /// The text a person reads (what the CLI prints for it).
    public var description: String {
        var text = "SQLite error \(resultCode)"
        if let path { text += " on \(path)" }
        text += ": \(message)"
        if primaryResultCode == SQLITE_CANTOPEN, let path { text += " (\(Self.cannotOpenReason(path)))" }
        if primaryResultCode == SQLITE_READONLY { text += " (the file or its directory is read-only for this user)" }
        if let sql {
            let quoted = sql.count > Self.quotedSQLLimit ? String(sql.prefix(Self.quotedSQLLimit)) + "…" : sql
            text += " — while executing `\(quoted)`"
        }
        return text
    }
}
