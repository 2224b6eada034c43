import AppStoreModels
import CSQLite
import Foundation
import LedgerEvents
import LedgerStorage

/// The SQLite ledger: append-only events with a hash chain, identifier index, quarantine and
/// trust configuration, on one SQLite connection (which it also lends as the ``SQLDatabase`` the
/// roles written once in `LedgerStorage` run over).
///
/// An `EventStore` owns one connection and is used from one thread at a time; several
/// processes may open the same file (WAL, busy timeout, `BEGIN IMMEDIATE` for writes).
///
/// ```swift
/// let store = try EventStore.create(at: "ledger.sqlite", configuration: config, roots: roots)
/// let outcomes = try store.append([event])
/// ```
public final class EventStore {
    let connection: SQLiteConnection
    /// The file path.
    public let path: String
    /// The clock for `recorded_at` (epoch ms): now, or `$SEATLEDGER_NOW` when set; injectable for tests.
    public var clock: @Sendable () -> EpochMillis
    /// The checkpointer of a running ``withBackgroundCheckpoints(_:)`` (a nested call starts none:
    /// this one serves it).
    var backgroundCheckpointer: WALCheckpointer?
    /// Inside ``withGroupKeyIndexBuiltAfter(_:)``: rebuilt index rows go to a temporary table first.
    var stagesRebuiltIndexRows = false
    /// Whether the file has `group_snapshot` (schema 4): a file of an older schema opened
    /// read-only is not upgraded, and has none.
    public internal(set) var hasGroupSnapshots = true
    /// Whether the file has schema 6's access-change tables (a writer's open upgrades it; an
    /// older file opened read-only has none).
    var accessChangeTables = true

    private init(connection: SQLiteConnection, path: String) {
        self.connection = connection
        self.path = path
        // `$SEATLEDGER_NOW` (ISO 8601 or epoch ms) pins the recording clock for reproducible runs (golden tests).
        if let pinned = ProcessInfo.processInfo.environment["SEATLEDGER_NOW"].flatMap(Timestamp.parse) {
            self.clock = { pinned }
        } else {
            self.clock = { Timestamp.millis(Date()) }
        }
    }

    /// Creates a new ledger file with its configuration and trust roots.
    public static func create(at path: String, configuration: LedgerConfiguration,
                              roots: [StoredTrustRoot]) throws(LedgerStoreError) -> EventStore {
        if FileManager.default.fileExists(atPath: path) { throw .alreadyExists(path: path) }
        do {
            let connection = try SQLiteConnection(path: path, create: true)
            let store = EventStore(connection: connection, path: path)
            // Events are a few KB each: 16 KiB pages mean fewer page writes per append.
            try connection.execute("PRAGMA page_size = 16384")
            try store.configureConnection()
            try connection.writeTransaction {
                try connection.execute(LedgerSchema.current)
                try connection.execute("PRAGMA application_id = \(LedgerSchema.applicationID)")
                try connection.execute("PRAGMA user_version = \(LedgerSchema.currentVersion)")
                try store.writeConfiguration(configuration, createdAt: store.clock())
                for root in roots { try store.insertRoot(root) }
                try store.linkTokensOnce()
            }
            return store
        } catch let error as SQLiteError {
            throw .database(error)
        } catch let error as LedgerStoreError {
            throw error
        } catch {
            throw .badConfiguration("\(error)")
        }
    }

    /// Opens an existing ledger, refusing files that are not ledgers or are of a newer schema.
    public static func open(at path: String, readOnly: Bool = false) throws(LedgerStoreError) -> EventStore {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .missing(path: path) }
        if isDirectory.boolValue { throw .notALedger(path: path) }
        do {
            let (connection, appID) = try Self.connect(path, readOnly: readOnly)
            let store = EventStore(connection: connection, path: path)
            guard appID == LedgerSchema.applicationID else { throw LedgerStoreError.notALedger(path: path) }
            let version = try connection.scalarInt("PRAGMA user_version") ?? 0
            if version > LedgerSchema.currentVersion {
                throw LedgerStoreError.newerSchema(path: path, found: version, supported: LedgerSchema.currentVersion)
            }
            if !readOnly {
                try store.configureConnection()
                if version < LedgerSchema.currentVersion { try store.upgradeSchema(from: version) }
                if try store.configValues()[RecordChain.tokensCoveredKey] == nil {
                    try connection.writeTransaction { try store.linkTokensOnce() }
                }
            } else {
                connection.setBusyTimeout(milliseconds: 10_000)
                store.hasGroupSnapshots = version >= 4
                store.accessChangeTables = version >= 6
            }
            return store
        } catch let error as SQLiteError {
            if error.primaryResultCode == SQLITE_NOTADB { throw .notALedger(path: path) }
            throw .database(error)
        } catch let error as LedgerStoreError {
            throw error
        } catch {
            throw .badConfiguration("\(error)")
        }
    }

    /// Brings a file of an older schema version up to ``LedgerSchema/currentVersion`` (in one write
    /// transaction; a reader of the older version keeps its snapshot until the commit).
    private func upgradeSchema(from version: Int64) throws {
        try connection.writeTransaction {
            // Another writer may have upgraded the file since the version was read.
            let now = try connection.scalarInt("PRAGMA user_version") ?? 0
            for upgrade in LedgerSchema.upgrades where upgrade.version > now {
                try connection.execute(upgrade.sql)
            }
            if now < 3 {
                // The record chain starts by covering what is already stored.
                try appendRecordLinks(RecordChain.sealing(configuration: try configValues(), roots: try trustRoots(),
                                                          quarantine: try quarantine(state: nil, limit: Int.max)))
            }
            if now < LedgerSchema.currentVersion { try connection.execute("PRAGMA user_version = \(LedgerSchema.currentVersion)") }
        }
    }

    /// A connection to the file at `path` and its `PRAGMA application_id` (the first read).
    ///
    /// A WAL ledger needs its -shm file to be read; in a directory this process cannot write (a
    /// backup, a copy handed over) none can be made. A read-only open then reads the file as it is
    /// (``SQLiteConnection`` `immutable`: no locks), but only when no one can be writing it: no
    /// -wal file, and no write permission on the file or its directory for anyone (or a read-only
    /// file system). Otherwise another user's writer could change pages under the lock-free read.
    private static func connect(_ path: String, readOnly: Bool) throws(SQLiteError) -> (SQLiteConnection, Int64?) {
        let connection = try SQLiteConnection(path: path, create: false, readOnly: readOnly)
        let failure: SQLiteError
        do {
            return (connection, try connection.scalarInt("PRAGMA application_id"))
        } catch {
            failure = error
        }
        guard readOnly, failure.resultCode == readOnlyDirectory, !hasLog(path) else { throw failure }
        guard isUnwritable(path) else {
            throw SQLiteError(resultCode: failure.resultCode,
                              message: "\(failure.message); the ledger's directory is not writable for this user but is for others, "
                                  + "so a writer may be at work: read it as a user who can write the directory, or read a copy",
                              sql: failure.sql, path: failure.path)
        }
        let immutable = try SQLiteConnection(path: path, create: false, readOnly: true, immutable: true)
        return (immutable, try immutable.scalarInt("PRAGMA application_id"))
    }

    /// `SQLITE_READONLY_DIRECTORY` (a macro Swift does not import): the database's directory is
    /// not writable, so its -shm or -wal file cannot be created.
    private static let readOnlyDirectory = SQLITE_READONLY | (6 << 8)

    /// Whether no one can write the file at `path` or create files next to it: no write
    /// permission bit on either, or a read-only file system.
    private static func isUnwritable(_ path: String) -> Bool {
        var info = statvfs()
        if statvfs(path, &info) == 0, info.f_flag & UInt(ST_RDONLY) != 0 { return true }
        let directory = (path as NSString).deletingLastPathComponent
        func writeBits(_ file: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int).flatMap { $0 }.map { $0 & 0o222 }
        }
        return writeBits(path) == 0 && writeBits(directory.isEmpty ? "." : directory) == 0
    }

    /// Whether the ledger at `path` has a write-ahead log file (`-wal`) next to it.
    private static func hasLog(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path + "-wal") }

    private func configureConnection() throws(SQLiteError) {
        connection.setBusyTimeout(milliseconds: 30_000)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = FULL")
        try connection.execute("PRAGMA cache_size = -65536")  // 64 MiB of page cache
        // After a restart the log file is cut back to 64 MiB (background checkpoints let it grow
        // to about that during an ingest; SQLite otherwise keeps the largest size it ever had).
        try connection.execute("PRAGMA journal_size_limit = 67108864")
        try connection.execute("PRAGMA foreign_keys = ON")
        // Debian builds SQLite with secure_delete on: every page a DELETE frees is overwritten with
        // zeros, through the log and again at the checkpoint. Nothing the ledger deletes is secret:
        // it deletes only caches and projections, and the events they come from stay (append-only).
        // FAST still zeroes deleted content in pages that are written anyway, and no more, so a
        // rebuild's emptying of the projections does not rewrite every freed page.
        try connection.execute("PRAGMA secure_delete = FAST")
    }

    /// Runs `body` in one write transaction (all or nothing). SQLite's failures leave it as
    /// ``LedgerStoreError/database(_:)``; `body`'s own errors pass through.
    public func write<T>(_ body: () throws -> T) throws -> T {
        do { return try connection.writeTransaction(body) } catch { throw LedgerStoreError.wrapping(error) }
    }

    /// Runs `body` in one read snapshot. SQLite's failures leave it as ``LedgerStoreError/database(_:)``.
    public func read<T>(_ body: () throws -> T) throws -> T {
        do { return try connection.readTransaction(body) } catch { throw LedgerStoreError.wrapping(error) }
    }

    /// The connection, as the primitive the roles written once run over.
    public var database: any SQLDatabase { connection }
}

extension EventStore {
    /// Lowers SQLite's per-value length limit (`SQLITE_LIMIT_LENGTH`, 1 GB by default) on this
    /// connection, so tests can make the store refuse one message ("string or blob too big")
    /// without writing a gigabyte. Returns the previous limit.
    @discardableResult
    package func setValueLengthLimit(_ bytes: Int32) -> Int32 {
        sqlite3_limit(connection.handle, SQLITE_LIMIT_LENGTH, bytes)
    }
}

extension EventStore: RecordChainStorage {
    /// The last record-chain link (inside the caller's write transaction, which holds the file's write lock).
    package func lastRecordLink() throws -> (seq: Int64, hash: Data)? {
        let statement = try connection.prepare("SELECT seq, hash FROM record_chain ORDER BY seq DESC LIMIT 1")
        defer { statement.reset() }
        return try statement.step() ? (statement.int64(0), statement.blob(1)) : nil
    }

    /// Stores one record-chain link.
    package func insertRecordLink(_ link: RecordChain.Link) throws {
        try connection.prepare("INSERT INTO record_chain(seq, kind, subject, digest, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)")
            .bind(.integer(link.seq), .text(link.kind.rawValue), .text(link.subject), .blob(link.digest), .blob(link.previousHash),
                  .blob(link.hash)).run()
    }

    /// ``appendRecordLinks(_:)`` (a writable SQLite ledger always has its record chain).
    public func linkRecords(_ items: [(kind: RecordChain.Kind, subject: String, digest: Data)]) throws {
        try appendRecordLinks(items)
    }
}
