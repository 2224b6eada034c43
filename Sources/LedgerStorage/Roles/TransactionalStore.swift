import AppStoreModels
import Foundation
import LedgerEvents

/// A store's transactions and engine controls: the role every other ``LedgerStore`` role runs inside.
///
/// A store is used from one thread at a time; ``openReader()`` gives a second one for another thread.
public protocol TransactionalStore: AnyObject {
    /// Where the store lives, for messages: a file path or a URL without its password.
    var location: String { get }
    /// The recording clock (transaction time); `$SEATLEDGER_NOW` pins it in tests.
    var clock: @Sendable () -> EpochMillis { get set }
    /// The store's connection as the SQL primitive the roles written once run over (settings,
    /// quarantine reads, claim requests): inside this store's transactions when one is open.
    var database: any SQLDatabase { get }

    /// Runs `body` in one write transaction (all or nothing). Transactions do not nest.
    func write<T>(_ body: () throws -> T) throws -> T
    /// Runs `body` in one read snapshot; inside a transaction already open on this store, in
    /// that transaction's.
    func read<T>(_ body: () throws -> T) throws -> T
    /// A second, read-only store on the same data for a scan on another thread, or `nil` when the
    /// engine cannot open one (an in-memory database). It sees committed data only.
    func openReader() throws -> sending (any LedgerStore)?
    /// Whether `error` means the connection to the database server is gone (a restart): the
    /// transaction in flight did not commit, and after ``reconnect()`` the work can be retried.
    func isConnectionLoss(_ error: any Error) -> Bool
    /// Whether `error` is the engine refusing what one input asked it to store (a value too big,
    /// a type or range it cannot hold), not a failure of the store itself (disk,
    /// locks, a lost server). The ingest then commits the batch's other messages without the one
    /// that causes it and quarantines that one (`store_refused`) instead of failing the batch.
    func refusesInput(_ error: any Error) -> Bool
    /// What the engine's own structural check finds wrong with the stored database (SQLite:
    /// `PRAGMA quick_check`); empty when it is sound or the engine has no such check.
    func integrityProblems() throws -> [String]
    /// Re-establishes a lost connection to the database server.
    func reconnect() throws
    /// Commits a write transaction that changes nothing a reader can see but makes the engine
    /// write and sync its log as an append does, so that a full disk, a file size limit or a
    /// read-only database is found before a notification is refused (`serve`'s `/readyz`). An
    /// empty transaction would not do: engines commit one without writing anything.
    func probeWrite() throws
    /// Runs `body` with this connection's page cache limited to `mebibytes`, then restores it (a
    /// long write transaction otherwise keeps the whole default cache full of dirty pages). An
    /// engine whose server owns the cache just runs `body`.
    func withPageCache<T>(mebibytes: Int, _ body: () throws -> T) throws -> T
    /// The database file the store is, when this process itself checks it for damage and marks a
    /// damaged one so that no writer appends to it again (SQLite); `nil` when a server guards its
    /// own pages (PostgreSQL).
    var checkedFile: String? { get }
    /// Whether a read of several statements should run in one read snapshot (``read(_:)``): cheap,
    /// and every statement sees one commit (SQLite: one shared lock instead of one per statement).
    /// `false` where a snapshot costs round trips and aborts the rest of a read after any failed
    /// statement (PostgreSQL): such a read runs a statement at a time.
    var readsInOneSnapshot: Bool { get }
    /// Runs `body`, a long run of appends, with the engine's log housekeeping moved off the
    /// appending thread where it can be (SQLite: WAL checkpoints on a thread of their own). An
    /// engine whose server does that already just runs `body`.
    func withBackgroundCheckpoints<T>(_ body: () throws -> T) throws -> T
}
