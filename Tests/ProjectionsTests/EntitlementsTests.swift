import AppStoreModels
import Projections
import ProjectionTestSupport
import Testing

/// `Entitlements.byProduct` and `SubscriptionProjection`: pure, no store.
@Suite("entitlements: one per product, from every grant")
struct EntitlementsTests {
    typealias B = ScenarioBuilder

    static func grant(_ product: String?, _ source: EntitlementSource, access: Bool, since: EpochMillis?, until: EpochMillis?,
                      group: String? = "g1", revocation: Revocation? = nil) -> EntitlementGrant {
        var member = MemberState(json: ["role": "ASSIGNED", "hasAccess": .bool(access)])!
        member.accessSince = since
        member.accessUntil = until
        member.revocation = revocation
        var grant = EntitlementGrant(member: member, groupKey: group ?? "g", productId: product, purchaserOriginalTransactionId: "p",
                                     status: access ? .active : .expired)
        grant.source = source
        grant.groupKey = group
        return grant
    }

    @Test("entitled products first, then by product id, a product naming none last; since, until and changesAt over the entitled grants")
    func aggregation() {
        let lost = Revocation(reason: .expired, at: 50, eventId: "e9")
        let result = Entitlements.byProduct([
            Self.grant("b", .assignedSeat, access: true, since: 10, until: 100),
            Self.grant("b", .purchased, access: true, since: 20, until: 300, group: nil),
            Self.grant("b", .developerClaim, access: false, since: 1, until: 5),
            Self.grant("a", .familyShared, access: false, since: 1, until: 50, revocation: lost),
            Self.grant(nil, .assignedSeat, access: true, since: 5, until: nil),
            Self.grant("c", .purchased, access: true, since: 7, until: 70),
        ])
        #expect(result.map(\.productId) == ["b", "c", nil, "a"])
        let b = result[0]
        #expect(b.entitled && b.since == 10 && b.until == 300 && b.changesAt == 100)
        #expect(b.grants.map(\.source) == [.purchased, .assignedSeat, .developerClaim])   // longest access first, the ended last
        #expect(result[2].until == nil)                                                     // an entitled grant with no known end
        let a = result[3]
        #expect(!a.entitled && a.reason == lost && a.until == 50 && a.changesAt == nil)
    }

    @Test("an individual subscription folds with the purchaser's rules; a group purchase is not one")
    func subscription() throws {
        var s = B()
        s.notification("SUBSCRIBED", "INITIAL_BUY", at: B.t(0),
                       transaction: B.transaction(id: "s1", original: "s1", purchase: B.t(0), expires: B.days(30), model: nil))
        s.notification("SUBSCRIBED", "INITIAL_BUY", at: B.t(1),
                       transaction: B.transaction(id: "g1", original: "g1", quantity: 5, purchase: B.t(1), expires: B.days(30)))
        #expect(SubscriptionProjection.subscriptions(naming: ["s1", "g1"], in: s.facts) == ["s1"])
        let during = try #require(SubscriptionProjection.project(originalTransactionId: "s1", facts: s.facts, asOf: B.days(10), knownAt: nil))
        #expect(during.hasAccess && during.status == .active && during.accessUntil == B.days(30))
        let after = try #require(SubscriptionProjection.project(originalTransactionId: "s1", facts: s.facts, asOf: B.days(31), knownAt: nil))
        #expect(!after.hasAccess && after.revocation?.reason == .expired)
        #expect(SubscriptionProjection.project(originalTransactionId: "g1", facts: s.facts, asOf: B.days(10), knownAt: nil) == nil)
        #expect(SubscriptionProjection.project(originalTransactionId: "s1", facts: s.facts, asOf: B.days(-1), knownAt: nil) == nil)
    }
}
