import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import LedgerStoreConformance
import Testing

/// The storage policy written once (``AppendPlan``, ``QuarantinePlan``, ``ChainContinuity``,
/// ``ClaimResumption``), checked as pure code, with no engine.
@Suite("Storage policy (pure)")
struct StoragePolicyTests {
    static let head: (position: Int64, hash: Data) = (7, Data(repeating: 0x42, count: 32))

    @Test("an append plan numbers new events after the head, chains them, and marks stored and repeated ids duplicates")
    func appendPlan() {
        let events = [TestData.apiEvent(1), TestData.apiEvent(2), TestData.apiEvent(1, source: "again"), TestData.apiEvent(3)]
        let plan = AppendPlan(events: events, head: Self.head, recordedAt: 99, stored: [Array("api-2".utf8): 4])
        #expect(plan.outcomes == [.appended(position: 8), .duplicate(existingPosition: 4), .duplicate(existingPosition: 8),
                                  .appended(position: 9)])
        #expect(plan.appended.map(\.eventId) == ["api-1", "api-3"])
        #expect(plan.appendedSources.map(\.eventId) == ["api-1", "api-3"])
        #expect(plan.arrivals.map(\.duplicate) == [false, true, true, false])
        #expect(plan.arrivals.map(\.source) == events.map(\.source))
        #expect(plan.previousHash == Self.head.hash)
        var previous = Self.head.hash
        for event in plan.appended {
            #expect(event.recordedAt == 99)
            let row = EventChain.Row(position: event.position, eventId: event.eventId, kind: event.kind.rawValue, type: event.type,
                                     subtype: event.subtype, status: event.status, occurredAt: event.occurredAt,
                                     recordedAt: 99, source: event.source, origin: event.origin.rawValue, raw: event.raw)
            previous = EventChain.hash(previous: previous, row: row)
            #expect(event.hash == previous)
        }
        #expect(plan.head.position == 9)
        #expect(plan.head.hash == previous)
    }

    @Test("ids are compared by bytes: a canonically equivalent spelling is another event")
    func appendPlanComparesBytes() {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)  // Swift's String equality would merge them
        let events = [TestData.apiEvent(1, id: composed), TestData.apiEvent(2, id: decomposed)]
        let plan = AppendPlan(events: events, head: (0, EventChain.genesis), recordedAt: 1, stored: [:])
        #expect(plan.outcomes == [.appended(position: 1), .appended(position: 2)])
        #expect(AppendPlan.distinctIds(of: events + [TestData.apiEvent(3, id: composed)]).count == 2)
        let stored = AppendPlan(events: [TestData.apiEvent(2, id: decomposed)], head: (2, EventChain.genesis), recordedAt: 1,
                                stored: [Array(composed.utf8): 1])
        #expect(stored.outcomes == [.appended(position: 3)])
    }

    @Test("an all-duplicate batch leaves the head where it was")
    func allDuplicates() {
        let plan = AppendPlan(events: [TestData.apiEvent(1)], head: Self.head, recordedAt: 1, stored: [Array("api-1".utf8): 3])
        #expect(plan.appended.isEmpty)
        #expect(plan.head.position == Self.head.position)
        #expect(plan.head.hash == Self.head.hash)
    }

    @Test("a quarantine plan keeps the same bytes for the same reason once, reuses open rows, and names those open before")
    func quarantinePlan() {
        let rejections = [TestData.rejection("a"), TestData.rejection("b"), TestData.rejection("a"),
                          TestData.rejection("a", code: "bad_json"), TestData.rejection("c")]
        let digests = QuarantinePlan.digests(of: rejections)
        let open: [QuarantinePlan.Key: Int64] = [QuarantinePlan.Key(digest: digests[4], errorCode: "bad_signature"): 5,
                    QuarantinePlan.Key(digest: digests[1], errorCode: "bad_json"): 6]  // another reason: not reused
        let plan = QuarantinePlan(rejections: rejections, open: open)
        #expect(plan.new.map(\.item.reason) == ["bad_signature: a", "bad_signature: b", "bad_json: a"])
        #expect(plan.new.map(\.digest) == [digests[0], digests[1], digests[3]])
        let (ids, earlier) = plan.quarantineIds(newIds: [10, 11, 12])
        #expect(ids == [10, 11, 10, 12, 5])
        #expect(earlier == [5])
    }

    @Test("copy continuity refuses a gap, a foreign previous hash and a hash that does not match its contents",
          arguments: ["gap", "previous", "contents", "none"])
    func continuity(_ fault: String) throws {
        let plan = AppendPlan(events: [TestData.apiEvent(1), TestData.apiEvent(2)], head: (0, EventChain.genesis),
                              recordedAt: 5, stored: [:])
        var previous = EventChain.genesis
        var records = plan.appended.map { event in
            defer { previous = event.hash }
            return StoredEventRecord(event: event, previousHash: previous, decodedText: nil, verificationText: nil,
                                     decoderVersion: nil, identifiers: [], facts: nil)
        }
        let second = records[1].event
        func event(position: Int64 = second.position, raw: Data = second.raw) -> LedgerEvent {
            LedgerEvent(position: position, eventId: second.eventId, kind: second.kind, type: second.type, subtype: second.subtype,
                        status: second.status, occurredAt: second.occurredAt, recordedAt: second.recordedAt, source: second.source,
                        origin: second.origin, raw: raw, decoded: .null, verification: [], hash: second.hash)
        }
        let expected: String?
        switch fault {
        case "gap":
            records[1] = StoredEventRecord(event: event(position: 3), previousHash: records[1].previousHash, decodedText: nil,
                                           verificationText: nil, decoderVersion: nil, identifiers: [], facts: nil)
            expected = "the destination's next position is 2"
        case "previous":
            records[1] = StoredEventRecord(event: second, previousHash: EventChain.genesis, decodedText: nil,
                                           verificationText: nil, decoderVersion: nil, identifiers: [], facts: nil)
            expected = "its previous hash does not match the destination's head"
        case "contents":
            records[1] = StoredEventRecord(event: event(raw: Data("edited".utf8)), previousHash: records[1].previousHash,
                                           decodedText: nil, verificationText: nil, decoderVersion: nil, identifiers: [], facts: nil)
            expected = "its hash does not match its contents"
        default:
            expected = nil
        }
        do {
            let head = try ChainContinuity.check(records, after: (0, EventChain.genesis), location: "dest")
            #expect(expected == nil, "accepted a record with \(fault)")
            #expect(head.position == 2)
            #expect(head.hash == plan.head.hash)
        } catch {
            #expect(error.position == records[1].event.position)
            #expect(error.problem == expected)
            #expect(error.description.hasPrefix("dest: refusing event at position"))
        }
    }

    @Test("a claim resumes the oldest pending request of the same member: by member ref, else app transaction, else anonymous")
    func claimResumption() {
        func request(_ id: String, member: String?, app: String?, state: String = ClaimRequestRecord.pending) -> ClaimRequestRecord {
            ClaimRequestRecord(requestIdentifier: id, originalTransactionId: "1000", memberRef: member, appTransactionId: app,
                               state: state, createdAt: 1, updatedAt: 1, attempts: 0, seatClaimId: nil, lastStatus: nil, lastError: nil)
        }
        let pending = [request("claimed-m1", member: "m1", app: nil, state: ClaimRequestRecord.claimed),
                       request("m1-old", member: "m1", app: "a1"), request("m1-new", member: "m1", app: nil),
                       request("a1", member: nil, app: "a1"), request("anon", member: nil, app: nil)]
        #expect(ClaimResumption.resumable(among: pending, memberRef: "m1", appTransactionId: nil)?.requestIdentifier == "m1-old")
        #expect(ClaimResumption.resumable(among: pending, memberRef: "m2", appTransactionId: "a1") == nil)
        #expect(ClaimResumption.resumable(among: pending, memberRef: nil, appTransactionId: "a1")?.requestIdentifier == "a1")
        #expect(ClaimResumption.resumable(among: pending, memberRef: nil, appTransactionId: nil)?.requestIdentifier == "anon")
        #expect(ClaimResumption.resumable(among: pending, memberRef: "caf\u{E9}", appTransactionId: nil) == nil)
        let spelled = [request("decomposed", member: "cafe\u{301}", app: nil)]
        #expect(ClaimResumption.resumable(among: spelled, memberRef: "caf\u{E9}", appTransactionId: nil) == nil,
                "member refs compare by bytes, as the databases do")
    }
}
