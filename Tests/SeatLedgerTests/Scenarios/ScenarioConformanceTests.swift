import AppStoreModels
import Foundation
import GroupSimulator
import LedgerEvents
import LedgerIntake
import Projections
import SeatLedger
import Testing

/// The simulator's truth model (an independent oracle) against what the ledger projects.
@Suite("Simulator scenarios through the ledger")
struct ScenarioConformanceTests {
    static let names = BuiltInLifecycles.all.map(\.name)

    static func lines(_ ndjson: String) -> [String] {
        ndjson.split(separator: "\n").map(String.init).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }

    static func ingest(_ lines: [String], into ledger: Ledger, origin: EventOrigin = .live) throws -> IngestSummary {
        try ledger.ingest(lines.enumerated().map { InboundMessage(raw: Data($0.element.utf8), source: "scenario:\($0.offset + 1)", origin: origin, acceptsAPIResponses: true) }).summary
    }

    /// Our state in the expected file's form (knownAt is not part of the truth model).
    static func projected(_ ledger: Ledger, like expected: JSONValue) throws -> JSONValue {
        let key = try #require(expected["groupKey"]?.stringValue)
        let asOf = try #require(Timestamp.parse(expected["asOf"]))
        guard case .object(var state) = try ledger.groupState(key, asOf: asOf).json else { return .null }
        state["knownAt"] = .null
        return .object(state)
    }

    @Test("each committed scenario projects exactly its expected state", arguments: names)
    func committedScenario(name: String) throws {
        let directory = TestPaths.repoRoot.appendingPathComponent("Events/scenarios")
        let stream = try String(contentsOf: directory.appendingPathComponent("\(name).ndjson"), encoding: .utf8)
        let expected = try JSONValue.parse(Data(contentsOf: directory.appendingPathComponent("\(name).expected.json")))
        let test = try TestLedger()
        let summary = try Self.ingest(Self.lines(stream), into: test.ledger)
        #expect(summary.quarantined == 0)
        let groups = try #require(expected.arrayValue, "\(name).expected.json is not an array")
        #expect(!groups.isEmpty, "\(name).expected.json expects no group: an empty expectation checks nothing")
        for group in groups {
            let ours = try Self.projected(test.ledger, like: group)
            #expect(ours == group, "\(name) group \(group["groupKey"]?.stringValue ?? "?"):\nours \(ours.canonicalString())\nexpected \(group.canonicalString())")
        }
        #expect(try test.ledger.staleProjections().isEmpty)
    }

    @Test("fault drills (missed, retried, late, reordered) converge to the same state once backfilled",
          arguments: ["guide-10-9-6", "partial-seat-refund-apple", "grace-expired", "developer-unclaim", "full-refund", "resubscribe"])
    func faultDrillsConverge(name: String) throws {
        let scenario = try #require(BuiltInLifecycles.named(name))
        var options = BuiltInLifecycles.options(for: scenario, seed: 7)
        options.faults.drop = .rate(0.35)
        options.faults.duplicate = .rate(0.3)
        options.faults.delay = .rate(0.3)
        options.faults.reorder = .rate(0.5)
        let run = try GroupSimulator(pkiDirectory: TestPaths.pki).run(scenario, options: options)
        let test = try TestLedger()
        _ = try Self.ingest(run.lines, into: test.ledger)
        _ = try Self.ingest(run.historyLines, into: test.ledger, origin: .backfill)
        #expect(!run.expected.isEmpty, "\(name): the simulator expects no group, so the drill would check nothing")
        for group in run.expected {
            #expect(try Self.projected(test.ledger, like: group) == group, "\(name) after backfill")
        }
    }

    @Test("missed notifications, then a backfill: diff --known-at shows exactly what the backfill changed")
    func backfillDiff() throws {
        let scenario = try #require(BuiltInLifecycles.named("guide-10-9-6"))
        let plan = try SimulationPlan(scenario, options: BuiltInLifecycles.options(for: scenario))
        // Drop the DECREASE_QUANTITY notifications and the renewal.
        let dropped = plan.events.filter { $0.label.contains("DECREASE_QUANTITY") || $0.label.hasPrefix("DID_RENEW") }.map(\.index)
        #expect(!dropped.isEmpty)
        var options = BuiltInLifecycles.options(for: scenario)
        options.faults.drop = .targets(indexes: Set(dropped), eventIds: [])
        let run = try GroupSimulator(pkiDirectory: TestPaths.pki).run(scenario, options: options)
        #expect(run.droppedEventIndexes.count == dropped.count)

        let test = try TestLedger()
        let beforeBackfill: EpochMillis = 1_800_000_000_000
        let afterBackfill: EpochMillis = beforeBackfill + 3_600_000
        test.ledger.store.clock = { beforeBackfill }
        _ = try Self.ingest(run.lines, into: test.ledger)
        test.ledger.store.clock = { afterBackfill }
        let backfill = try Self.ingest(run.historyLines, into: test.ledger, origin: .backfill)
        #expect(backfill.appended == dropped.count + run.historyLines.count, "each missed notification appended once, plus the history envelopes")

        let key = try #require(run.expected.first?["groupKey"]?.stringValue)
        let asOf = try #require(Timestamp.parse(run.expected.first?["asOf"]))
        let diff = try test.ledger.diff(key, knownAt: beforeBackfill, afterBackfill, asOf: asOf)
        #expect(diff.hasDifferences)
        #expect(diff.changes.contains { $0.field == "seats.total" && $0.after == 6 })
        #expect(diff.changes.contains { $0.field == "seats.overCapacity" && $0.after == 4 })
        let explained = Set(diff.explainingEvents.filter { $0.origin == "backfill" && !$0.what.contains("→") }.map(\.eventId))
        let droppedIds = Set(dropped.map { plan.events[$0].eventId })
        #expect(explained == droppedIds, "the explaining notifications are exactly the dropped ones")
        #expect(try Self.projected(test.ledger, like: run.expected[0]) == run.expected[0])
    }
}
