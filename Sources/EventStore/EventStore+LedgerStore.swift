import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage

extension EventStore: LedgerStore {
    /// The file path.
    public var location: String { path }

    /// The file (``path``): this process checks it for damage and marks it.
    public var checkedFile: String? { path }

    /// A read snapshot is a shared lock held for the read: cheaper than one per statement.
    public var readsInOneSnapshot: Bool { true }

    /// None: a write transaction (`BEGIN IMMEDIATE`) already excludes every other writer.
    public var rowLockClause: String { "" }

    /// None: writers are serialised, so no row is held by another.
    public var skipLockedClause: String { "" }

    /// Schema 6 or later (a writer's open upgrades an older file).
    public func hasAccessChangeTables() throws -> Bool { accessChangeTables }

    /// An embedded file has no server connection to lose.
    public func isConnectionLoss(_ error: any Error) -> Bool { false }

    /// `PRAGMA quick_check` (structure, no index contents; linear in the file size): up to 20 findings.
    public func integrityProblems() throws -> [String] {
        return try LedgerStoreError.wrappingFailures {
            let statement = try connection.prepare("PRAGMA quick_check(20)")
            defer { statement.reset() }
            var found: [String] = []
            while try statement.step() { found.append(statement.text(0)) }
            return found == ["ok"] ? [] : found
        }
    }

    /// Rewrites the file header's application id with its own value: SQLite dirties page 1 for
    /// it whatever the value, so the commit appends a WAL frame and syncs it, as an append would.
    public func probeWrite() throws {
        try write { try connection.execute("PRAGMA application_id = \(LedgerSchema.applicationID)") }
    }

    /// `SQLITE_TOOBIG` ("string or blob too big"), `SQLITE_MISMATCH` or `SQLITE_RANGE`.
    public func refusesInput(_ error: any Error) -> Bool {
        (LedgerStoreError.databaseFailure(in: error) as? SQLiteError)?.isRefusalOfValue ?? false
    }

    /// Nothing to do: an embedded file has no server connection.
    public func reconnect() throws {}

    /// Runs `body` with `PRAGMA cache_size` set to `mebibytes`, then restores the previous size.
    public func withPageCache<T>(mebibytes: Int, _ body: () throws -> T) throws -> T {
        let previous = try LedgerStoreError.wrappingFailures { try connection.scalarInt("PRAGMA cache_size") ?? -65_536 }
        try LedgerStoreError.wrappingFailures { try setPageCache(mebibytes: mebibytes) }
        defer { try? connection.execute("PRAGMA cache_size = \(previous)") }  // a cache size only: nothing is lost if it fails
        return try body()
    }

    /// Runs `body` with WAL checkpoints on a thread and connection of their own
    /// (``WALCheckpointer``); an in-memory database just runs `body`.
    public func withBackgroundCheckpoints<T>(_ body: () throws -> T) throws -> T {
        try withBackgroundCheckpoints(thresholdFrames: WALCheckpointer.defaultThresholdFrames,
                                      hardLimitFrames: WALCheckpointer.defaultHardLimitFrames) { _ in try body() }
    }

    /// ``withBackgroundCheckpoints(_:)`` with given thresholds; `body` gets the checkpointer
    /// (`nil` when none runs: an in-memory or read-only database, or a nested call).
    func withBackgroundCheckpoints<T>(thresholdFrames: Int32, hardLimitFrames: Int32,
                                      _ body: (WALCheckpointer?) throws -> T) throws -> T {
        guard isFileBacked, !connection.isReadOnly, backgroundCheckpointer == nil else { return try body(nil) }
        let checkpointer = try WALCheckpointer(path: path, thresholdFrames: thresholdFrames, hardLimitFrames: hardLimitFrames)
        checkpointer.install(on: connection)
        backgroundCheckpointer = checkpointer
        defer {
            checkpointer.uninstall(from: connection)
            checkpointer.stop()
            backgroundCheckpointer = nil
        }
        return try body(checkpointer)
    }

    /// A read-only connection to the same file, or `nil` for an in-memory database.
    public func openReader() throws -> sending (any LedgerStore)? {
        guard isFileBacked else { return nil }
        let reader = try EventStore.open(at: path, readOnly: true)
        try reader.setPageCache(mebibytes: 8)
        return reader
    }
}
