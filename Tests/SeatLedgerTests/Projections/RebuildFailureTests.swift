import Foundation
import LedgerEvents
import LedgerStorage
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// A whole-ledger rebuild that fails part-way (a scan on another thread, a write on the main
/// connection) must rethrow that failure, stop its other threads, and leave the ledger exactly as
/// it was: the stored projections, the facts and the event log. A rebuild without the fault then
/// succeeds.
@Suite("Rebuild failures leave the ledger as it was")
struct RebuildFailureTests {
    /// One point a rebuild can fail at, with what the rebuild must (and must not) have done by then.
    struct FaultPoint: Sendable, CustomTestStringConvertible {
        let name: String
        let fault: PlannedFault
        /// Whether a third of the stored facts are deleted first, so the derive stage has work.
        var deletesFacts = false
        /// How the stored index is damaged first, which decides how the rebuild writes it.
        var damage: IndexDamage = .none
        /// Writes that must have succeeded in the failed transaction before the fault: what its
        /// rollback has to undo.
        var writesBeforeFault: [StoreOperation]
        /// Operations of later stages, which a failed stage must never reach (on any connection).
        var neverReached: [StoreOperation] = []

        var testDescription: String { name }

        // The identity scan now runs before the index is compared or written: nothing to undo.
        static let laterIdentityHalf = FaultPoint(
            name: "the later identity half (reader, ranged scan) after 1 batch",
            fault: PlannedFault(operation: .forEachFactsBatchInRange, role: .reader, trigger: .afterBatches(1)),
            damage: .everyGroup,
            writesBeforeFault: [], neverReached: [.forEachFactsBatchOfWholeLog, .clearProjections, .insertRebuiltGroups, .replaceGroups])
        static let earlierIdentityHalf = FaultPoint(
            name: "the earlier identity half (main store, ranged scan) after 1 batch",
            fault: PlannedFault(operation: .forEachFactsBatchInRange, role: .main, trigger: .afterBatches(1)),
            damage: .everyGroup,
            writesBeforeFault: [], neverReached: [.forEachFactsBatchOfWholeLog, .clearProjections, .insertRebuiltGroups, .replaceGroups])
        static let secondGroupWrite = FaultPoint(
            name: "the second insertRebuiltGroups (every group differs: the whole index written)",
            fault: PlannedFault(operation: .insertRebuiltGroups, role: .main, trigger: .afterCalls(1)),
            damage: .everyGroup,
            writesBeforeFault: [.clearProjections, .insertRebuiltGroups], neverReached: [.replaceGroups])
        static let secondGroupRewrite = FaultPoint(
            name: "the second replaceGroups (a few groups differ: only they are rewritten)",
            fault: PlannedFault(operation: .replaceGroups, role: .main, trigger: .afterCalls(1)),
            damage: .someGroups,
            writesBeforeFault: [.replaceGroups], neverReached: [.clearProjections, .insertRebuiltGroups])
        static let secondSnapshotWrite = FaultPoint(
            name: "the second storeGroupSnapshots (the index written whole: every group's snapshot folded)",
            fault: PlannedFault(operation: .storeGroupSnapshots, role: .main, trigger: .afterCalls(1)),
            damage: .everyGroup,
            writesBeforeFault: [.clearProjections, .insertRebuiltGroups, .storeGroupSnapshots], neverReached: [.replaceGroups])
        static let secondSnapshotRewrite = FaultPoint(
            name: "the second storeGroupSnapshots (a few groups rewritten: their snapshots folded)",
            fault: PlannedFault(operation: .storeGroupSnapshots, role: .main, trigger: .afterCalls(1)),
            damage: .someGroups,
            writesBeforeFault: [.replaceGroups, .storeGroupSnapshots], neverReached: [.clearProjections, .insertRebuiltGroups])
        static let eventsForFactsRead = FaultPoint(
            name: "the third eventsForFacts (reader) of the derive stage",
            fault: PlannedFault(operation: .eventsForFacts, role: .reader, trigger: .afterCalls(2)), deletesFacts: true,
            writesBeforeFault: [.storeFacts], neverReached: [.clearProjections, .forEachFactsBatchInRange, .forEachFactsBatchOfWholeLog])
        static let storeFactsWrite = FaultPoint(
            name: "the 101st storeFacts (main store) of the derive stage",
            fault: PlannedFault(operation: .storeFacts, role: .main, trigger: .afterCalls(100)), deletesFacts: true,
            writesBeforeFault: [.storeFacts], neverReached: [.clearProjections, .forEachFactsBatchInRange, .forEachFactsBatchOfWholeLog])
    }

    @Test("a failing identity half stops the rebuild with its fault and changes nothing",
          arguments: [FaultPoint.laterIdentityHalf, .earlierIdentityHalf])
    func identityHalfFails(point: FaultPoint) throws {
        try Self.checkRebuildFails(at: point)
    }

    @Test("a failing group write rolls the rebuilt index back", arguments: [FaultPoint.secondGroupWrite, .secondGroupRewrite])
    func groupWriteFails(point: FaultPoint) throws {
        try Self.checkRebuildFails(at: point)
    }

    @Test("a failing snapshot write rolls the rebuilt index and snapshots back", arguments: [FaultPoint.secondSnapshotWrite, .secondSnapshotRewrite])
    func snapshotWriteFails(point: FaultPoint) throws {
        try Self.checkRebuildFails(at: point)
    }

    @Test("a failing derive stage rolls the derived facts back", arguments: [FaultPoint.eventsForFactsRead, .storeFactsWrite])
    func deriveFails(point: FaultPoint) throws {
        try Self.checkRebuildFails(at: point)
    }

    /// How ``checkRebuildFails(at:)`` damages the stored index before the rebuild.
    enum IndexDamage: Sendable, Equatable {
        /// Intact: the rebuild compares and writes nothing.
        case none
        /// Every group differs: the rebuild empties the index and writes every group.
        case everyGroup
        /// Sixteen groups are missing: the rebuild rewrites them, a few per call.
        case someGroups
    }

    // MARK: The check

    /// Rebuilds a fresh ledger through a ``FailingStore`` that injects `point`'s fault, and checks
    /// that exactly that fault comes out, in time, with the ledger unchanged; then that a rebuild
    /// through the real store succeeds and leaves nothing stale.
    private static func checkRebuildFails(at point: FaultPoint) throws {
        let test = try ledgerWithManyEvents()
        if point.deletesFacts {
            let sql = try RawSQLite(path: test.path)
            try sql.execute("DELETE FROM event_facts WHERE position % 3 = 0")
            sql.close()
            #expect(try test.store.positionsWithoutFacts().count > 300, "several derive batches of 64")
        }
        if point.damage != .none {
            // Every group loses its non-key rows, or every 25th group loses all of its rows.
            let sql = try RawSQLite(path: test.path)
            try sql.execute(point.damage == .everyGroup ? "DELETE FROM group_index WHERE role != 'key'"
                : "DELETE FROM group_index WHERE group_key IN (SELECT DISTINCT group_key FROM group_index ORDER BY group_key LIMIT 16)")
            sql.close()
        }
        let before = try StoredLedger(test)
        try #require(before.groupIndex.count >= 400 && before.facts.count >= 1_000 && before.snapshots.count >= 50
                     && before.head.count == 1)

        let plan = FaultPlan()
        plan.arm(point.fault)
        var rebuilder = ProjectionRebuilder(store: FailingStore(wrapping: test.store, plan: plan))
        rebuilder.identitySplitMinimum = 2  // any log of 2 events or more is scanned in two halves
        rebuilder.splitsIdentityScan = true  // on any machine, one core included
        rebuilder.batchSize = 64            // several batches per scan
        rebuilder.deriveBatchSize = 64      // several derive batches
        rebuilder.groupsPerWrite = 2        // several group writes
        let configured = rebuilder
        let result = try #require(runWithDeadline(seconds: 30) { try configured.rebuildAll(progress: nil) },
                                  "the rebuild neither returned nor threw within 30 s (a deadlock?)")

        let fault = point.fault
        #expect(throws: fault.error) { _ = try result.get() }
        #expect(plan.fired == [fault])
        switch fault.trigger {
        case .afterCalls(let calls):
            #expect(plan.calls(of: fault.operation, on: fault.role) == calls + 1, "no call after the failing one")
        case .afterBatches(let batches):
            #expect(plan.calls(of: fault.operation, on: fault.role) == 1, "the failed scan is not started again")
            #expect(plan.batches(of: fault.operation, on: fault.role) == batches, "no batch after the fault")
        }
        for write in point.writesBeforeFault {
            let failedCall = write == fault.operation && fault.role == .main ? 1 : 0
            #expect(plan.calls(of: write, on: .main) - failedCall >= 1, "\(write) wrote before the fault: the rollback is tested")
        }
        for operation in point.neverReached {
            let calls = plan.calls(of: operation, on: .main) + plan.calls(of: operation, on: .reader)
            #expect(calls == 0, "\(operation) ran after the failure")
        }

        let after = try StoredLedger(test)
        Self.expectUnchanged("group_index rows", after.groupIndex, before.groupIndex)
        Self.expectUnchanged("event_facts rows", after.facts, before.facts)
        Self.expectUnchanged("group_snapshot rows", after.snapshots, before.snapshots)
        Self.expectUnchanged("the schema (the group-key index)", after.schema, before.schema)
        Self.expectUnchanged("the log's head", after.head, before.head)
        #expect(try test.store.verifyChain().isIntact)

        // The real store is not left in a transaction or otherwise stuck: a rebuild goes through.
        #expect(try test.ledger.rebuildProjections() > 100)
        #expect(try test.ledger.staleProjections().isEmpty)
        #expect(try test.store.positionsWithoutFacts().isEmpty)
        #expect(try test.store.verifyChain().isIntact)
    }

    // MARK: Helpers

    /// The events of 400 generated groups (about 2,500), generated once.
    private static let manyEvents: [NewEvent] = StreamGenerator.stream(seed: 71, groups: 400).events.map {
        ScenarioBuilder.newEvent($0)
    }

    /// A new ledger on disk holding ``manyEvents``, its projections maintained as they were appended.
    private static func ledgerWithManyEvents() throws -> TestLedger {
        let test = try TestLedger()
        let store = test.store
        let maintainer = ProjectionMaintainer(store: store)
        _ = try store.write {
            let result = try store.append(events: manyEvents)
            try maintainer.update(after: result.appended)
            return result
        }
        let events = try store.eventCount()
        try #require(events >= 2_000, "\(events) events")
        try #require(try store.foldedGroups().count >= 400)
        return test
    }

    /// Everything a failed rebuild must leave as it was, read through a connection of its own
    /// (committed data only): the rows of the projection and facts tables, the schema, and the
    /// log's head.
    private struct StoredLedger {
        let groupIndex: TableRows
        let facts: TableRows
        let snapshots: TableRows
        let schema: TableRows
        let head: TableRows

        init(_ test: TestLedger) throws {
            let sql = try RawSQLite(path: test.path, readOnly: true)
            defer { sql.close() }
            groupIndex = try TableRows(sql, "quote(identifier) || ',' || quote(group_key) || ',' || quote(role)",
                                       from: "SELECT * FROM group_index ORDER BY identifier, group_key, role")
            facts = try TableRows(sql, "quote(position) || ',' || quote(facts)", from: "SELECT * FROM event_facts ORDER BY position")
            snapshots = try TableRows(sql, "quote(group_key) || ',' || quote(computed_at) || ',' || quote(valid_until) || ',' || quote(state)",
                                      from: "SELECT * FROM group_snapshot ORDER BY group_key")
            schema = try TableRows(sql, "quote(type) || ',' || quote(name) || ',' || quote(sql)",
                                   from: "SELECT * FROM sqlite_master ORDER BY type, name")
            head = try TableRows(sql, "quote(position) || ',' || quote(hash)",
                                 from: "SELECT position, hash FROM events ORDER BY position DESC LIMIT 1")
        }
    }

    /// Expects `after` to equal `before`; names `what` and the first differing row otherwise.
    private static func expectUnchanged(_ what: String, _ after: TableRows, _ before: TableRows,
                                        sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(after == before, "\(what) changed: \(after.firstDifference(from: before))", sourceLocation: sourceLocation)
    }

    /// The rows of a query as exact text (every column `quote`d), compared whole.
    ///
    /// Not a collection, on purpose: Swift Testing would diff two collections of a few hundred
    /// kilobytes byte by byte to describe a mismatch, which takes minutes.
    private struct TableRows: Equatable, CustomStringConvertible {
        /// Each row's columns, comma-separated.
        let rows: [Substring]
        /// Between rows: ASCII's record separator, which no `quote`d value holds.
        private static let separator: Character = "\u{1E}"

        /// The rows of `select` (already ordered), each as `columns` (an SQL text expression).
        init(_ sql: RawSQLite, _ columns: String, from select: String) throws {
            let text = try sql.scalarBlob("SELECT group_concat(\(columns), char(30)) FROM (\(select))") ?? Data()
            rows = String(decoding: text, as: UTF8.self).split(separator: Self.separator)
        }

        var count: Int { rows.count }
        var description: String { "\(rows.count) rows" }

        /// The first row that differs from `other`'s (for a failure message).
        func firstDifference(from other: TableRows) -> String {
            guard let index = rows.indices.first(where: { $0 < other.rows.count && rows[$0] != other.rows[$0] }) else {
                return "\(count) rows, \(other.count) before"
            }
            return "row \(index + 1): \(rows[index].prefix(300)), before: \(other.rows[index].prefix(300))"
        }
    }

    /// Runs `body` on a thread of its own and waits up to `seconds` for it to return or throw;
    /// `nil` when it did not, so a deadlocked rebuild fails the test instead of hanging the run.
    private static func runWithDeadline<T>(seconds: Double, _ body: @escaping () throws -> T) -> Result<T, any Error>? {
        let run = WatchedRun(body)
        let thread = Thread { run.run() }
        thread.start()
        return run.outcome(within: seconds)
    }

    /// A body run on another thread, and its outcome once it has one.
    ///
    /// `@unchecked Sendable` is safe: `body` is called by the running thread alone (the test's
    /// thread only waits); `result` is written by the running thread before it signals `done`, and
    /// read by the test's thread only after it has seen that signal. When the wait times out the
    /// result is never read (and the running thread keeps `body`, and the store it uses, alive).
    private final class WatchedRun<T>: @unchecked Sendable {
        private let body: () throws -> T
        private var result: Result<T, any Error>?
        private let done = DispatchSemaphore(value: 0)

        init(_ body: @escaping () throws -> T) { self.body = body }

        /// Runs `body` and keeps its outcome (on the running thread).
        func run() {
            result = Result { try body() }
            done.signal()
        }

        /// The outcome, once `run()` has finished within `seconds`.
        func outcome(within seconds: Double) -> Result<T, any Error>? {
            guard done.wait(timeout: .now() + seconds) == .success else { return nil }
            return result
        }
    }
}
