import AppStoreModels
import Foundation
import LedgerEvents

/// The storage a ledger runs on: the embedded SQLite `EventStore` (the default) or another
/// engine (`PostgresEventStore`). The pipeline, projections and reports talk only to this protocol,
/// the sum of small roles: ``TransactionalStore``, ``EventLog``, ``AppendRows``, ``QuarantineStore``,
/// ``FactsStore``, ``GroupIndexStore``, ``GroupSnapshotStore``, ``SeatClaimStore``, ``SettingsStore``, ``AccessChangeStore`` and ``WebhookStore``.
///
/// Every implementation gives the same guarantees: an append-only, gap-free, hash-chained log in
/// commit order; idempotency by event id enforced by a unique constraint; quarantine of rejected
/// input with its raw bytes; projections written in the same transaction as the events they
/// follow from. A store is used from one thread at a time. The policy those guarantees need is
/// written once in this module (``LedgerAppend``, ``AppendPlan``, ``QuarantinePlan``,
/// ``QuarantineRetryPlan``, ``ChainContinuity``, ``ClaimResumption``, ``RecordChain``), and so are
/// the roles whose SQL is the same on every engine, over the engine's ``SQLDatabase`` (settings,
/// tokens, quarantine reads, claim requests); an engine supplies rows, its hot reads, its locks
/// and transactions. Every engine's failure reaches callers as ``LedgerStoreError/database(_:)``.
///
/// ```swift
/// let store: any LedgerStore = try EventStore.open(at: "ledger.sqlite")
/// let (position, hash) = try store.head()
/// ```
public protocol LedgerStore: TransactionalStore, EventLog, AppendRows, QuarantineStore, FactsStore, GroupIndexStore, GroupSnapshotStore, SeatClaimStore, SettingsStore,
    AccessChangeStore, WebhookStore {}

extension LedgerStore {
    /// Default: none (the server guards its own pages).
    public var checkedFile: String? { nil }

    /// Default: a statement at a time.
    public var readsInOneSnapshot: Bool { false }

    /// Default: runs `body`.
    public func withGroupKeyIndexBuiltAfter<T>(_ body: () throws -> T) throws -> T { try body() }

    /// Default: nothing (PostgreSQL keeps a large `raw` apart from its row, in TOAST).
    public func ensureEventMetadataIndex() throws {}

    /// Default: ``replaceGroups(removing:rows:)`` with nothing to remove.
    public func insertRebuiltGroups(rows: [GroupIndexRow]) throws {
        try replaceGroups(removing: [], rows: rows)
    }

    /// Default: this engine cannot be copied from.
    public func forEachStoredRecord(from position: Int64, batchSize: Int, _ body: ([StoredEventRecord]) throws -> Void) throws {
        throw StoreOperationUnsupported(location: location, operation: "reading stored records for a copy")
    }

    /// Default: this engine cannot be copied to.
    public func appendVerbatim(_ records: [StoredEventRecord]) throws {
        throw StoreOperationUnsupported(location: location, operation: "appending copied records")
    }
}

extension LedgerStore {
    /// No structural check of its own (a server engine checks its storage itself).
    public func integrityProblems() throws -> [String] { [] }

    /// Recomputes the hash chain from the raw bytes.
    public func verifyChain() throws -> ChainVerification { try verifyChain(progress: nil) }

    /// Streams every event in log order.
    public func forEachEvent(_ body: (LedgerEvent) throws -> Void) throws { try forEachEvent(from: 1, body) }

    /// Positions of events that mention `value` as any kind of identifier.
    public func positions(mentioning value: String) throws -> [Int64] { try positions(mentioning: value, kind: nil) }

    /// Every quarantined input, optionally in one state.
    public func quarantine(state: String? = nil) throws -> [QuarantineRecord] { try quarantine(state: state, limit: Int.max) }

    /// Streams every stored facts row in position order, `batchSize` rows at a time.
    public func forEachFactsBatch(batchSize: Int, _ body: (FactsRowBatch) throws -> Void) throws {
        try forEachFactsBatch(batchSize: batchSize, positions: Int64.min...Int64.max, body)
    }

    /// Streams every stored facts row in position order, 8,192 rows at a time.
    public func forEachFactsBatch(_ body: (FactsRowBatch) throws -> Void) throws { try forEachFactsBatch(batchSize: 8_192, body) }
}
