import AppStoreModels
import Foundation
import GroupSimulator
import Testing

@Suite("Determinism and fault drills")
struct DeterminismAndDrillTests {
    @Test("same seed → same decoded content (signatures aside); another seed → other identifiers")
    func determinism() throws {
        for name in ["developer-claim", "partial-seat-refund-apple"] {
            let a = try SimFixtures.run(name, seed: 7) { $0.faults.duplicate = .rate(0.5); $0.faults.reorder = .rate(0.3) }
            let b = try SimFixtures.run(name, seed: 7) { $0.faults.duplicate = .rate(0.5); $0.faults.reorder = .rate(0.3) }
            #expect(try SemanticView.normalize(ndjson: a.ndjson) == SemanticView.normalize(ndjson: b.ndjson))
            #expect(a.outputOrder == b.outputOrder)
            #expect(a.expectedJSON == b.expectedJSON)
            #expect(a.eventLines != b.eventLines, "ECDSA signatures are randomized; identical bytes would mean a cached stream")
            let c = try SimFixtures.run(name, seed: 8)
            #expect(try SemanticView.normalize(ndjson: c.ndjson) != SemanticView.normalize(ndjson: a.ndjson))
            #expect(c.plan.events.map(\.eventId) != a.plan.events.map(\.eventId))
        }
    }

    @Test("drop removes exactly the listed notifications; the history envelope carries exactly them")
    func dropAndHistory() throws {
        let plain = try SimFixtures.run("apple-member-join")
        let notifications = plain.plan.events.filter { $0.kind == .notification }
        let byIndex = notifications[1].index
        let byUUID = notifications[2].eventId
        let run = try SimFixtures.run("apple-member-join") {
            $0.faults.drop = .targets(indexes: [byIndex], eventIds: [byUUID])
        }
        #expect(run.droppedEventIndexes == [byIndex, notifications[2].index].sorted())
        let kept = Set(run.outputOrder)
        #expect(kept == Set(plain.plan.events.map(\.index)).subtracting(run.droppedEventIndexes))
        #expect(run.lines.count == plain.plan.events.count - 2)
        let carried = try run.historyLines.flatMap { line -> [String] in
            let body = try #require(try JSONValue.parse(line)["apiResponse"]?["body"])
            return try (body["notificationHistory"]?.arrayValue ?? []).map { item in
                let jws = try #require(item["signedPayload"]?.stringValue)
                return try #require(try SimFixtures.verifier.verify(jws).payload["notificationUUID"]?.stringValue)
            }
        }
        #expect(carried.sorted() == [notifications[1].eventId, byUUID].sorted())
        for line in run.lines where line.hasPrefix("{\"signedPayload\"") {
            let uuid = try SimFixtures.uuid(ofLine: line)
            #expect(uuid != byUUID && uuid != notifications[1].eventId)
        }
        // Dropped lines are the same signed payloads the stream would have carried.
        let inner = try #require(try JSONValue.parse(run.historyLines[0])["apiResponse"])
        #expect(inner["endpoint"] == "GetNotificationHistory" && inner["method"] == "POST")
        #expect(inner["body"]?["hasMore"] == false)
    }

    @Test("history pages hold at most 20 items and chain their pagination tokens")
    func historyPaging() throws {
        let scenario = try SimFixtures.builtIn("apple-member-join")
        var options = BuiltInLifecycles.options(for: scenario)
        options.faults.drop = .rate(1.0)
        var history: [String] = []
        var lines = 0
        let summary = try SimFixtures.simulator.stream(scenario, options: options, groups: 9, line: { _ in lines += 1 },
                                                       history: { history.append($0) })
        #expect(summary.dropped == 27 && lines == 18)
        #expect(history.count == 2)
        let pages = try history.map { try #require(try JSONValue.parse($0)["apiResponse"]) }
        #expect(pages[0]["body"]?["notificationHistory"]?.arrayValue?.count == 20)
        #expect(pages[1]["body"]?["notificationHistory"]?.arrayValue?.count == 7)
        #expect(pages[0]["body"]?["hasMore"] == true && pages[1]["body"]?["hasMore"] == false)
        let token = try #require(pages[0]["body"]?["paginationToken"]?.stringValue)
        #expect(pages[1]["path"]?.stringValue == "/inApps/v1/notifications/history?paginationToken=\(token)")
        #expect(pages[1]["body"]?["paginationToken"] == nil)
    }

    @Test("duplicate repeats the byte-identical line right after the original")
    func duplicate() throws {
        let plain = try SimFixtures.run("developer-claim")
        let target = try #require(plain.plan.events.first { $0.kind == .notification })
        let run = try SimFixtures.run("developer-claim") { $0.faults.duplicate = .targets(indexes: [target.index], eventIds: []) }
        #expect(run.lines.count == plain.plan.events.count + 1)
        let position = try #require(run.outputOrder.firstIndex(of: target.index))
        #expect(run.outputOrder[position + 1] == target.index)
        #expect(run.lines[position] == run.lines[position + 1])
        #expect(try SimFixtures.uuid(ofLine: run.lines[position]) == target.eventId)
    }

    @Test("reorder and delay keep the multiset of lines; delay moves to the end")
    func reorderAndDelay() throws {
        let run = try SimFixtures.run("partial-seat-refund-apple") {
            $0.faults.reorder = .rate(0.6)
            $0.faults.delay = .targets(indexes: [0], eventIds: [])
        }
        #expect(run.outputOrder.sorted() == Array(0..<run.plan.events.count))
        #expect(run.lines.sorted() == run.eventLines.sorted())
        #expect(run.outputOrder != Array(0..<run.plan.events.count))
        let delayed = try SimFixtures.run("partial-seat-refund-apple") { $0.faults.delay = .targets(indexes: [0], eventIds: []) }
        #expect(delayed.outputOrder.last == 0)
    }

    @Test("drills refuse API responses, unknown UUIDs and out-of-range indexes")
    func drillErrors() throws {
        let plain = try SimFixtures.run("developer-claim")
        let api = try #require(plain.plan.events.first { $0.kind == .apiResponse })
        #expect(throws: SimulatorError.self) {
            try SimFixtures.run("developer-claim") { $0.faults.drop = .targets(indexes: [api.index], eventIds: []) }
        }
        #expect(throws: SimulatorError.self) {
            try SimFixtures.run("developer-claim") { $0.faults.drop = .targets(indexes: [999], eventIds: []) }
        }
        #expect(throws: SimulatorError.self) {
            try SimFixtures.run("developer-claim") {
                $0.faults.drop = .targets(indexes: [], eventIds: ["00000000-0000-4000-8000-000000000000"])
            }
        }
        #expect(try DrillSelection.parse("0.25") == .rate(0.25))
        #expect(try DrillSelection.parse("1,3") == .targets(indexes: [1, 3], eventIds: []))
        #expect(throws: SimulatorError.self) { try DrillSelection.parse("1.5") }
    }

    @Test("load mode: every group gets its own identifiers")
    func loadIdentifiers() throws {
        let scenario = try SimFixtures.builtIn("guide-10-9-6")
        var expected: [JSONValue] = []
        var uuids: Set<String> = []
        var lines = 0
        _ = try SimFixtures.simulator.stream(scenario, options: BuiltInLifecycles.options(for: scenario), groups: 3, line: { line in
            lines += 1
            if line.hasPrefix("{\"signedPayload\"") { uuids.insert(try #require(try SimFixtures.uuid(ofLine: line))) }
        }, expected: { expected += $0.states })
        #expect(lines == 45 && uuids.count == 9)
        #expect(Set(expected.compactMap { $0["groupKey"]?.stringValue }).count == 3)
    }
}
