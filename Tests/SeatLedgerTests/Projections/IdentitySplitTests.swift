import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
@testable import Projections
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// A rebuild gathers the identity evidence of the two halves of a large log on two threads and
/// joins them: the join must give exactly what adding every event in log order gives.
@Suite("Identity evidence of two halves of the log")
struct IdentitySplitTests {
    private static func groups(_ evidence: IdentityEvidence<String>) -> [String: GroupMembership] {
        evidence.groups(placeholderGroupId: SandboxPlaceholder.groupId, placeholderMember: SandboxPlaceholder.memberAppTransactionId,
                        unlinkedKey: GroupIdentityResolver.unlinkedKey(for:))
            .mapValues { GroupMembership($0) { $0 } }
    }

    private static func evidence(_ facts: ArraySlice<EventFacts>) -> IdentityEvidence<String> {
        var evidence = IdentityEvidence<String>()
        for fact in facts { evidence.add(fact) { $0 } }
        return evidence
    }

    @Test("the earlier half's evidence joined with the later half's equals the whole log's, at every split",
          arguments: [UInt64(61), 62, 63, 64])
    func joinEqualsWhole(seed: UInt64) {
        let facts = StreamGenerator.stream(seed: seed, groups: 5).facts.sorted { $0.position < $1.position }
        let expected = Self.groups(Self.evidence(facts[...]))
        #expect(expected.count >= 5)
        for split in 0...facts.count {
            var joined = Self.evidence(facts[..<split])
            joined.absorb(Self.evidence(facts[split...])) { $0 }
            #expect(Self.groups(joined) == expected, "split at \(split)")
        }
    }

    @Test("where a later event overwrites (a claim bound to another purchaser), the later half wins as in log order")
    func laterHalfOverwrites() {
        var b = ScenarioBuilder()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: ScenarioBuilder.t(0),
                       transaction: ScenarioBuilder.transaction(id: "2000000000000001", original: "2000000000000001", app: "704000000000000001",
                                                                quantity: 5, purchase: ScenarioBuilder.t(0), expires: ScenarioBuilder.days(30)))
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: ScenarioBuilder.t(1),
                       transaction: ScenarioBuilder.transaction(id: "2000000000000002", original: "2000000000000002", app: "704000000000000002",
                                                                quantity: 5, purchase: ScenarioBuilder.t(1), expires: ScenarioBuilder.days(30)))
        b.claim("c-1", purchaser: "2000000000000001", at: ScenarioBuilder.t(2))
        b.claim("c-1", purchaser: "2000000000000002", at: ScenarioBuilder.t(3))
        let facts = b.facts
        let whole = Self.groups(Self.evidence(facts[...]))
        #expect(whole["2000000000000002"]?.seatClaimIds == ["c-1"])
        #expect(whole["2000000000000001"]?.seatClaimIds == [])
        var joined = Self.evidence(facts[..<3])
        joined.absorb(Self.evidence(facts[3...])) { $0 }
        #expect(Self.groups(joined) == whole)
    }

    @Test("a transaction id that a later event gives another original transaction: the later half wins, as in log order")
    func laterHalfRepointsATransaction() {
        var b = ScenarioBuilder()
        for (index, otid) in ["2000000000000001", "2000000000000002"].enumerated() {
            b.notification("SUBSCRIBED", "INITIAL_BUY", at: ScenarioBuilder.t(Double(index)),
                           transaction: ScenarioBuilder.transaction(id: otid, original: otid, quantity: 5, purchase: ScenarioBuilder.t(0),
                                                                    expires: ScenarioBuilder.days(30)))
        }
        for (index, otid) in ["2000000000000001", "2000000000000002"].enumerated() {
            b.notification("DID_RENEW", at: ScenarioBuilder.t(Double(10 + index)),
                           transaction: ScenarioBuilder.transaction(id: "t-renewal", original: otid, quantity: 5,
                                                                    purchase: ScenarioBuilder.t(10), expires: ScenarioBuilder.days(60)))
        }
        let facts = b.facts
        let whole = Self.groups(Self.evidence(facts[...]))
        #expect(whole["2000000000000002"]?.aliases.contains("t-renewal") == true)
        #expect(whole["2000000000000001"]?.aliases.contains("t-renewal") == false)
        var joined = Self.evidence(facts[..<3])
        joined.absorb(Self.evidence(facts[3...])) { $0 }
        #expect(Self.groups(joined) == whole)
    }

    @Test("a table joined into another maps every identifier to the same string, new ones after the old")
    func tablesJoin() {
        var first = IdentifierTable(minimumCapacity: 4)
        var second = IdentifierTable(minimumCapacity: 4)
        for index in 0..<3_000 { _ = first.intern("a-\(index)") }
        for index in 2_000..<6_000 { _ = second.intern("a-\(index)") }
        let ids = first.absorb(second)
        #expect(ids.count == second.count)
        for id in 0..<UInt32(second.count) { #expect(first.string(ids[Int(id)]) == second.string(id)) }
        #expect(first.count == 6_000)
        #expect(ids[0] == 2_000, "a-2000 was already in the first table")
        #expect(ids[1_000] == 3_000, "a-3000 is the first new one")
    }
}
