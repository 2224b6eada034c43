import AppStoreModels
import LedgerStorage
import Foundation
import LedgerEvents
import PostgresClient

/// The ledger on PostgreSQL: the same append-only, gap-free, hash-chained log as the SQLite
/// ``EventStore``, behind the same ``LedgerStore`` protocol, with identical results for the same
/// inputs (positions, chain bytes, outcomes, quarantine ids, ordering of every list).
///
/// One `PostgresEventStore` owns one connection and is used from one thread at a time; any number
/// of processes may append to the same database: appends serialise on the `ledger_head` row (see
/// `README.md` in this folder), so positions are handed out and become visible in commit order.
///
/// Applications reach it through `Ledger` (which verifies, deduplicates and keeps the
/// projections), not by committing events to the store themselves:
///
/// ```swift
/// PostgresLedgerEngine.register()   // once, at start (the SeatLedgerPostgres product)
/// let ledger = try Ledger.open(path: "postgresql://ledger_owner@db/seatledger")
/// ```
public final class PostgresEventStore: LedgerStore {
    /// The connection every statement of this store goes through.
    let connection: PostgresConnection
    /// The connection as the primitive the roles written once run over.
    private let sqlDatabase: PostgresSQLDatabase
    /// The URL as given (with its password), to open readers on the same database.
    private let url: String
    /// Whether this store was opened by ``openReader()`` (its session refuses writes).
    let isReader: Bool
    /// Which transaction, if any, the store's connection is in (see ``write(_:)``).
    var transactionState: TransactionState = .none
    /// Facts stored during the open write transaction, written in one statement before anything
    /// reads `event_facts` and before COMMIT (the projection maintainer stores one row per event).
    var pendingFacts: [Int64: Data] = [:]
    /// Positions appended by the open write transaction: no facts row can exist for them yet, so
    /// their facts are bulk-loaded with COPY instead of an upsert.
    var appendedInTransaction: ClosedRange<Int64>?
    /// The head row as this transaction's append lock read it, and as its appends moved it.
    var lockedHead: LockedHead?
    /// Positions whose facts this transaction already copied (storing them again needs the upsert).
    var factsCopiedInTransaction = Set<Int64>()
    /// Whether the ledger has a `record_chain` (schema 3): a ledger of schema 2 that a member of
    /// `seatledger_append` opens (only the owner upgrades) is written without links.
    var hasRecordChain = true
    /// Whether the ledger has `group_snapshot` (schema 4). One that a role other than the tables'
    /// owner opened before the owner upgraded it has none yet; its appends look again
    /// (``PostgresEventStore/refreshGroupSnapshotPresence()``), so that none of them leaves a
    /// snapshot the upgrade's writers stored in place after changing its group.
    public internal(set) var hasGroupSnapshots = true
    /// See ``hasAccessChangeTables()``.
    var accessChangeTables = false

    /// Where the store lives: the URL without its password.
    public let location: String
    /// The clock for `recorded_at` (epoch ms): now, or `$SEATLEDGER_NOW` when set; injectable for tests.
    public var clock: @Sendable () -> EpochMillis

    /// The transaction the store's connection is in.
    enum TransactionState {
        case none
        case write
        case read
    }

    private init(connection: PostgresConnection, url: String, isReader: Bool) {
        self.connection = connection
        self.sqlDatabase = PostgresSQLDatabase(connection: connection)
        self.url = url
        self.isReader = isReader
        self.location = PostgresURLRedaction.redact(url)
        // `$SEATLEDGER_NOW` (ISO 8601 or epoch ms) pins the recording clock for reproducible runs (golden tests).
        if let pinned = ProcessInfo.processInfo.environment["SEATLEDGER_NOW"].flatMap(Timestamp.parse) {
            self.clock = { pinned }
        } else {
            self.clock = { Timestamp.millis(Date()) }
        }
    }

    // MARK: Creating and opening

    /// Creates a new ledger in the database `url` names (in its current schema): the tables, the
    /// append-only triggers, the head row, the configuration and the trust roots, in one transaction.
    /// PostgreSQL's failures leave as ``LedgerStoreError/database(_:)``.
    ///
    /// Also creates the NOLOGIN role `seatledger_append` (when the connecting role may create roles,
    /// or the role exists already) and grants it exactly what appending needs: no UPDATE, DELETE
    /// or TRUNCATE on `events` (see `README.md`). Refuses a database that already holds a ledger.
    public static func create(url: String, configuration: LedgerConfiguration,
                              roots: [StoredTrustRoot]) throws -> PostgresEventStore {
        try LedgerStoreError.wrappingFailures { try createWrapped(url: url, configuration: configuration, roots: roots) }
    }

    private static func createWrapped(url: String, configuration: LedgerConfiguration,
                                      roots: [StoredTrustRoot]) throws -> PostgresEventStore {
        let store = PostgresEventStore(connection: try connect(url), url: url, isReader: false)
        try store.requireUTF8()
        try store.connection.transaction {
            // Two creates at once (two `init`s, two `copy`s into one new database): the second
            // waits here for the first to commit, then finds its ledger (alreadyExists) instead of
            // failing halfway through the schema on a duplicate type name.
            try store.connection.query("SELECT pg_advisory_xact_lock($1)", [.int64(PostgresLedgerSchema.applicationID)])
            if try store.schemaExists() { throw LedgerStoreError.alreadyExists(path: store.location) }
            try store.connection.execute(PostgresLedgerSchema.current)
            try store.connection.query(
                "INSERT INTO ledger_meta (singleton, application_id, schema_version) VALUES (true, $1, $2)",
                [.int64(PostgresLedgerSchema.applicationID), .int64(PostgresLedgerSchema.currentVersion)])
            try store.connection.query(
                "INSERT INTO ledger_head (singleton, position, hash, last_arrival_id, last_quarantine_id) VALUES (true, 0, $1, 0, 0)",
                [.bytea(EventChain.genesis)])
            try store.writeConfiguration(configuration, createdAt: store.clock())
            for root in roots { try store.insertRoot(root) }
            try store.linkTokensOnce()
            try PostgresAppendRole.grantIfPossible(on: store.connection)
        }
        return store
    }

    /// Opens the ledger in the database `url` names, refusing a database without one
    /// (``LedgerStoreError/missing(path:)``), with a foreign `ledger_meta`
    /// (``LedgerStoreError/notALedger(path:)``) or with a newer schema (``LedgerStoreError/newerSchema(path:found:supported:)``).
    ///
    /// With `readOnly`, every transaction of the session is read-only (as SQLite's read-only open):
    /// a command that only reads cannot write by mistake. PostgreSQL's failures leave as
    /// ``LedgerStoreError/database(_:)``.
    public static func open(url: String, readOnly: Bool = false) throws -> PostgresEventStore {
        try LedgerStoreError.wrappingFailures { try open(url: url, reader: readOnly) }
    }

    /// Refuses a database whose server encoding is not UTF-8: events carry any Unicode text (a
    /// product name, a file name in `source`), which such a database would refuse at append time.
    private func requireUTF8() throws {
        let encoding = try connection.query("SHOW server_encoding").first.map { try $0.text(0) } ?? "unknown"
        guard encoding.uppercased().replacingOccurrences(of: "-", with: "") == "UTF8" else {
            throw LedgerStoreError.badConfiguration(
                "\(location) uses server encoding \(encoding); a SeatLedger ledger needs a UTF8 database "
                    + "(createdb --encoding=UTF8 --template=template0 …)")
        }
    }

    private static func open(url: String, reader: Bool) throws -> PostgresEventStore {
        let store = PostgresEventStore(connection: try connect(url), url: url, isReader: reader)
        guard try store.schemaExists() else { throw LedgerStoreError.missing(path: store.location) }
        try store.requireUTF8()
        let meta = try store.connection.query("SELECT application_id, schema_version FROM ledger_meta")
        guard let row = meta.first, try row.int64(0) == PostgresLedgerSchema.applicationID else {
            throw LedgerStoreError.notALedger(path: store.location)
        }
        let version = try row.int64(1)
        if version > PostgresLedgerSchema.currentVersion {
            throw LedgerStoreError.newerSchema(path: store.location, found: version, supported: PostgresLedgerSchema.currentVersion)
        }
        try store.configureSession()
        if !reader && version < PostgresLedgerSchema.currentVersion { try store.upgradeSchema() }
        if !reader { try PostgresAppendRole.narrowIfWider(on: store.connection) }
        store.hasRecordChain = try store.connection.query("SELECT to_regclass('record_chain') IS NOT NULL").first?.bool(0) ?? false
        store.hasGroupSnapshots = try store.snapshotTableExists()
        if !reader, store.hasRecordChain, try store.configValues()[RecordChain.tokensCoveredKey] == nil {
            // A ledger from before tokens were chained: link them once (a role that may not is left as it is).
            do {
                try store.write { try store.linkTokensOnce() }
            } catch where PostgresError.in(error)?.sqlState == "42501" {}
        }
        return store
    }

    /// Brings an older ledger up to ``PostgresLedgerSchema/currentVersion``, in one transaction.
    /// Only the tables' owner may: for another role (a member of `seatledger_append`) the ledger
    /// stays as it is, which this build reads and writes all the same (the upgrades only drop
    /// caches it does not use), until the owner opens it.
    private func upgradeSchema() throws {
        do {
            try connection.transaction {
                // Another process may have upgraded it since the version was read: lock the row and read again.
                let now = try connection.query("SELECT schema_version FROM ledger_meta FOR UPDATE").first?.int64(0) ?? 0
                for upgrade in PostgresLedgerSchema.upgrades where upgrade.version > now { try connection.execute(upgrade.sql) }
                if now < 3 {
                    let role = try connection.query("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", [.text(PostgresAppendRole.name)])
                    if try role.first?.bool(0) ?? false {
                        try connection.execute("GRANT SELECT, INSERT ON record_chain TO \(PostgresConnection.quoteIdentifier(PostgresAppendRole.name))")
                    }
                    // The record chain starts by covering what is already stored.
                    try appendRecordLinks(RecordChain.sealing(configuration: try configValues(), roots: try trustRoots(),
                                                              quarantine: try quarantine(state: nil, limit: Int.max)))
                }
                if now < 4 {
                    let role = try connection.query("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", [.text(PostgresAppendRole.name)])
                    if try role.first?.bool(0) ?? false {
                        try connection.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON group_snapshot TO \(PostgresConnection.quoteIdentifier(PostgresAppendRole.name))")
                    }
                }
                if now < 6 {
                    let role = try connection.query("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", [.text(PostgresAppendRole.name)])
                    if try role.first?.bool(0) ?? false {
                        let grantee = PostgresConnection.quoteIdentifier(PostgresAppendRole.name)
                        for (table, privileges) in PostgresAppendRole.privileges where PostgresLedgerSchema.accessChangeTables.contains(table) {
                            try connection.execute("GRANT \(privileges) ON \(PostgresConnection.quoteIdentifier(table)) TO \(grantee)")
                        }
                    }
                }
                if now < PostgresLedgerSchema.currentVersion {
                    try connection.query("UPDATE ledger_meta SET schema_version = $1", [.int64(PostgresLedgerSchema.currentVersion)])
                }
            }
        } catch let error as PostgresError where error.sqlState == "42501" {
            return  // insufficient_privilege: not the owner
        }
    }

    /// A connection to `url`, checked and normalised by SeatLedger first (``PostgresConnectionURL/checked(_:)``)
    /// so a malformed URL is refused without libpq quoting it; libpq's own messages are scrubbed of the password.
    private static func connect(_ url: String) throws -> PostgresConnection {
        let checked = try PostgresConnectionURL.checked(url)
        do {
            return try PostgresConnection(url: checked)
        } catch {
            throw PostgresError(kind: error.kind, sqlState: error.sqlState, message: PostgresConnectionURL.scrub(error.message, of: url),
                                detail: error.detail.map { PostgresConnectionURL.scrub($0, of: url) }, hint: error.hint)
        }
    }

    /// `url` without its password (in the user info, as a `password=` query parameter, or in a
    /// `key=value` connection string): what ``location`` shows.
    public static func redactedLocation(_ url: String) -> String {
        PostgresURLRedaction.redact(url)
    }

    /// Whether the current schema holds a ledger (its `ledger_meta` table).
    private func schemaExists() throws -> Bool {
        let result = try connection.query("SELECT to_regclass('ledger_meta') IS NOT NULL")
        return try result.first?.bool(0) ?? false
    }

    /// Session settings: a reader's session refuses writes (like SQLite's read-only connection).
    private func configureSession() throws {
        if isReader { try connection.execute("SET default_transaction_read_only = on") }
    }

    /// Rows read to be changed stay locked until the transaction ends (the access derivation's cursor).
    public var rowLockClause: String { " FOR UPDATE" }

    /// Due deliveries another `serve` holds are skipped, not waited for.
    public var skipLockedClause: String { " FOR UPDATE SKIP LOCKED" }

    /// Whether the ledger has schema 6's tables: looked up until found (the tables' owner may
    /// upgrade the ledger while an append-role process runs), then remembered.
    public func hasAccessChangeTables() throws -> Bool {
        if !accessChangeTables {
            accessChangeTables = try connection.query("SELECT to_regclass('access_pending') IS NOT NULL").first?.bool(0) ?? false
        }
        return accessChangeTables
    }

    /// Whether `error` ended the session: a dropped connection, class 08, or the server terminating
    /// it (57P0x: restart, shutdown, `pg_terminate_backend`).
    public func isConnectionLoss(_ error: any Error) -> Bool {
        guard let error = PostgresError.in(error) else { return false }
        return connection.sessionAware(error).isConnectionFailure
    }

    /// A data exception (SQLSTATE class 22) or a program limit (54, e.g. a value over 1 GB) that
    /// one input's values caused. Integrity constraints (23) are not counted: they can come from
    /// the store's own state (the append-only triggers).
    public func refusesInput(_ error: any Error) -> Bool {
        guard let error = PostgresError.in(error), error.kind == .server, let state = error.sqlState else { return false }
        return state.hasPrefix("22") || state.hasPrefix("54")
    }

    /// Reconnects after a lost server (for example a restart); an open transaction is gone with it.
    ///
    /// A `.connection` ``PostgresError`` from COMMIT leaves that batch's outcome unknown: appending
    /// it again is safe (duplicates are recognised by event id).
    public func reconnect() throws {
        transactionState = .none
        pendingFacts.removeAll()
        appendedInTransaction = nil
        lockedHead = nil
        factsCopiedInTransaction.removeAll()
        try connection.reconnect()
        try configureSession()
    }

    // MARK: Transactions

    /// Runs `body` in one READ COMMITTED write transaction (all or nothing). PostgreSQL's
    /// failures leave it as ``LedgerStoreError/database(_:)``; `body`'s own errors pass through.
    ///
    /// Transactions do not nest, as with SQLite: calling `write` or ``read(_:)`` inside one throws
    /// a `.usage` ``PostgresError``. Appends inside it serialise on the `ledger_head` row lock,
    /// which must run under READ COMMITTED (a waiter then continues from the committed head).
    public func write<T>(_ body: () throws -> T) throws -> T {
        guard transactionState == .none else {
            throw PostgresError(kind: .usage, message: "cannot start a write transaction within a transaction; transactions do not nest")
        }
        transactionState = .write
        defer {
            transactionState = .none
            pendingFacts.removeAll()
            appendedInTransaction = nil
            lockedHead = nil
            factsCopiedInTransaction.removeAll()
        }
        do {
            return try connection.transaction(isolation: .readCommitted) {
                let value = try body()
                try flushPendingFacts()
                return value
            }
        } catch {
            throw LedgerStoreError.wrapping(connection.sessionAware(error))
        }
    }

    /// Assigns the transaction an id (`txid_current()`, which a server in recovery refuses), so
    /// that its commit writes a WAL record and waits for it to be flushed, as an append's does;
    /// a read-only transaction (a reader, `default_transaction_read_only`) is refused as well,
    /// since PostgreSQL would refuse its appends but gives it an id.
    public func probeWrite() throws {
        try write {
            let readOnly = try connection.query("SELECT txid_current() IS NOT NULL, current_setting('transaction_read_only')").first?.text(1)
            guard readOnly == "off" else {
                throw PostgresError(kind: .server, message: "\(location) is read-only here (transaction_read_only = \(readOnly ?? "?")): appends would be refused")
            }
        }
    }

    /// Runs `body` in one read-only snapshot (REPEATABLE READ READ ONLY). Does not nest.
    /// PostgreSQL's failures leave it as ``LedgerStoreError/database(_:)``.
    public func read<T>(_ body: () throws -> T) throws -> T {
        // Inside a transaction already open on this store, `body` reads in that one.
        guard transactionState == .none else { return try body() }
        transactionState = .read
        defer { transactionState = .none }
        do {
            return try connection.transaction(isolation: .repeatableRead, readOnly: true, body)
        } catch {
            throw LedgerStoreError.wrapping(connection.sessionAware(error))
        }
    }

    /// The connection as the primitive the roles written once run over.
    public var database: any SQLDatabase { sqlDatabase }

    /// Runs `body` in the open transaction, or in a write transaction of its own when there is none:
    /// for store methods of several statements that must apply together.
    func atomically<T>(_ body: () throws -> T) throws -> T {
        transactionState == .none ? try write(body) : try body()
    }

    /// Runs `body`: the server owns the cache.
    public func withPageCache<T>(mebibytes: Int, _ body: () throws -> T) throws -> T { try body() }

    /// Runs `body`: the server's checkpointer already works apart from the appending client.
    public func withBackgroundCheckpoints<T>(_ body: () throws -> T) throws -> T { try body() }

    /// A second store on a new connection to the same database, whose session refuses writes.
    /// It sees committed data only; each ``read(_:)`` is one snapshot.
    public func openReader() throws -> sending (any LedgerStore)? {
        let reader: PostgresEventStore
        do { reader = try PostgresEventStore.open(url: url, reader: true) } catch { throw LedgerStoreError.wrapping(error) }
        reader.clock = clock
        return reader
    }
}
