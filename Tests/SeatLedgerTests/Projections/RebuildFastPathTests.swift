import AppStoreModels
import Foundation
import GroupSimulator
import LedgerEvents
@testable import Projections
import Testing

/// The shortcuts a whole-ledger rebuild takes must give exactly what the general code gives:
/// identifiers read in place from encoded facts, boxed (copy-on-write) facts, and snapshot text
/// written without a JSON tree.
@Suite("Rebuild fast paths")
struct RebuildFastPathTests {
    /// The identifiers of an encoded row, read in place; `nil` when the walk refuses the row.
    private static func walkedIdentifiers(_ blob: Data) -> [String]? {
        var identifiers: [String] = []
        let decodes = blob.withUnsafeBytes { raw in
            FactsCodec.forEachIdentifier(in: raw) { identifiers.append(String(decoding: $0, as: UTF8.self)) }
        }
        return decodes ? identifiers : nil
    }

    private static func identifiers(_ facts: EventFacts) -> [String] {
        var result: [String] = []
        facts.forEachIdentifier { result.append($0) }
        return result
    }

    @Test("reading identifiers in place gives the decoded facts' identifiers", arguments: [UInt64(3), 4, 5, 6])
    func identifiersInPlace(seed: UInt64) throws {
        let facts = StreamGenerator.stream(seed: seed, groups: 4).facts
        var mentioned = 0
        for fact in facts {
            let walked = try #require(Self.walkedIdentifiers(FactsCodec.encode(fact)), "\(fact.eventId)")
            #expect(walked.sorted() == Self.identifiers(fact).sorted(), "\(fact.eventId)")
            mentioned += walked.count
        }
        #expect(mentioned > facts.count)  // the streams do mention identifiers
    }

    @Test("the in-place walk refuses exactly the damaged rows that decoding refuses")
    func damagedRowsAgree() throws {
        let facts = StreamGenerator.stream(seed: 7, groups: 3).facts
        var rng = SeededRandom(seed: 77)
        var refused = 0
        var checked = 0
        for fact in facts.prefix(40) {
            let blob = FactsCodec.encode(fact)
            var variants: [Data] = (0..<blob.count).map { blob.prefix($0) }    // every truncation
            for _ in 0..<24 {                                                   // single-byte damage
                var damaged = blob
                let index = Int.random(in: 0..<blob.count, using: &rng)
                damaged[damaged.startIndex + index] = [0, 1, 0x7F, 0x80, 0xFF, 19, 20, UInt8.random(in: 0...255, using: &rng)]
                    .randomElement(using: &rng) ?? 0
                variants.append(damaged)
            }
            for variant in variants {
                let decoded = FactsCodec.decode(variant)
                let walked = Self.walkedIdentifiers(variant)
                #expect((decoded != nil) == (walked != nil), "\(fact.eventId): \(Array(variant))")
                if let decoded, let walked { #expect(walked.sorted() == Self.identifiers(decoded).sorted()) }
                if decoded == nil { refused += 1 }
                checked += 1
            }
        }
        #expect(refused > checked / 4)  // the damage does produce refused rows
    }

    @Test("boxed facts copy on write: a changed copy leaves the original as it was")
    func copyOnWrite() throws {
        let original = try #require(StreamGenerator.stream(seed: 8).facts.first { !$0.transactions.isEmpty })
        var copy = original
        #expect(copy == original && copy.hashValue == original.hashValue)
        copy.transactions[0].quantity = 999
        copy.eventId += "-changed"
        copy.unclaimSeatIds.append("claim-x")
        #expect(original.transactions[0].quantity != 999)
        #expect(!original.eventId.hasSuffix("-changed"))
        #expect(!original.unclaimSeatIds.contains("claim-x"))
        #expect(copy != original)
        // Equal fields in two different boxes are equal and hash alike.
        let rebuilt = try #require(FactsCodec.decode(FactsCodec.encode(original)))
        #expect(rebuilt == original && rebuilt.hashValue == original.hashValue)
        var moved = original
        moved.position += 1
        #expect(moved != original)
    }

    @Test("snapshot text written directly equals the canonical text of the JSON contract", arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func snapshotText(seed: UInt64) {
        let facts = StreamGenerator.stream(seed: seed, groups: 4).facts
        let times = facts.map(\.occurredAt).sorted()
        var compared = 0
        for (_, membership) in GroupIdentityResolver.resolve(facts) {
            let mine = facts.filter { membership.concerns($0) }
            for t in [times[times.count / 3], times[times.count / 2], times[times.count - 1] + 86_400_000] {
                for knownAt in [nil, times[times.count / 2]] {
                    let state = GroupProjection.project(membership, facts: mine, asOf: t, knownAt: knownAt)
                    #expect(state.canonicalJSONText() == state.json.canonicalString(), "\(membership.groupKey) at \(t)")
                    compared += 1
                }
            }
        }
        #expect(compared >= 24)
    }

    @Test("snapshot text: drift, Apple's view, nulls and strings that need escaping")
    func snapshotTextEdgeCases() {
        let member = MemberState(role: .claim, originalTransactionId: nil, appTransactionId: "a\"b\\c",
                                 seatClaimId: "claim\n\t\u{1}é", memberRef: "ref/ü", hasAccess: false, accessSince: nil,
                                 accessUntil: 1_700_000_000_000,
                                 revocation: Revocation(reason: RevocationReason(rawValue: "SOMETHING_NEW"), at: 1_700_000_000_000,
                                                        eventId: "e1"),
                                 evidence: ["e1"])
        var seats = SeatCounts()
        seats.total = 10
        seats.available = nil
        seats.overCapacity = 4
        let state = GroupState(
            groupKey: "2000000000000001", purchaserOriginalTransactionId: nil, groupIds: ["g2", "g1"], productId: nil,
            invitationManagement: InvitationManagement(rawValue: "SOMETHING_ELSE"), status: .gracePeriod, asOf: -1,
            knownAt: 0, seats: seats, members: [member, member],
            apple: AppleSeatView(totalSeatCount: nil, availableSeatCount: 0, assignedSeatClaimIds: [], observedAt: 5, eventId: "e2"),
            drift: [Drift(field: "total", ours: .null, apple: .int(10)),
                    Drift(field: "assignedSeatClaimIds", ours: .array(["x", "y"]), apple: .object(["z": .bool(true), "a": .double(1.5)]))],
            periodEnd: nil)
        #expect(state.canonicalJSONText() == state.json.canonicalString())
        var bare = state
        bare.apple = nil
        bare.drift = []
        bare.members = []
        #expect(bare.canonicalJSONText() == bare.json.canonicalString())
    }

    @Test("envelope paths split as bytes give what String.split gave", arguments: [
        "/groups/v1/transactions/2000000000000001/seats",
        "/groups/v1/transactions/2000000000000001/seats/claim-1/associate",
        "/groups/v1/transactions/2000000000000001/seats?limit=5&x=/y",
        "//groups//v1/currentGroups/c-9/", "groups", "", "/", "/a?", "/é/ü-ß/名前?q=1", "/trailing/",
    ])
    func pathSegments(path: String) {
        // The previous implementation, kept here as the reference.
        let withoutQuery = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        let reference = withoutQuery.split(separator: "/").map(String.init)
        #expect(APIResponseEnvelope.segments(ofPath: path) == reference)
    }

    @Test("a path that starts with its query has no segments (String.split used to drop the empty path before it)")
    func pathStartingWithQuery() {
        #expect(APIResponseEnvelope.segments(ofPath: "?a=/b").isEmpty)
        #expect(APIResponseEnvelope.seatPathTransactionId(in: APIResponseEnvelope.segments(ofPath: "?/groups/transactions/1/seats")) == nil)
    }

    @Test("timestamps parse the same with and without surrounding blanks")
    func timestampBlanks() {
        for text in ["2026-11-02T10:00:00.000Z", "1793613600000", "2026-11-02T12:00:00+02:00"] {
            #expect(Timestamp.parse(text) == 1_793_613_600_000)
            #expect(Timestamp.parse(" \(text)\t") == 1_793_613_600_000)
            #expect(Timestamp.parse("\t\(text)") == 1_793_613_600_000)
            #expect(Timestamp.parse("\u{00A0}\(text)\u{2003}") == 1_793_613_600_000, "Unicode space separators are blanks too")
        }
        #expect(Timestamp.parse("") == nil && Timestamp.parse(" ") == nil && Timestamp.parse("2026-13-01") == nil)
    }
}
