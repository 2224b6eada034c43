import AppStoreModels
@testable import EventStore
import Foundation
import LedgerEvents
import LedgerStorage
import Projections
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// A rebuild rewrites only the groups whose stored index rows differ from the recomputation,
/// unless too many do (issue 25: a warm rebuild of an intact ledger writes nothing). Whichever
/// way it goes, the index afterwards is exactly the recomputation.
@Suite("Rebuild rewrites the groups that differ")
struct RebuildRewriteTests {
    typealias B = ScenarioBuilder

    /// A ledger of `groups` purchasers, each with two claims, its index kept by the appends.
    static func ledger(_ directory: TemporaryDirectory, groups: Int) throws -> EventStore {
        var b = B()
        for g in 0..<groups {
            let purchaser = String(2_000_000_000_000_100 + g)
            let time = B.base + EpochMillis(g) * 60_000
            b.notification("SUBSCRIBED", at: time, transaction: B.transaction(
                id: purchaser, original: purchaser, app: String(705_000_000_000_000_100 + g), quantity: 4,
                purchase: time, expires: time + 30 * B.day))
            b.claim("claim-\(g)-a", purchaser: purchaser, at: time + 1_000, memberRef: "ann")
            b.claim("claim-\(g)-b", purchaser: purchaser, at: time + 2_000, memberRef: "bob-\(g)")
        }
        let store = try directory.bareStore("l.sqlite")
        let maintainer = ProjectionMaintainer(store: store)
        let events = b.events.map { ScenarioBuilder.newEvent($0) }
        let keys = Dictionary(uniqueKeysWithValues: events.map { ($0.eventId, $0.identifiers.map(\.value)) })
        _ = try store.write {
            let result = try store.append(events: events)
            try maintainer.update(after: result.appended, eventKeys: keys)
            return result
        }
        return store
    }

    /// Every index row, grouped by key.
    static func index(_ store: EventStore) throws -> [String: Set<GroupIndexRow>] {
        var result: [String: Set<GroupIndexRow>] = [:]
        for row in try store.groupIndexRows(groupKeys: Set(try store.allGroupKeys())) { result[row.groupKey, default: []].insert(row) }
        return result
    }

    /// Rebuilds and returns the counted steps it went through.
    static func rebuild(_ store: EventStore) throws -> Set<String> {
        var steps = Set<String>()
        var rebuilder = ProjectionRebuilder(store: store)
        rebuilder.counted = { steps.insert($0.step) }
        _ = try rebuilder.rebuildAll(progress: nil)
        return steps
    }

    @Test("an intact index is compared and left as it is")
    func intactIndexIsLeft() throws {
        let directory = try TemporaryDirectory(label: "rebuild-intact")
        let store = try Self.ledger(directory, groups: 12)
        let before = try Self.index(store)
        #expect(before.count == 12)
        let changesBefore = try #require(try store.connection.scalarInt("SELECT total_changes()"))
        let steps = try Self.rebuild(store)
        #expect(steps.contains("comparing the group index"))
        #expect(!steps.contains("writing the group index"))
        #expect(try store.connection.scalarInt("SELECT total_changes()") == changesBefore, "nothing was written")
        #expect(try Self.index(store) == before)
    }

    @Test("a few damaged groups (rows missing, a row removed, a group that should not exist) are rewritten, the rest left")
    func damagedGroupsRewritten() throws {
        let directory = try TemporaryDirectory(label: "rebuild-damaged")
        let store = try Self.ledger(directory, groups: 12)
        let before = try Self.index(store)
        let keys = before.keys.sorted()
        let oneRowLess = try #require(before[keys[1]]?.first { $0.role != "key" })
        try store.write {
            try store.replaceGroups(removing: [keys[0]], rows: [])
            try store.replaceGroups(removing: [keys[1]], rows: Array(before[keys[1]]!.subtracting([oneRowLess])))
            try store.replaceGroups(removing: [], rows: [GroupIndexRow(identifier: "ghost", groupKey: "ghost-group", role: "key"),
                                                         GroupIndexRow(identifier: "extra", groupKey: keys[2], role: "alias")])
        }
        #expect(try Self.index(store) != before)
        let steps = try Self.rebuild(store)
        #expect(!steps.contains("writing the group index"), "four of thirteen groups differ: rewritten one by one")
        #expect(try Self.index(store) == before)
    }

    @Test("when most groups differ (here: an emptied index), the whole index is written again", arguments: [true, false])
    func mostlyDifferentRewritesAll(emptied: Bool) throws {
        let directory = try TemporaryDirectory(label: "rebuild-most")
        let store = try Self.ledger(directory, groups: 12)
        let before = try Self.index(store)
        try store.write {
            if emptied {
                try store.clearProjections()
            } else {
                for key in before.keys.sorted().prefix(7) {
                    try store.replaceGroups(removing: [key], rows: [GroupIndexRow(identifier: key, groupKey: key, role: "key")])
                }
            }
        }
        let steps = try Self.rebuild(store)
        #expect(steps.contains("writing the group index"))
        #expect(try Self.index(store) == before)
    }
}

/// What `seatledger rebuild` says it wrote, through the built binary.
@Suite("rebuild reports what it wrote")
struct RebuildReportCLITests {
    @Test("--json and the text line name the groups rewritten and removed, or the index written whole")
    func reportsWrites() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction()))
        func rebuild() throws -> [String: JSONValue] {
            let result = try CLI.run(["rebuild", "--db", test.path, "--json"])
            #expect(result.exitCode == 0, "\(result)")
            return try #require(try result.json().objectValue)
        }
        func damage(_ sql: String) throws {
            let raw = try RawSQLite(path: test.path)
            try raw.execute(sql)
            raw.close()
        }
        let intact = try rebuild()
        #expect(intact["groups"] == 1 && intact["groupsRewritten"] == 0 && intact["groupsRemoved"] == 0)
        #expect(intact["indexWrittenWhole"] == false)
        let text = try CLI.run(["rebuild", "--db", test.path])
        #expect(text.stdout.hasSuffix(" s (index already matched the log; 0 group snapshots folded).\n"), "\(text)")

        try damage("INSERT INTO group_index(identifier, group_key, role) VALUES ('ghost', 'ghost-group', 'key')")
        let ghost = try rebuild()
        #expect(ghost["groupsRewritten"] == 0 && ghost["groupsRemoved"] == 1 && ghost["indexWrittenWhole"] == false, "\(ghost)")

        try damage("DELETE FROM group_index")
        let whole = try rebuild()
        #expect(whole["groups"] == 1 && whole["groupsRewritten"] == 1 && whole["groupsRemoved"] == .null)
        #expect(whole["indexWrittenWhole"] == true)
        #expect(whole["snapshotsWritten"] == 1, "written whole: every group's snapshot is folded again")
        try damage("DELETE FROM group_index")
        let wholeText = try CLI.run(["rebuild", "--db", test.path])
        #expect(wholeText.stdout.hasSuffix(" s (index written whole; 1 group snapshot folded).\n"), "\(wholeText)")
    }

    /// The names of the steps a `rebuild --json` report lists, after checking each step's seconds
    /// (not negative, and together within the command's own total, give or take their rounding).
    private static func stepNames(_ report: [String: JSONValue]) throws -> [String] {
        let steps = try #require(report["steps"]?.arrayValue, "\(report)")
        func number(_ value: JSONValue?) -> Double? {
            switch value {
            case .double(let seconds): seconds
            case .int(let seconds): Double(seconds)
            default: nil
            }
        }
        let seconds = steps.compactMap { number($0.objectValue?["seconds"]) }
        #expect(seconds.count == steps.count && seconds.allSatisfy { $0 >= 0 }, "\(steps)")
        let total = try #require(number(report["seconds"]))
        #expect(seconds.reduce(0, +) <= total + 0.0005 * Double(steps.count), "\(steps) within \(total) s")
        return steps.compactMap { $0.objectValue?["step"]?.stringValue }
    }

    @Test("--json times each step that ran, in order: facts only when some were missing, the index written or compared")
    func timesSteps() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction()))
        func rebuild() throws -> [String] {
            let result = try CLI.run(["rebuild", "--db", test.path, "--json"])
            #expect(result.exitCode == 0, "\(result)")
            return try Self.stepNames(try #require(try result.json().objectValue))
        }
        func damage(_ sql: String) throws {
            let raw = try RawSQLite(path: test.path)
            try raw.execute(sql)
            raw.close()
        }
        #expect(try rebuild() == ["resolving identities", "comparing the group index", "folding group snapshots", "committing"])
        try damage("DELETE FROM group_index")
        #expect(try rebuild() == ["resolving identities", "comparing the group index", "writing the group index",
                                  "folding group snapshots", "committing"])
        try damage("DELETE FROM event_facts; DELETE FROM group_index")
        #expect(try rebuild() == ["deriving facts", "resolving identities", "comparing the group index", "writing the group index",
                                  "folding group snapshots", "committing"])
    }
}
