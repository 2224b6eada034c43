import AppStoreModels
import Foundation
import SeatLedger
import Testing

/// `events --mentioning X` finds the events that affected what X names through the projections'
/// identities, not only those whose identifiers name X (issue #49): an `UNCLAIM_SEATS` names only
/// seat claim ids, and the seat `REFUND` that caused it names only the purchaser.
@Suite("events --mentioning: events that affected a member or group through the projections' identities")
struct MentioningTests {
    static let group = "2000012000000001"
    static let claimSeatM5 = "7f0bae30bae47fab9544383eccf17a0a42425cd2f13355c51c184335e82839cb"
    static let seatRefund = "24bfabe7-065d-4f2a-8a27-84f439874bd5"
    static let unclaim = "bbf1af93-82f7-4391-a84c-65c9aab6d78e"

    /// A ledger of the sample streams of the seat-refund group and another group where `m5` also has a claim.
    static func ledger() throws -> TestLedger {
        let test = try TestLedger()
        let streams = ["partial-seat-refund-developer", "guide-10-9-6"].map {
            TestPaths.repoRoot.appendingPathComponent("Events/scenarios/\($0).ndjson").path
        }
        let ingest = try CLI.run(["ingest", "--api-responses", "--db", test.path] + streams)
        guard ingest.exitCode == 0 else { throw TestSupportError("ingest failed: \(ingest)") }
        return test
    }

    static func eventIds(_ test: TestLedger, mentioning id: String) throws -> [String] {
        let result = try CLI.run(["events", "--db", test.path, "--mentioning", id, "--json"])
        #expect(result.exitCode == 0, "\(result)")
        return try result.json().arrayValue?.compactMap { $0["eventId"]?.stringValue } ?? []
    }

    @Test("a memberRef finds the UNCLAIM_SEATS that released its claim and the seat REFUND that caused it")
    func memberRef() throws {
        let test = try Self.ledger()
        let found = try Self.eventIds(test, mentioning: "m5")
        #expect(found.contains(Self.claimSeatM5) && found.contains(Self.unclaim) && found.contains(Self.seatRefund), "\(found)")
        // The same through the claim id, and the library call the CLI uses.
        let claim = try Self.eventIds(test, mentioning: "67d24449-9711-4d5e-8026-b897db5f8506")
        #expect(claim.contains(Self.unclaim) && claim.contains(Self.seatRefund), "\(claim)")
        let positions = try test.ledger.positions(affecting: "m5")
        #expect(try test.store.events(at: positions).map(\.eventId) == found)
        // A member whose claim the refund left alone is not affected by it.
        let m1 = try Self.eventIds(test, mentioning: "m1")
        #expect(!m1.isEmpty && !m1.contains(Self.unclaim) && !m1.contains(Self.seatRefund), "\(m1)")
    }

    @Test("a group's key finds every event of the group, the UNCLAIM_SEATS naming only claim ids included")
    func group() throws {
        let test = try Self.ledger()
        let found = try Self.eventIds(test, mentioning: Self.group)
        #expect(found.contains(Self.unclaim) && found.contains(Self.seatRefund), "\(found)")
        // Exactly the events the group's fold reads (its replay's events), in log order.
        let replay = try test.ledger.replay(Self.group, knownAt: nil, now: Timestamp.printableRange.upperBound)
        #expect(Set(found) == Set(replay.compactMap(\.eventId)), "\(found)")
        let positions = try test.ledger.positions(affecting: Self.group)
        #expect(positions == positions.sorted() && Set(positions).count == positions.count)
    }
}
