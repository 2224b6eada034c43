import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import Synchronization

/// Which connection of a ``FailingStore`` an operation ran on: the store the test handed over, or
/// a reader it opened (``FailingStore/openReader()``) for a scan on another thread.
enum StoreRole: String, Sendable, Hashable {
    case main, reader
}

/// The store operations a ``FaultPlan`` can make fail (and counts the calls of).
enum StoreOperation: String, Sendable, Hashable {
    case positionsWithoutFacts
    case eventsForFacts
    case storeFacts
    /// `forEachFactsBatch(batchSize:positions:)` over a bounded range (the identity pass's halves).
    case forEachFactsBatchInRange
    /// `forEachFactsBatch(batchSize:positions:)` over `Int64.min...Int64.max`, which is what the
    /// protocol extension's `forEachFactsBatch(batchSize:)` asks for (a scan of every row).
    case forEachFactsBatchOfWholeLog
    case clearProjections
    case insertRebuiltGroups
    case replaceGroups
    case storeGroupSnapshots
    case openReader
}

/// The error a ``FaultPlan`` throws: which operation failed, on which connection.
struct InjectedFault: Error, Equatable, CustomStringConvertible {
    let operation: StoreOperation
    let role: StoreRole
    var description: String { "injected fault in \(operation.rawValue) on the \(role.rawValue) store" }
}

/// When a planned fault fires.
enum FaultTrigger: Sendable, Hashable {
    /// The first `n` calls succeed; the next one throws before it reaches the real store.
    case afterCalls(Int)
    /// A batch-streaming operation hands `n` batches to its caller (counted over its calls), then
    /// throws inside the stream instead of handing on the next one.
    case afterBatches(Int)
}

/// One planned fault: `operation` on the `role` connection fails as `trigger` says. It fires once.
struct PlannedFault: Sendable, Hashable {
    let operation: StoreOperation
    let role: StoreRole
    let trigger: FaultTrigger

    /// The error this fault throws.
    var error: InjectedFault { InjectedFault(operation: operation, role: role) }
}

/// The faults every ``FailingStore`` sharing this plan injects, and what was called on them.
///
/// Thread-safe: a rebuild uses its main store and its readers from several threads at once, and
/// every count and fault lives behind one `Mutex`.
final class FaultPlan: Sendable {
    /// A call counter's key.
    private struct Site: Hashable {
        let operation: StoreOperation
        let role: StoreRole
    }

    private struct State {
        var armed: [PlannedFault] = []
        var fired: [PlannedFault] = []
        var calls: [Site: Int] = [:]
        var batches: [Site: Int] = [:]
    }

    private let state = Mutex(State())

    /// Plans `operation` on `role` to fail once the first `calls` calls have succeeded.
    func fail(_ operation: StoreOperation, on role: StoreRole, afterCalls calls: Int) {
        arm(PlannedFault(operation: operation, role: role, trigger: .afterCalls(calls)))
    }

    /// Plans the batch-streaming `operation` on `role` to fail inside its stream once `batches`
    /// batches have been handed on.
    func fail(_ operation: StoreOperation, on role: StoreRole, afterBatches batches: Int) {
        arm(PlannedFault(operation: operation, role: role, trigger: .afterBatches(batches)))
    }

    /// Plans `fault`.
    func arm(_ fault: PlannedFault) {
        state.withLock { $0.armed.append(fault) }
    }

    /// The faults that fired, in the order they did.
    var fired: [PlannedFault] { state.withLock { $0.fired } }

    /// How many times `operation` was called on `role` (including a call that failed).
    func calls(of operation: StoreOperation, on role: StoreRole) -> Int {
        state.withLock { $0.calls[Site(operation: operation, role: role), default: 0] }
    }

    /// How many batches `operation` handed on from `role` (not counting the one a fault replaced).
    func batches(of operation: StoreOperation, on role: StoreRole) -> Int {
        state.withLock { $0.batches[Site(operation: operation, role: role), default: 0] }
    }

    /// Counts a call of `operation` on `role`; throws if an `afterCalls` fault is due.
    func enter(_ operation: StoreOperation, on role: StoreRole) throws(InjectedFault) {
        let site = Site(operation: operation, role: role)
        let due = state.withLock { state -> PlannedFault? in
            let earlier = state.calls[site, default: 0]
            state.calls[site] = earlier + 1
            return Self.take(from: &state) { $0.trigger == .afterCalls(earlier) && Site(operation: $0.operation, role: $0.role) == site }
        }
        if let due { throw due.error }
    }

    /// Counts a batch `operation` on `role` is about to hand on; throws instead if an
    /// `afterBatches` fault is due.
    func deliver(batchOf operation: StoreOperation, on role: StoreRole) throws(InjectedFault) {
        let site = Site(operation: operation, role: role)
        let due = state.withLock { state -> PlannedFault? in
            let delivered = state.batches[site, default: 0]
            let fault = Self.take(from: &state) {
                $0.trigger == .afterBatches(delivered) && Site(operation: $0.operation, role: $0.role) == site
            }
            if fault == nil { state.batches[site] = delivered + 1 }
            return fault
        }
        if let due { throw due.error }
    }

    /// Moves the first armed fault that `matches` to the fired ones and returns it.
    private static func take(from state: inout State, where matches: (PlannedFault) -> Bool) -> PlannedFault? {
        guard let index = state.armed.firstIndex(where: matches) else { return nil }
        let fault = state.armed.remove(at: index)
        state.fired.append(fault)
        return fault
    }
}

/// A ``LedgerStore`` test double: forwards every requirement to a real store, except that the
/// operations a rebuild depends on (``StoreOperation``) first consult a shared ``FaultPlan``,
/// which counts them and may throw an ``InjectedFault`` (for the fact scans, also in the middle of
/// the stream). Readers it opens wrap the real store's readers with the same plan, as `.reader`,
/// so a fault can target a scan on another thread rather than the main connection.
///
/// Not `Sendable`, like the stores it wraps: the rebuilder hands each reader to its scan thread
/// itself, and only the plan is shared between threads.
///
/// ```swift
/// let plan = FaultPlan()
/// plan.fail(.forEachFactsBatchInRange, on: .reader, afterBatches: 1)
/// let store = FailingStore(wrapping: realStore, plan: plan)
/// ```
final class FailingStore: LedgerStore {
    /// The real store every call goes to.
    let base: any LedgerStore
    /// The faults to inject (shared with the readers this store opens).
    let plan: FaultPlan
    /// Which connection this is, for the plan.
    let role: StoreRole

    init(wrapping base: any LedgerStore, plan: FaultPlan, role: StoreRole = .main) {
        self.base = base
        self.plan = plan
        self.role = role
    }

    var location: String { base.location }
    var database: any SQLDatabase { base.database }
    func ensureAPITokensTable() throws { try base.ensureAPITokensTable() }
    var rowLockClause: String { base.rowLockClause }
    var skipLockedClause: String { base.skipLockedClause }
    func hasAccessChangeTables() throws -> Bool { try base.hasAccessChangeTables() }

    var clock: @Sendable () -> EpochMillis {
        get { base.clock }
        set { base.clock = newValue }
    }

    // MARK: Transactions

    func write<T>(_ body: () throws -> T) throws -> T {
        try beforeCommit?()
        return try base.write(body)
    }
    func read<T>(_ body: () throws -> T) throws -> T { try base.read(body) }

    func openReader() throws -> sending (any LedgerStore)? {
        try plan.enter(.openReader, on: role)
        guard let reader = try base.openReader() else { return nil }
        return FailingStore(wrapping: reader, plan: plan, role: .reader)
    }

    func isConnectionLoss(_ error: any Error) -> Bool { base.isConnectionLoss(error) }
    func refusesInput(_ error: any Error) -> Bool { base.refusesInput(error) }
    func reconnect() throws { try base.reconnect() }
    func probeWrite() throws { try base.probeWrite() }
    func withPageCache<T>(mebibytes: Int, _ body: () throws -> T) throws -> T { try base.withPageCache(mebibytes: mebibytes, body) }
    func withBackgroundCheckpoints<T>(_ body: () throws -> T) throws -> T { try base.withBackgroundCheckpoints(body) }

    // MARK: Configuration

    func arrivalSummary(limit: Int) throws -> ArrivalSummary { try base.arrivalSummary(limit: limit) }

    // MARK: Appending

    /// Runs before each write transaction begins on the real store (a test's "meanwhile" before a
    /// commit: a producer renaming a file, another connection committing).
    var beforeCommit: (() throws -> Void)?

    func lockHeadForAppend() throws -> (position: Int64, hash: Data) { try base.lockHeadForAppend() }
    func storedPositions(ofEventIds eventIds: [String]) throws -> [[UInt8]: Int64] { try base.storedPositions(ofEventIds: eventIds) }
    func openQuarantineIds(digests: Set<String>) throws -> [QuarantinePlan.Key: Int64] { try base.openQuarantineIds(digests: digests) }
    func writeAppend(_ plan: AppendPlan, quarantine: QuarantinePlan) throws -> [Int64] { try base.writeAppend(plan, quarantine: quarantine) }
    func lockQuarantineStates(ids: [Int64]) throws -> [Int64: String] { try base.lockQuarantineStates(ids: ids) }
    func resolveQuarantine(_ resolutions: [QuarantineRetryPlan.Resolution], at now: EpochMillis) throws {
        try base.resolveQuarantine(resolutions, at: now)
    }
    func linkRecords(_ items: [(kind: RecordChain.Kind, subject: String, digest: Data)]) throws { try base.linkRecords(items) }

    func head() throws -> (position: Int64, hash: Data) { try base.head() }
    func verifyChain(progress: ((Int64) -> Void)?) throws -> ChainVerification { try base.verifyChain(progress: progress) }

    // MARK: Reading events

    func event(at position: Int64) throws -> LedgerEvent? { try base.event(at: position) }
    func event(id eventId: String) throws -> LedgerEvent? { try base.event(id: eventId) }
    func storedBytes(ofEventId eventId: String) throws -> (position: Int64, raw: Data)? { try base.storedBytes(ofEventId: eventId) }
    func events(at positions: [Int64]) throws -> [LedgerEvent] { try base.events(at: positions) }
    func forEachEvent(from position: Int64, _ body: (LedgerEvent) throws -> Void) throws { try base.forEachEvent(from: position, body) }
    func positions(mentioning value: String, kind: IdentifierKind?) throws -> [Int64] { try base.positions(mentioning: value, kind: kind) }
    func positions(mentioningAny identifiers: Set<String>) throws -> Set<Int64> { try base.positions(mentioningAny: identifiers) }
    func positions(byIdentifier identifiers: Set<String>) throws -> [String: Set<Int64>] { try base.positions(byIdentifier: identifiers) }
    func duplicateCounts(for eventIds: [String]) throws -> [String: Int] { try base.duplicateCounts(for: eventIds) }
    func leafFingerprints(at positions: Set<Int64>) throws -> [String: String] { try base.leafFingerprints(at: positions) }

    // MARK: Quarantine


    // MARK: Facts

    func storeFacts(position: Int64, facts: Data) throws {
        try plan.enter(.storeFacts, on: role)
        try base.storeFacts(position: position, facts: facts)
    }

    func facts(at positions: Set<Int64>) throws -> [Int64: Data] { try base.facts(at: positions) }

    func positionsWithoutFacts() throws -> [Int64] {
        try plan.enter(.positionsWithoutFacts, on: role)
        return try base.positionsWithoutFacts()
    }

    func ensureEventMetadataIndex() throws { try base.ensureEventMetadataIndex() }

    func eventsForFacts(_ positions: ArraySlice<Int64>) throws -> [EventForFacts] {
        try plan.enter(.eventsForFacts, on: role)
        return try base.eventsForFacts(positions)
    }

    func forEachFactsBatch(batchSize: Int, positions: ClosedRange<Int64>, _ body: (FactsRowBatch) throws -> Void) throws {
        let operation: StoreOperation = positions == Int64.min...Int64.max ? .forEachFactsBatchOfWholeLog : .forEachFactsBatchInRange
        try plan.enter(operation, on: role)
        try base.forEachFactsBatch(batchSize: batchSize, positions: positions) { batch in
            try plan.deliver(batchOf: operation, on: role)
            try body(batch)
        }
    }

    func factsVolume() throws -> (rows: Int64, bytes: Int64) { try base.factsVolume() }

    // MARK: Group index and snapshots

    func groupKeys(forAny identifiers: Set<String>) throws -> Set<String> { try base.groupKeys(forAny: identifiers) }
    func groupIndexRows(groupKeys: Set<String>) throws -> [GroupIndexRow] { try base.groupIndexRows(groupKeys: groupKeys) }

    func replaceGroups(removing: Set<String>, rows: [GroupIndexRow]) throws {
        try plan.enter(.replaceGroups, on: role)
        try base.replaceGroups(removing: removing, rows: rows)
    }

    func holdAppendsForRebuild() throws { try base.holdAppendsForRebuild() }

    var hasGroupSnapshots: Bool { base.hasGroupSnapshots }
    func groupSnapshots(from first: String, through last: String) throws -> [String: GroupSnapshot] {
        try base.groupSnapshots(from: first, through: last)
    }
    func groupSnapshotValidity() throws -> [String: GroupSnapshotValidity] { try base.groupSnapshotValidity() }
    func storeGroupSnapshots(_ snapshots: [GroupSnapshot]) throws {
        try plan.enter(.storeGroupSnapshots, on: role)
        try base.storeGroupSnapshots(snapshots)
    }
    func deleteGroupSnapshots(groupKeys: Set<String>) throws { try base.deleteGroupSnapshots(groupKeys: groupKeys) }
    func clearGroupSnapshots() throws { try base.clearGroupSnapshots() }

    func allGroupKeys() throws -> [String] { try base.allGroupKeys() }

    func clearProjections() throws {
        try plan.enter(.clearProjections, on: role)
        try base.clearProjections()
    }

    func withGroupKeyIndexBuiltAfter<T>(_ body: () throws -> T) throws -> T { try base.withGroupKeyIndexBuiltAfter(body) }

    func insertRebuiltGroups(rows: [GroupIndexRow]) throws {
        try plan.enter(.insertRebuiltGroups, on: role)
        try base.insertRebuiltGroups(rows: rows)
    }

    // MARK: Seat claims

    func lockClaimRequests(originalTransactionId: String) throws {
        try base.lockClaimRequests(originalTransactionId: originalTransactionId)
    }







    // MARK: Copying a ledger between stores

    func forEachStoredRecord(from position: Int64, batchSize: Int, _ body: ([StoredEventRecord]) throws -> Void) throws {
        try base.forEachStoredRecord(from: position, batchSize: batchSize, body)
    }

    func appendVerbatim(_ records: [StoredEventRecord]) throws { try base.appendVerbatim(records) }
}
