import Foundation
import LedgerStorage
import Testing

/// An engine the ``LedgerStoreConformance`` suite runs against: it creates fresh ledgers.
///
/// Each engine's own test target supplies one (the SQLite store's in `EventStoreTests`, the
/// PostgreSQL store's in `PostgresStoreTests`), so this target links no engine.
public protocol ConformanceEngine: Sendable {
    /// The engine's name in test output (`sqlite`, `postgres`).
    var name: String { get }
    /// A new, empty ledger with `configuration` and `roots`.
    func create(configuration: LedgerConfiguration, roots: [StoredTrustRoot]) throws -> EngineLedger
}

/// A ledger an engine created for a test, and what keeps it alive.
public struct EngineLedger {
    /// The store under test.
    public let store: any LedgerStore
    /// Opens another store on the same ledger (a second process, as far as the store can tell).
    public let reopen: () throws -> any LedgerStore
    /// Calls the engine's `create` at the same location again (which must refuse).
    public let createAgain: () throws -> Void
    /// What removes the ledger when the test is done (a temporary directory, a throwaway cluster).
    public let keepAlive: AnyObject?

    /// Creates one.
    public init(store: any LedgerStore, reopen: @escaping () throws -> any LedgerStore,
                createAgain: @escaping () throws -> Void, keepAlive: AnyObject?) {
        self.store = store
        self.reopen = reopen
        self.createAgain = createAgain
        self.keepAlive = keepAlive
    }
}

/// A fresh ledger on one engine with its recording clock pinned, so every engine writes the same
/// `recorded_at`.
public final class StoreFixture {
    /// The store under test.
    public let store: any LedgerStore
    /// The engine's ledger (and what keeps it alive).
    public let ledger: EngineLedger

    /// The recording clock every fixture pins.
    public static let pinnedNow: Int64 = 1_750_000_000_000

    private init(ledger: EngineLedger) {
        self.ledger = ledger
        store = ledger.store
        store.clock = { StoreFixture.pinnedNow }
    }

    /// A new ledger on `engine` with the test configuration and root.
    public static func make(on engine: any ConformanceEngine, configuration: LedgerConfiguration? = nil,
                            roots: [StoredTrustRoot] = [TestData.root]) throws -> StoreFixture {
        StoreFixture(ledger: try engine.create(configuration: try configuration ?? TestData.configuration(), roots: roots))
    }

    /// Another store on the same ledger, its clock pinned too.
    public func reopen() throws -> any LedgerStore {
        let store = try ledger.reopen()
        store.clock = { StoreFixture.pinnedNow }
        return store
    }
}
