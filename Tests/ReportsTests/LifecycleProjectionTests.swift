import AppStoreModels
import Foundation
import Projections
import ProjectionTestSupport
import Reports
import Testing

/// One scenario per lifecycle of Apple's testing guide, projected by the pure fold.
@Suite("Group lifecycles (pure projection)")
struct LifecycleProjectionTests {
    typealias B = ScenarioBuilder
    static let purchaser = "2000000000000001"
    static let purchaserApp = "704000000000000001"
    let start = B.days(0)
    let end = B.days(30)

    /// A developer-hosted group of `seats` bought at day 0, renewing at day 30.
    func developerGroup(seats: Int64 = 10) -> (B, String) {
        var b = B()
        let id = b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                                transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, app: Self.purchaserApp,
                                                           quantity: seats, purchase: start, expires: end),
                                renewal: B.renewal(original: Self.purchaser, quantity: seats, signed: start))
        return (b, id)
    }

    @Test("group purchase: one transaction covers N seats, purchaser holds the first")
    func groupPurchase() throws {
        let (b, _) = developerGroup(seats: 8)
        let state = try #require(b.state(Self.purchaser, asOf: B.days(1)))
        #expect(state.status == .active)
        #expect(state.seats.total == 8)
        #expect(state.seats.renewalTotal == 8)
        #expect(state.seats.available == 7)
        #expect(state.invitationManagement == .developer)
        #expect(state.productId == B.product)
        let purchaser = try #require(state.purchaser)
        #expect(purchaser.hasAccess)
        #expect(purchaser.accessSince == start)
        #expect(purchaser.accessUntil == end)
        #expect(purchaser.appTransactionId == Self.purchaserApp)
    }

    @Test("Apple-hosted member joins, is removed, and another leaves")
    func appleHostedMembers() throws {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, app: Self.purchaserApp, quantity: 5,
                                                  purchase: start, expires: end, model: "APPLE"))
        let memberTx = B.transaction(id: "2000000000000101", original: "2000000000000101", app: "704000000000000101",
                                     ownership: "ASSIGNED", purchase: B.days(1), expires: end, model: "APPLE")
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1), transaction: memberTx)
        let leaverTx = B.transaction(id: "2000000000000102", original: "2000000000000102", app: "704000000000000102",
                                     ownership: "ASSIGNED", purchase: B.days(1), expires: end, model: "APPLE")
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1), transaction: leaverTx)
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1?limit=100",
              body: ["members": [["appTransactionId": .string(Self.purchaserApp)], ["appTransactionId": "704000000000000101"],
                                 ["appTransactionId": "704000000000000102"]], "hasMore": false],
              at: B.days(2))
        let joined = try #require(b.state(Self.purchaser, asOf: B.days(3)))
        #expect(joined.groupIds == ["grp-1"])
        #expect(joined.seats.assigned == 2)
        #expect(joined.seats.available == 2)
        #expect(joined.member(otid: "2000000000000101")?.hasAccess == true)

        let removed = b.notification("REVOKE", at: B.days(4), transaction: B.transaction(
            id: "2000000000000101", original: "2000000000000101", app: "704000000000000101", ownership: "ASSIGNED",
            purchase: B.days(1), expires: end, signed: B.days(4), model: "APPLE", revocationDate: B.days(4),
            revocationType: "ASSIGNMENT_REVOKE"))
        let left = b.notification("REVOKE", at: B.days(5), transaction: B.transaction(
            id: "2000000000000102", original: "2000000000000102", app: "704000000000000102", ownership: "ASSIGNED",
            purchase: B.days(1), expires: end, signed: B.days(5), model: "APPLE", revocationDate: B.days(5),
            revocationType: "ASSIGNMENT_REVOKE"))
        let after = try #require(b.state(Self.purchaser, asOf: B.days(6)))
        let member = try #require(after.member(otid: "2000000000000101"))
        #expect(!member.hasAccess)
        #expect(member.revocation == Revocation(reason: .assignmentRevoke, at: B.days(4), eventId: removed))
        #expect(after.member(otid: "2000000000000102")?.revocation?.eventId == left)
        #expect(after.seats.assigned == 0)
        #expect(after.seats.total == 5, "removing members never changes the group size")
        #expect(after.purchaser?.hasAccess == true)
    }

    @Test("developer-hosted: claim, retried claim, associate (no access change), unclaim, UNCLAIM_SEATS")
    func developerHostedClaims() throws {
        var (b, _) = developerGroup(seats: 5)
        b.claim("c-1", purchaser: Self.purchaser, at: B.days(1), request: "r-1", memberRef: "app-user-1")
        b.claim("c-1", purchaser: Self.purchaser, at: B.days(1) + 5000, request: "r-1", memberRef: "app-user-1")  // retry
        b.claim("c-2", purchaser: Self.purchaser, at: B.days(1) + 10_000, request: "r-2", memberRef: "app-user-2")
        b.claim("c-3", purchaser: Self.purchaser, at: B.days(1) + 20_000, request: "r-3", memberRef: "app-user-3")
        let claimed = try #require(b.state(Self.purchaser, asOf: B.days(2)))
        #expect(claimed.seats.claimed == 3, "a retried Claim Seat with the same requestIdentifier takes no second seat")
        #expect(claimed.seats.available == 1)

        b.api("AssociateSeat", method: "POST", path: "/groups/v1/transactions/\(Self.purchaser)/seats/c-1/associate",
              request: ["appTransactionId": "704000000000000201"], at: B.days(3))
        let associated = try #require(b.state(Self.purchaser, asOf: B.days(3)))
        let c1 = try #require(associated.member(claim: "c-1"))
        #expect(c1.appTransactionId == "704000000000000201")
        #expect(c1.hasAccess && c1.accessSince == B.days(1), "associate never changes access")
        #expect(c1.memberRef == "app-user-1")

        let unclaimEvent = b.unclaim("c-2", purchaser: Self.purchaser, at: B.days(4))
        let appStoreEvent = b.notification("UNCLAIM_SEATS", at: B.days(5), unclaim: ["c-3"])
        let after = try #require(b.state(Self.purchaser, asOf: B.days(6)))
        #expect(after.member(claim: "c-2")?.revocation == Revocation(reason: .unclaimedByDeveloper, at: B.days(4), eventId: unclaimEvent))
        #expect(after.member(claim: "c-3")?.revocation == Revocation(reason: .unclaimedByAppStore, at: B.days(5), eventId: appStoreEvent))
        #expect(after.seats.claimed == 1)
        #expect(after.seats.available == 3)
    }

    @Test("seat increase is effective at once: a second transaction covers only the added seats")
    func seatIncrease() throws {
        var (b, _) = developerGroup(seats: 5)
        b.notification("DID_CHANGE_RENEWAL_PREF", "INCREASE_QUANTITY", at: B.days(10),
                       transaction: B.transaction(id: "2000000000000002", original: Self.purchaser, app: Self.purchaserApp,
                                                  quantity: 3, purchase: B.days(10), expires: end, seatAddition: true),
                       renewal: B.renewal(original: Self.purchaser, quantity: 8, signed: B.days(10)))
        #expect(b.state(Self.purchaser, asOf: B.days(9))?.seats.total == 5)
        let state = try #require(b.state(Self.purchaser, asOf: B.days(11)))
        #expect(state.seats.total == 8)
        #expect(state.seats.renewalTotal == 8)
        #expect(state.seats.available == 7)
    }

    @Test("the guide's group of 10 with 9 claims renewing at 6: over capacity by 4")
    func decreaseAtRenewal() throws {
        var (b, _) = developerGroup(seats: 10)
        for i in 1...9 { b.claim("c-\(i)", purchaser: Self.purchaser, at: B.days(1) + EpochMillis(i * 1000)) }
        b.notification("DID_CHANGE_RENEWAL_PREF", "DECREASE_QUANTITY", at: B.days(20),
                       transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 10, purchase: start, expires: end),
                       renewal: B.renewal(original: Self.purchaser, quantity: 7, signed: B.days(20)))
        b.notification("DID_CHANGE_RENEWAL_PREF", "DECREASE_QUANTITY", at: B.days(21),
                       transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 10, purchase: start, expires: end),
                       renewal: B.renewal(original: Self.purchaser, quantity: 6, signed: B.days(21)))
        let before = try #require(b.state(Self.purchaser, asOf: B.days(22)))
        #expect(before.seats.total == 10)
        #expect(before.seats.renewalTotal == 6, "the latest renewalQuantity wins")
        #expect(before.seats.claimed == 9)
        #expect(before.seats.available == 0)
        #expect(before.seats.overCapacity == 0)
        #expect(before.seats.renewalOverCapacity == 4)

        b.notification("DID_RENEW", at: end,
                       transaction: B.transaction(id: "2000000000000003", original: Self.purchaser, quantity: 6, purchase: end,
                                                  expires: B.days(60)),
                       renewal: B.renewal(original: Self.purchaser, quantity: 6, signed: end))
        let after = try #require(b.state(Self.purchaser, asOf: B.days(31)))
        #expect(after.status == .active)
        #expect(after.seats.total == 6)
        #expect(after.seats.claimed == 9, "the App Store never unclaims seats to fit a smaller group")
        #expect(after.seats.overCapacity == 4)
        #expect(after.seats.available == 0)
        #expect(after.purchaser?.accessSince == start, "renewal continues the access run")
        #expect(after.member(claim: "c-1")?.hasAccess == true)
    }

    @Test("partial seat refund: purchaser stays valid, seats drop, the unclaimed claim is a seat refund")
    func partialSeatRefund() throws {
        var (b, _) = developerGroup(seats: 10)
        for i in 1...9 { b.claim("c-\(i)", purchaser: Self.purchaser, at: B.days(1) + EpochMillis(i * 1000)) }
        let seatRefund = b.notification("REFUND", "SEATS", at: B.days(5),
                       transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 10, purchase: start,
                                                  expires: end, signed: B.days(5), revokedSeats: 2))
        let refundUnclaim = b.notification("UNCLAIM_SEATS", at: B.days(5) + 60_000, unclaim: ["c-9"])
        let state = try #require(b.state(Self.purchaser, asOf: B.days(6)))
        #expect(state.status == .active)
        #expect(state.seats.total == 8)
        #expect(state.seats.refunded == 2)
        #expect(state.seats.claimed == 8)
        #expect(state.seats.overCapacity == 1)
        #expect(state.purchaser?.hasAccess == true)
        #expect(state.member(claim: "c-9")?.revocation == Revocation(reason: .seatRefund, at: B.days(5) + 60_000, eventId: refundUnclaim,
                                                                     cause: RevocationCause(reason: .seatRefund, at: B.days(5), eventId: seatRefund)),
                "the member is told which purchaser-level event (the seat refund), when, and its id")
    }

    @Test("an UNCLAIM_SEATS signed before the seat refund it follows from is still a seat refund, citing it (either order within 24 h)")
    func seatRefundSignedAfterTheUnclaim() throws {
        var (b, _) = developerGroup(seats: 10)
        for i in 1...9 { b.claim("c-\(i)", purchaser: Self.purchaser, at: B.days(1) + EpochMillis(i * 1000)) }
        let refundUnclaim = b.notification("UNCLAIM_SEATS", at: B.days(5), unclaim: ["c-9"])
        let seatRefund = b.notification("REFUND", "SEATS", at: B.days(5) + 60_000,
                       transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 10, purchase: start,
                                                  expires: end, signed: B.days(5) + 60_000, revokedSeats: 2))
        let state = try #require(b.state(Self.purchaser, asOf: B.days(6)))
        #expect(state.member(claim: "c-9")?.revocation == Revocation(reason: .seatRefund, at: B.days(5), eventId: refundUnclaim,
                                                                     cause: RevocationCause(reason: .seatRefund, at: B.days(5) + 60_000, eventId: seatRefund)))
        // More than 24 hours apart, the unclaim is the App Store's own.
        var (late, _) = developerGroup(seats: 10)
        late.claim("c-1", purchaser: Self.purchaser, at: B.days(1))
        let early = late.notification("UNCLAIM_SEATS", at: B.days(3), unclaim: ["c-1"])
        late.notification("REFUND", "SEATS", at: B.days(5), transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 10,
                          purchase: start, expires: end, signed: B.days(5), revokedSeats: 1))
        let apart = try #require(late.state(Self.purchaser, asOf: B.days(6)))
        #expect(apart.member(claim: "c-1")?.revocation == Revocation(reason: .unclaimedByAppStore, at: B.days(3), eventId: early))
    }

    @Test("full refund: every transaction of the period revoked, the whole group loses access")
    func fullRefund() throws {
        var (b, _) = developerGroup(seats: 4)
        b.claim("c-1", purchaser: Self.purchaser, at: B.days(1))
        let refund = b.notification("REFUND", at: B.days(3),
                                    transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 4, purchase: start,
                                                               expires: end, signed: B.days(3), revocationDate: B.days(3),
                                                               revocationType: "REFUND_FULL"))
        let state = try #require(b.state(Self.purchaser, asOf: B.days(4)))
        #expect(state.status == .revoked)
        #expect(state.purchaser?.revocation == Revocation(reason: .refundFull, at: B.days(3), eventId: refund))
        #expect(state.member(claim: "c-1")?.revocation == Revocation(reason: .groupRevoked, at: B.days(3), eventId: refund,
                                                                     cause: RevocationCause(reason: .refundFull, at: B.days(3), eventId: refund)))
        #expect(state.members.allSatisfy { !$0.hasAccess })
    }

    @Test("cancellation changes nothing until the period ends; EXPIRED ends access for everyone")
    func cancellationThenExpiry() throws {
        var (b, _) = developerGroup(seats: 3)
        b.claim("c-1", purchaser: Self.purchaser, at: B.days(1))
        b.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: B.days(10),
                       transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 3, purchase: start, expires: end))
        let cancelled = try #require(b.state(Self.purchaser, asOf: B.days(29)))
        #expect(cancelled.status == .active)
        #expect(cancelled.member(claim: "c-1")?.hasAccess == true)
        let expiry = b.notification("EXPIRED", "VOLUNTARY", at: end + 1000,
                                    transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 3, purchase: start, expires: end))
        let expired = try #require(b.state(Self.purchaser, asOf: B.days(31)))
        #expect(expired.status == .expired)
        #expect(expired.purchaser?.revocation == Revocation(reason: .expired, at: end, eventId: expiry))
        #expect(expired.member(claim: "c-1")?.revocation == Revocation(reason: .groupExpired, at: end, eventId: expiry,
                                                                        cause: RevocationCause(reason: .expired, at: end, eventId: expiry)))
    }

    @Test("billing grace keeps members' access; grace expiry ends it for the whole group")
    func billingGrace() throws {
        var (b, _) = developerGroup(seats: 3)
        b.claim("c-1", purchaser: Self.purchaser, at: B.days(1))
        let graceEnd = B.days(36)
        b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: end + 1000,
                       transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 3, purchase: start, expires: end),
                       renewal: B.renewal(original: Self.purchaser, quantity: 3, grace: graceEnd, retry: true, signed: end + 1000))
        let inGrace = try #require(b.state(Self.purchaser, asOf: B.days(33)))
        #expect(inGrace.status == .gracePeriod)
        #expect(inGrace.purchaser?.accessUntil == graceEnd)
        #expect(inGrace.member(claim: "c-1")?.hasAccess == true)
        let expiredEvent = b.notification("GRACE_PERIOD_EXPIRED", at: graceEnd + 1000,
                                          transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 3, purchase: start, expires: end),
                                          renewal: B.renewal(original: Self.purchaser, quantity: 3, grace: graceEnd, retry: true, signed: graceEnd + 1000))
        let after = try #require(b.state(Self.purchaser, asOf: B.days(37)))
        #expect(after.status == .billingRetry, "Apple keeps retrying billing after grace ends, but nobody has access")
        #expect(after.purchaser?.hasAccess == false)
        #expect(after.purchaser?.revocation == Revocation(reason: .gracePeriodExpired, at: graceEnd, eventId: expiredEvent))
        #expect(after.member(claim: "c-1")?.revocation?.reason == .groupExpired)
    }

    @Test("billing retry without grace: no access, status BILLING_RETRY")
    func billingRetry() throws {
        var (b, _) = developerGroup(seats: 3)
        b.notification("DID_FAIL_TO_RENEW", at: end + 1000,
                       transaction: B.transaction(id: Self.purchaser, original: Self.purchaser, quantity: 3, purchase: start, expires: end),
                       renewal: B.renewal(original: Self.purchaser, quantity: 3, retry: true, signed: end + 1000))
        let state = try #require(b.state(Self.purchaser, asOf: B.days(32)))
        #expect(state.status == .billingRetry)
        #expect(state.purchaser?.hasAccess == false)
    }

    @Test("organization seat assigned then revoked, keyed by its groupId")
    func organizationSeat() throws {
        var b = B()
        let seat = "2000000000000501"
        b.assignedSeat(seat, app: "704000000000000501", purchase: start, expires: end)
        b.api("GetCustomerGroups", path: "/groups/v1/currentGroups/\(seat)",
              body: ["groups": [["groupId": "org-7", "groupType": "ORGANIZATION", "roles": [["productId": .string(B.product), "role": "NONE"]]]]],
              at: B.days(1))
        let assigned = try #require(b.state("org-7", asOf: B.days(2)))
        #expect(assigned.groupIds == ["org-7"])
        #expect(assigned.purchaserOriginalTransactionId == nil)
        #expect(assigned.status == .unknown)
        #expect(assigned.member(otid: seat)?.hasAccess == true)
        let revoke = b.notification("REVOKE", at: B.days(5), transaction: B.transaction(
            id: seat, original: seat, app: "704000000000000501", ownership: "ASSIGNED", purchase: start, expires: end,
            signed: B.days(5), model: nil, revocationDate: B.days(5), revocationType: "ASSIGNMENT_REVOKE"))
        let revoked = try #require(b.state("org-7", asOf: B.days(6)))
        #expect(revoked.member(otid: seat)?.revocation == Revocation(reason: .assignmentRevoke, at: B.days(5), eventId: revoke))
    }

    @Test("an assigned seat with no linking evidence is a group of its own, unlinked:<originalTransactionId>")
    func unlinkedAssignedSeat() throws {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: "2000000000000601", original: "2000000000000601", ownership: "ASSIGNED",
                                                  purchase: start, expires: end, model: nil))
        let state = try #require(b.state("unlinked:2000000000000601", asOf: B.days(1)))
        #expect(state.productId == B.product)
        #expect(state.member(otid: "2000000000000601")?.hasAccess == true)
        #expect(state.seats.assigned == 0, "unlinked members hold no seat of a known group")
    }

    @Test("sandbox placeholder group and member never become data")
    func sandboxPlaceholder() throws {
        var b = B()
        b.api("GetCustomerGroups", path: "/groups/v1/currentGroups/2000000000000701",
              body: ["groups": [["groupId": .string(SandboxPlaceholder.groupId), "groupType": "ORGANIZATION"]]], at: start)
        b.api("GetGroupMembers", path: "/groups/v1/group/\(SandboxPlaceholder.groupId)",
              body: ["members": [["appTransactionId": .string(SandboxPlaceholder.memberAppTransactionId)]], "hasMore": false], at: start)
        #expect(GroupIdentityResolver.resolve(b.facts).isEmpty)
    }

    @Test("an unknown revocationType is preserved verbatim as the reason")
    func unknownRevocationType() throws {
        var b = B()
        let seat = "2000000000000801"
        b.notification("SUBSCRIBED", at: start, transaction: B.transaction(id: seat, original: seat, ownership: "FUTURE_OWNERSHIP",
                                                                            purchase: start, expires: end, model: nil))
        // An unknown ownership type still grants access when the transaction is valid: it is not ASSIGNED, not multiseat,
        // so it forms no group; check the member path with an ASSIGNED one instead.
        b.notification("SUBSCRIBED", at: start, transaction: B.transaction(id: "2000000000000802", original: "2000000000000802",
                                                                            ownership: "ASSIGNED", purchase: start, expires: end, model: nil))
        b.notification("REVOKE", at: B.days(2), transaction: B.transaction(
            id: "2000000000000802", original: "2000000000000802", ownership: "ASSIGNED", purchase: start, expires: end,
            signed: B.days(2), model: nil, revocationDate: B.days(2), revocationType: "SOMETHING_NEW"))
        let state = try #require(b.state("unlinked:2000000000000802", asOf: B.days(3)))
        let member = try #require(state.member(otid: "2000000000000802"))
        #expect(member.revocation?.reason.rawValue == "SOMETHING_NEW")
        #expect(member.revocation?.reason.isKnown == false)
    }

    @Test("Get Seat Info is kept as Apple's view and differences are drift")
    func appleViewAndDrift() throws {
        var (b, _) = developerGroup(seats: 5)
        b.claim("c-1", purchaser: Self.purchaser, at: B.days(1))
        b.claim("c-2", purchaser: Self.purchaser, at: B.days(1) + 1000)
        b.api("GetSeatInfo", path: "/groups/v1/transactions/\(Self.purchaser)/seats",
              body: ["totalSeatCount": 5, "availableSeatCount": 3, "assignedSeatClaimIds": ["c-1", "c-apple-only"]], at: B.days(2))
        let state = try #require(b.state(Self.purchaser, asOf: B.days(3)))
        #expect(state.apple?.totalSeatCount == 5)
        #expect(state.apple?.observedAt == B.days(2))
        #expect(state.seats.claimed == 3, "a claim Apple lists counts even if we never recorded it")
        #expect(state.drift.contains(Drift(field: "available", ours: 1, apple: 3)))
        #expect(state.drift.contains(Drift(field: "assignedSeatClaimIds", ours: ["c-2"], apple: [])))
    }
}

@Suite("Two clocks")
struct TwoClockTests {
    typealias B = ScenarioBuilder

    @Test("--known-at hides events recorded later; --as-of uses Apple's time; a late old event never overwrites newer state")
    func knownAtAndAsOf() throws {
        var b = B()
        let p = "2000000000000001"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(0),
                       transaction: B.transaction(id: p, original: p, quantity: 10, purchase: B.days(0), expires: B.days(30)))
        // Missed at the time (recorded on day 12 by a backfill), effective on day 5.
        b.notification("DID_CHANGE_RENEWAL_PREF", "INCREASE_QUANTITY", at: B.days(5),
                       transaction: B.transaction(id: "\(p)2", original: p, quantity: 5, purchase: B.days(5), expires: B.days(30), seatAddition: true),
                       renewal: B.renewal(original: p, quantity: 15, signed: B.days(5)), recordedAt: B.days(12))
        // A retried *older* decrease-preference notification arrives last.
        b.notification("DID_CHANGE_RENEWAL_PREF", "DECREASE_QUANTITY", at: B.days(2),
                       renewal: B.renewal(original: p, quantity: 8, signed: B.days(2)), recordedAt: B.days(13))
        let believedOnDay10 = try #require(b.state(p, asOf: B.days(10), knownAt: B.days(10)))
        #expect(believedOnDay10.seats.total == 10)
        #expect(believedOnDay10.seats.renewalTotal == 10)
        let knownNowAboutDay10 = try #require(b.state(p, asOf: B.days(10)))
        #expect(knownNowAboutDay10.seats.total == 15)
        #expect(knownNowAboutDay10.seats.renewalTotal == 15, "the late day-2 renewal info is older than the day-5 one")
        let day3 = try #require(b.state(p, asOf: B.days(3)))
        #expect(day3.seats.total == 10)
        #expect(day3.seats.renewalTotal == 8)
    }
}

@Suite("Against Apple")
struct AgainstAppleTests {
    typealias B = ScenarioBuilder

    @Test("a paged Get Group Members listing is compared as a whole, and a real difference is still reported")
    func pagedRoster() throws {
        var b = B()
        let p = "2000000000000001", app = "704000000000000001"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(0),
                       transaction: B.transaction(id: p, original: p, app: app, quantity: 5, purchase: B.days(0), expires: B.days(30), model: "APPLE"))
        for (index, member) in ["3000000000000001", "3000000000000002"].enumerated() {
            b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1) + EpochMillis(index),
                           transaction: B.transaction(id: member, original: member, app: "8\(member)", ownership: "ASSIGNED",
                                                      purchase: B.days(1), expires: B.days(30), model: "APPLE"))
        }
        // Two pages of one listing, a second apart.
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1?limit=2",
              body: ["members": [["appTransactionId": .string(app)], ["appTransactionId": "83000000000000001"]], "hasMore": true,
                     "paginationToken": "t1"], at: B.days(2))
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1?limit=2&paginationToken=t1",
              body: ["members": [["appTransactionId": "83000000000000002"]], "hasMore": false], at: B.days(2) + 1000)
        let facts = b.facts
        let membership = try #require(GroupIdentityResolver.resolve(facts)[p])
        let state = GroupProjection.project(membership, facts: membership.relevant(facts), asOf: B.days(3), knownAt: nil)
        #expect(AppleComparison.compare(state: state, facts: membership.relevant(facts)).differences.isEmpty)

        // A member Apple no longer lists is a difference.
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1?limit=100",
              body: ["members": [["appTransactionId": .string(app)], ["appTransactionId": "83000000000000001"]], "hasMore": false],
              at: B.days(4))
        let later = b.facts
        let laterState = GroupProjection.project(membership, facts: membership.relevant(later), asOf: B.days(5), knownAt: nil)
        let differences = AppleComparison.compare(state: laterState, facts: membership.relevant(later)).differences
        #expect(differences.map(\.field) == ["groupMembers"])
        #expect(differences.first?.before == ["83000000000000002"])
    }
}
