import AppStoreModels
import Foundation
import JWSSigning
import LedgerConcurrency
import Synchronization

/// A scenario run up to (but not including) signing: its events, step times and truth model.
///
/// Cheap to build (no signatures), so tests and tools can ask for expected states at any time.
public struct SimulationPlan: Sendable {
    public let scenario: Scenario
    public let options: SimulationOptions
    /// The group's index in a load run (0 for a single run); identifiers depend on it.
    public let groupIndex: Int
    /// Events in scenario order, before fault drills.
    public let events: [PlannedEvent]
    /// The resolved (nominal) time of each step.
    public let stepTimes: [EpochMillis]
    /// When the expected state is evaluated (the scenario's `evaluateAt`, else the last event).
    public let evaluationTime: EpochMillis
    /// The scenario start.
    public let start: EpochMillis
    let truth: TruthLog

    /// Builds the plan for one group.
    public init(_ scenario: Scenario, options: SimulationOptions = SimulationOptions(), groupIndex: Int = 0) throws(SimulatorError) {
        let engine = ScenarioEngine(scenario: scenario, options: options, groupIndex: groupIndex)
        let evaluation = try engine.run()
        self.scenario = scenario
        self.options = options
        self.groupIndex = groupIndex
        self.events = engine.events
        self.stepTimes = engine.stepTimes
        self.evaluationTime = evaluation
        self.start = engine.start
        self.truth = engine.truth
    }

    /// The expected `group show --json` objects (one per group, sorted by group key) as of `asOf`
    /// (default: ``evaluationTime``), from the simulator's own truth model.
    public func expectedStates(at asOf: EpochMillis? = nil) -> [JSONValue] {
        TruthEvaluator(log: truth, asOf: asOf ?? evaluationTime).groups()
    }
}

/// The result of a single (non-load) run.
public struct SimulationRun: Sendable {
    public let plan: SimulationPlan
    /// One NDJSON line per undrilled event, by event index (notifications signed).
    public let eventLines: [String]
    /// The output stream after fault drills: event indexes in order (duplicates repeat).
    public let outputOrder: [Int]
    /// Event indexes the drop drill removed.
    public let droppedEventIndexes: [Int]
    /// Get Notification History `apiResponse` lines carrying the dropped notifications.
    public let historyLines: [String]
    /// The expected states at the plan's evaluation time.
    public let expected: [JSONValue]

    /// The output stream's lines.
    public var lines: [String] { outputOrder.map { eventLines[$0] } }
    /// The output stream as NDJSON text.
    public var ndjson: String { lines.map { $0 + "\n" }.joined() }
    /// The expected-state file text: a pretty JSON array and a newline.
    public var expectedJSON: String { ExpectedFile.text(expected) }
}

/// Rendering of `--expect` files.
public enum ExpectedFile {
    /// A pretty JSON array of `states` (sorted keys, two-space indent) with a trailing newline.
    public static func text(_ states: [JSONValue]) -> String { JSONValue.array(states).prettyString() + "\n" }

    /// One array element as it appears inside the pretty array (every line indented two spaces).
    public static func element(_ state: JSONValue) -> String {
        state.prettyString().split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
    }
}

/// One group's expected states, with the text each takes as an element of the `--expect` array.
public struct GroupExpectation: Sendable {
    public let states: [JSONValue]
    /// ``ExpectedFile/element(_:)`` of each state.
    public let arrayElements: [String]

    init(states: [JSONValue]) {
        self.states = states
        arrayElements = states.map(ExpectedFile.element)
    }
}

/// Totals of a streamed run.
public struct StreamSummary: Sendable {
    public var groups = 0
    public var lines = 0
    public var notifications = 0
    public var dropped = 0
    public var historyPages = 0
    public var seconds = 0.0
}

/// Signs and emits scenario streams: App Store notifications as `{"signedPayload": …}` lines and
/// API responses as `{"apiResponse": …}` lines.
///
/// ```swift
/// let simulator = try GroupSimulator(pkiDirectory: repo.appendingPathComponent("Tools/pki"))
/// let run = try simulator.run(BuiltInLifecycles.named("guide-10-9-6")!)
/// run.ndjson          // the stream
/// run.expectedJSON    // the expected `group show --json` array
/// ```
public final class GroupSimulator: Sendable {
    let signer: JWSSigner

    /// Uses `leaf.key`, `leaf.pem`, `intermediate.pem` and `root.pem` from a test-PKI directory.
    public convenience init(pkiDirectory: URL) throws {
        do {
            self.init(signer: try JWSSigner.loadTestPKI(directory: pkiDirectory))
        } catch {
            throw SimulatorError("cannot load the signing PKI from \(pkiDirectory.path) (need leaf.key, leaf.pem, intermediate.pem, root.pem): \(error)")
        }
    }

    /// Signs with `signer` (its key and `x5c` chain).
    public init(signer: JWSSigner) {
        self.signer = signer
    }

    /// Signs one event into its NDJSON line (no newline).
    func render(_ event: PlannedEvent) throws -> String {
        switch event.body {
        case .apiResponse(let line):
            return line
        case .notification(let draft):
            var payload = draft.payload
            if var data = draft.data {
                if let tx = draft.transaction { data["signedTransactionInfo"] = .string(try signer.sign(payload: tx)) }
                if let renewal = draft.renewal { data["signedRenewalInfo"] = .string(try signer.sign(payload: renewal)) }
                payload["data"] = .object(data)
            }
            return "{\"signedPayload\":\"" + (try signer.sign(payload: .object(payload))) + "\"}"
        }
    }

    /// Renders many events on all cores, keeping their order.
    func renderAll(_ events: [PlannedEvent]) throws -> [String] {
        // Chunks of 32 events, so a worker's claim is not per event; results come back in order.
        let chunk = 32
        let ranges = stride(from: 0, to: events.count, by: chunk).map { $0..<min(events.count, $0 + chunk) }
        let rendered = parallelMap(ranges) { range in
            Result { () throws -> [String] in try range.map { try render(events[$0]) } }
        }
        var lines: [String] = []
        lines.reserveCapacity(events.count)
        for result in rendered { lines.append(contentsOf: try result.get()) }
        return lines
    }

    /// Runs one scenario (group index 0): signed lines, fault drills, history pages and expected states.
    public func run(_ scenario: Scenario, options: SimulationOptions = SimulationOptions()) throws -> SimulationRun {
        let plan = try SimulationPlan(scenario, options: options)
        let lines = try renderAll(plan.events)
        let outcome = try options.faults.apply(to: plan.events, seed: options.seed, groupIndex: 0)
        try checkAllMatched(options.faults, matched: outcome.matchedIds)
        var history: [String] = []
        let pager = HistoryPager(startDate: plan.start, queryTime: plan.evaluationTime, seed: options.seed,
                                 accelerated: options.accelerated) { history.append($0) }
        for index in outcome.dropped {
            try pager.add(signedPayload: Self.signedPayload(of: lines[index]), signedDate: plan.events[index].occurredAt)
        }
        try pager.finish()
        return SimulationRun(plan: plan, eventLines: lines, outputOrder: outcome.order, droppedEventIndexes: outcome.dropped,
                             historyLines: history, expected: plan.expectedStates())
    }

    /// Streams `groups` copies of a scenario (each with its own identifiers), in constant memory.
    ///
    /// - Parameters:
    ///   - line: receives each output line (no newline), in order.
    ///   - expected: receives each group's expected states, in group order (computed on all cores,
    ///     with their pretty `--expect` array-element text).
    ///   - history: receives Get Notification History lines for dropped notifications (if non-nil).
    public func stream(_ scenario: Scenario, options: SimulationOptions = SimulationOptions(), groups: Int,
                       line: (String) throws -> Void, expected: ((GroupExpectation) throws -> Void)? = nil,
                       history: ((String) throws -> Void)? = nil) throws -> StreamSummary {
        let began = Date()
        var summary = StreamSummary()
        var pager: HistoryPager?
        var matched: Set<String> = []
        var group = 0
        let first = try SimulationPlan(scenario, options: options, groupIndex: 0)
        let groupsPerBatch = max(1, 4096 / max(1, first.events.count))
        while group < groups {
            let batch = min(groupsPerBatch, groups - group)
            let planned = try planAll(scenario, options: options, groups: group..<(group + batch), expectations: expected != nil)
            let plans = planned.map(\.plan)
            group += batch
            let rendered = try renderAll(plans.flatMap(\.events))
            var offset = 0
            for plan in plans {
                let outcome = try options.faults.apply(to: plan.events, seed: options.seed, groupIndex: plan.groupIndex)
                matched.formUnion(outcome.matchedIds)
                for index in outcome.order { try line(rendered[offset + index]) }
                summary.lines += outcome.order.count
                summary.notifications += plan.events.filter { $0.kind == .notification }.count
                summary.dropped += outcome.dropped.count
                if let history {
                    if pager == nil {
                        pager = HistoryPager(startDate: plan.start, queryTime: plan.evaluationTime, seed: options.seed,
                                             accelerated: options.accelerated) { text in
                            summary.historyPages += 1
                            try history(text)
                        }
                    }
                    for index in outcome.dropped {
                        try pager!.add(signedPayload: Self.signedPayload(of: rendered[offset + index]),
                                       signedDate: plan.events[index].occurredAt)
                    }
                }
                if let expected, let expectation = planned[plan.groupIndex - planned[0].plan.groupIndex].expectation {
                    try expected(expectation)
                }
                offset += plan.events.count
                summary.groups += 1
            }
        }
        try pager?.finish()
        try checkAllMatched(options.faults, matched: matched)
        summary.seconds = Date().timeIntervalSince(began)
        return summary
    }

    /// Plans groups on all cores (planning is independent per group).
    private func planAll(_ scenario: Scenario, options: SimulationOptions, groups: Range<Int>,
                         expectations: Bool) throws -> [(plan: SimulationPlan, expectation: GroupExpectation?)] {
        typealias Planned = (plan: SimulationPlan, expectation: GroupExpectation?)
        let results = Mutex<[Int: Result<Planned, SimulatorError>]>([:])
        let indexes = Array(groups)
        DispatchQueue.concurrentPerform(iterations: indexes.count) { i in
            let result = Result { () throws(SimulatorError) -> Planned in
                let plan = try SimulationPlan(scenario, options: options, groupIndex: indexes[i])
                return (plan, expectations ? GroupExpectation(states: plan.expectedStates()) : nil)
            }
            results.withLock { $0[i] = result }
        }
        return try results.withLock { all in try indexes.indices.map { try all[$0]!.get() } }
    }

    private func checkAllMatched(_ faults: FaultDrills, matched: Set<String>) throws {
        for (name, selection) in [("drop", faults.drop), ("duplicate", faults.duplicate), ("delay", faults.delay), ("reorder", faults.reorder)] {
            if case .targets(_, let ids) = selection, let missing = ids.subtracting(matched).sorted().first {
                throw SimulatorError("--\(name): no notification has notificationUUID \(missing) (see --list-events)")
            }
        }
    }

    /// The JWS inside a `{"signedPayload":"…"}` line.
    static func signedPayload(of line: String) throws -> String {
        guard let value = try? JSONValue.parse(line), let jws = value["signedPayload"]?.stringValue else {
            throw SimulatorError("internal: not a notification line")
        }
        return jws
    }
}
