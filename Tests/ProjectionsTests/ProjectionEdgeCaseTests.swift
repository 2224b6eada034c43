import AppStoreModels
import Foundation
import Projections
import ProjectionTestSupport
import Testing

/// Edge cases where the rules of `Events/projection-rules.md` meet: each test names the rule it checks.
@Suite("Projections: edge cases")
struct ProjectionEdgeCaseTests {
    typealias B = ScenarioBuilder
    static let p = "2000000000000001"
    static let pApp = "704000000000000001"
    let start = B.days(0)
    let end = B.days(30)

    /// Apple-hosted group of `seats` with one linked member `m`.
    func appleGroup(seats: Int64 = 5, member m: String = "2000000000000101") -> B {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: seats,
                                                  purchase: start, expires: end, model: "APPLE"),
                       renewal: B.renewal(original: Self.p, quantity: seats, signed: start))
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1),
                       transaction: B.transaction(id: m, original: m, app: "7\(m)", ownership: "ASSIGNED",
                                                  purchase: B.days(1), expires: end, model: "APPLE"))
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1?limit=100",
              body: ["members": [["appTransactionId": .string(Self.pApp)], ["appTransactionId": .string("7\(m)")]], "hasMore": false],
              at: B.days(2))
        return b
    }

    /// A developer-hosted group of 3 seats with claim `c-1`, whose renewal failed at `end` into
    /// billing grace until `graceEnd`.
    func devGroupInGrace(until graceEnd: EpochMillis) -> B {
        var b = devGroup(seats: 3)
        b.claim("c-1", purchaser: Self.p, at: B.days(1))
        b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: end + 1000,
                       transaction: B.transaction(id: Self.p, original: Self.p, quantity: 3, purchase: start, expires: end),
                       renewal: B.renewal(original: Self.p, quantity: 3, grace: graceEnd, retry: true, signed: end + 1000))
        return b
    }

    func devGroup(seats: Int64) -> B {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: seats,
                                                  purchase: start, expires: end),
                       renewal: B.renewal(original: Self.p, quantity: seats, signed: start))
        return b
    }

    /// A member revocation near a seat refund: minutes from the refund (negative: signed before it) and its type.
    struct NearSeatRefund: Sendable, CustomTestStringConvertible {
        let minutes: Int64
        let type: String?
        var testDescription: String { "\(type ?? "untyped") revocation \(minutes) min from the refund" }
    }

    // REVOKE.md, REFUND_SEATS.md, projections.md: SEAT_REFUND when the type is absent or REFUND_PRORATED and a
    // REFUND/SEATS of the group is within 24 hours either side.
    @Test("a member revocation without type or REFUND_PRORATED within 24 h either side of REFUND/SEATS is SEAT_REFUND",
          arguments: [NearSeatRefund(minutes: 1, type: "REFUND_PRORATED"), NearSeatRefund(minutes: -1, type: nil),
                      NearSeatRefund(minutes: 1, type: nil), NearSeatRefund(minutes: -1, type: "REFUND_PRORATED")])
    func memberRevocationNearSeatRefund(_ near: NearSeatRefund) throws {
        var b = appleGroup()
        let m = "2000000000000101"
        let revokedAt = B.days(5) + near.minutes * 60_000
        b.notification("REFUND", "SEATS", at: B.days(5),
                       transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: 5, purchase: start,
                                                  expires: end, signed: B.days(5), model: "APPLE", revokedSeats: 4))
        b.notification("REVOKE", at: revokedAt, transaction: B.transaction(
            id: m, original: m, app: "7\(m)", ownership: "ASSIGNED", purchase: B.days(1), expires: end,
            signed: revokedAt, model: "APPLE", revocationDate: revokedAt, revocationType: near.type))
        let state = try #require(b.state(Self.p, asOf: B.days(6)))
        #expect(state.member(otid: m)?.revocation?.reason == .seatRefund)
    }

    // Schema group-state.schema.json: seats.refunded / overCapacity / renewalOverCapacity are "integer" (not null);
    // projections.md's organization example prints "refunded": 0, "overCapacity": 0, "renewalOverCapacity": 0.
    @Test("organization group JSON has integer refunded/overCapacity/renewalOverCapacity")
    func organizationSeatCountsAreIntegers() throws {
        var b = B()
        let seat = "2000000000000501"
        b.assignedSeat(seat, app: "704000000000000501", purchase: start, expires: end)
        b.api("GetCustomerGroups", path: "/groups/v1/currentGroups/\(seat)",
              body: ["groups": [["groupId": "org-7", "groupType": "ORGANIZATION"]]], at: B.days(1))
        let state = try #require(b.state("org-7", asOf: B.days(2)))
        let seats = try #require(state.json["seats"])
        #expect(seats["refunded"] == 0)
        #expect(seats["overCapacity"] == 0)
        #expect(seats["renewalOverCapacity"] == 0)
    }

    // ledger-semantics: seats.total = "seats paid for in the current period"; a refunded (revoked) seat-addition
    // transaction is not paid for.
    @Test("a seat-addition transaction refunded in full no longer counts in seats.total")
    func revokedSeatAdditionNotCounted() throws {
        var b = devGroup(seats: 5)
        b.notification("DID_CHANGE_RENEWAL_PREF", "INCREASE_QUANTITY", at: B.days(10),
                       transaction: B.transaction(id: "2000000000000002", original: Self.p, app: Self.pApp, quantity: 3,
                                                  purchase: B.days(10), expires: end, seatAddition: true),
                       renewal: B.renewal(original: Self.p, quantity: 8, signed: B.days(10)))
        b.notification("REFUND", at: B.days(12),
                       transaction: B.transaction(id: "2000000000000002", original: Self.p, app: Self.pApp, quantity: 3,
                                                  purchase: B.days(10), expires: end, signed: B.days(12),
                                                  revocationDate: B.days(12), revocationType: "REFUND_FULL", seatAddition: true),
                       renewal: B.renewal(original: Self.p, quantity: 5, signed: B.days(12)))
        let state = try #require(b.state(Self.p, asOf: B.days(13)))
        #expect(state.status == .active)
        #expect(state.seats.total == 5)
    }

    // Grace counts as access; projections.md: accessSince = "start of the current (or last) continuous access".
    @Test("recovery inside grace (purchaseDate after old end) keeps accessSince continuous")
    func graceThenRecoveryAccessSince() throws {
        let graceEnd = B.days(36)
        var b = devGroupInGrace(until: graceEnd)
        b.notification("DID_RENEW", "BILLING_RECOVERY", at: B.days(33),
                       transaction: B.transaction(id: "2000000000000009", original: Self.p, quantity: 3, purchase: B.days(33),
                                                  expires: B.days(60)),
                       renewal: B.renewal(original: Self.p, quantity: 3, retry: false, signed: B.days(33)))
        let state = try #require(b.state(Self.p, asOf: B.days(34)))
        #expect(state.status == .active)
        #expect(state.purchaser?.accessSince == start)
        #expect(state.member(claim: "c-1")?.accessSince == B.days(1))
    }

    @Test("over capacity after smaller renewal, then 2 unclaims")
    func overCapacityThenUnclaims() throws {
        var b = devGroup(seats: 10)
        for i in 1...9 { b.claim("c-\(i)", purchaser: Self.p, at: B.days(1) + EpochMillis(i * 1000)) }
        b.notification("DID_CHANGE_RENEWAL_PREF", "DECREASE_QUANTITY", at: B.days(20),
                       transaction: B.transaction(id: Self.p, original: Self.p, quantity: 10, purchase: start, expires: end),
                       renewal: B.renewal(original: Self.p, quantity: 6, signed: B.days(20)))
        b.notification("DID_RENEW", at: end,
                       transaction: B.transaction(id: "2000000000000003", original: Self.p, quantity: 6, purchase: end, expires: B.days(60)),
                       renewal: B.renewal(original: Self.p, quantity: 6, signed: end))
        b.unclaim("c-1", purchaser: Self.p, at: B.days(31))
        b.notification("UNCLAIM_SEATS", at: B.days(32), unclaim: ["c-2"])
        let s = try #require(b.state(Self.p, asOf: B.days(33)))
        #expect(s.seats.total == 6)
        #expect(s.seats.claimed == 7)
        #expect(s.seats.overCapacity == 2)
        #expect(s.seats.renewalOverCapacity == 2)
        #expect(s.seats.available == 0)
        // boundary: at exactly the unclaim instant the claim is gone
        let atUnclaim = try #require(b.state(Self.p, asOf: B.days(31)))
        #expect(atUnclaim.member(claim: "c-1")?.hasAccess == false)
        // boundary: at exactly period end before DID_RENEW is visible (DID_RENEW at end)
        let atEnd = try #require(b.state(Self.p, asOf: end))
        #expect(atEnd.status == .active)
        #expect(atEnd.seats.total == 6)
        let justBefore = try #require(b.state(Self.p, asOf: end - 1))
        #expect(justBefore.seats.total == 10 && justBefore.seats.renewalOverCapacity == 4)
    }

    @Test("partial refund then seat increase")
    func partialRefundThenIncrease() throws {
        var b = devGroup(seats: 5)
        b.notification("REFUND", "SEATS", at: B.days(5),
                       transaction: B.transaction(id: Self.p, original: Self.p, quantity: 5, purchase: start, expires: end,
                                                  signed: B.days(5), revokedSeats: 2),
                       renewal: B.renewal(original: Self.p, quantity: 3, signed: B.days(5)))
        b.notification("DID_CHANGE_RENEWAL_PREF", "INCREASE_QUANTITY", at: B.days(10),
                       transaction: B.transaction(id: "2000000000000002", original: Self.p, quantity: 4, purchase: B.days(10),
                                                  expires: end, seatAddition: true),
                       renewal: B.renewal(original: Self.p, quantity: 7, signed: B.days(10)))
        // late retried older version of tx1 without revokedSeatQuantity
        b.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", at: B.days(3),
                       transaction: B.transaction(id: Self.p, original: Self.p, quantity: 5, purchase: start, expires: end, signed: B.days(3)),
                       recordedAt: B.days(11))
        let s = try #require(b.state(Self.p, asOf: B.days(11)))
        #expect(s.seats.total == 7)
        #expect(s.seats.refunded == 2)
        #expect(s.seats.renewalTotal == 7)
        let known = try #require(b.state(Self.p, asOf: B.days(11), knownAt: B.days(9)))
        #expect(known.seats.total == 3)
        let before = try #require(b.state(Self.p, asOf: B.days(-1)))
        #expect(before.status == .unknown && before.seats.total == nil)
    }

    @Test("Apple-hosted member during grace keeps access; cascade at grace end")
    func assignedGraceCascade() throws {
        var b = appleGroup()
        let m = "2000000000000101"
        let graceEnd = B.days(36)
        b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: end + 1000,
                       transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: 5, purchase: start, expires: end, model: "APPLE"),
                       renewal: B.renewal(original: Self.p, quantity: 5, grace: graceEnd, retry: true, signed: end + 1000))
        let g = try #require(b.state(Self.p, asOf: B.days(33)))
        #expect(g.member(otid: m)?.hasAccess == true)
        #expect(g.seats.assigned == 1)
        let after = try #require(b.state(Self.p, asOf: graceEnd))
        #expect(after.member(otid: m)?.revocation?.reason == .groupExpired)
        #expect(after.member(otid: m)?.revocation?.at == graceEnd)
    }

    @Test("GRACE_PERIOD_EXPIRED whose renewal info no longer carries gracePeriodExpiresDate")
    func graceExpiredWithoutGraceDate() throws {
        let graceEnd = B.days(36)
        var b = devGroupInGrace(until: graceEnd)
        let ev = b.notification("GRACE_PERIOD_EXPIRED", at: graceEnd + 1000,
                                transaction: B.transaction(id: Self.p, original: Self.p, quantity: 3, purchase: start, expires: end),
                                renewal: B.renewal(original: Self.p, quantity: 3, retry: true, signed: graceEnd + 1000))
        let s = try #require(b.state(Self.p, asOf: B.days(37)))
        #expect(s.purchaser?.revocation == Revocation(reason: .gracePeriodExpired, at: graceEnd, eventId: ev))
        #expect(s.member(claim: "c-1")?.accessUntil == graceEnd)
    }

    // projections.md: accessSince = "start of the current (or last) continuous access"; accessUntil = when access ended.
    @Test("claim unclaimed before the group expired keeps its own accessSince after a resubscribe")
    func claimAccessSinceAfterGap() throws {
        var b = devGroup(seats: 3)
        b.claim("c-1", purchaser: Self.p, at: B.days(1))
        b.unclaim("c-1", purchaser: Self.p, at: B.days(20))
        b.notification("EXPIRED", "VOLUNTARY", at: end + 1000,
                       transaction: B.transaction(id: Self.p, original: Self.p, quantity: 3, purchase: start, expires: end))
        b.notification("SUBSCRIBED", "RESUBSCRIBE", at: B.days(40),
                       transaction: B.transaction(id: "2000000000000040", original: Self.p, quantity: 3, purchase: B.days(40),
                                                  expires: B.days(70)))
        let s = try #require(b.state(Self.p, asOf: B.days(45)))
        let c = try #require(s.member(claim: "c-1"))
        #expect(c.accessUntil == B.days(20))
        #expect(c.accessSince == B.days(1), "accessSince \(String(describing: c.accessSince)) is after accessUntil")
    }

    @Test("unknown invitationManagement verbatim; placeholder group next to a real purchaser")
    func unknownModelAndPlaceholder() throws {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: 3,
                                                  purchase: start, expires: end, model: "HYBRID_FUTURE"))
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1),
                       transaction: B.transaction(id: "2000000000000101", original: "2000000000000101", app: "704000000000000101",
                                                  ownership: "ASSIGNED", purchase: B.days(1), expires: end, model: "HYBRID_FUTURE"))
        b.api("GetCustomerGroups", path: "/groups/v1/currentGroups/\(Self.p)",
              body: ["groups": [["groupId": .string(SandboxPlaceholder.groupId), "groupType": "FAMILY"]]], at: B.days(2))
        b.api("GetGroupMembers", path: "/groups/v1/group/\(SandboxPlaceholder.groupId)",
              body: ["members": [["appTransactionId": .string(Self.pApp)], ["appTransactionId": "704000000000000101"],
                                 ["appTransactionId": .string(SandboxPlaceholder.memberAppTransactionId)]]], at: B.days(2))
        let groups = GroupIdentityResolver.resolve(b.facts)
        #expect(Set(groups.keys) == [Self.p, "unlinked:2000000000000101"])
        let s = try #require(b.state(Self.p, asOf: B.days(3)))
        #expect(s.invitationManagement?.rawValue == "HYBRID_FUTURE")
        #expect(s.groupIds.isEmpty)
        #expect(s.seats.assigned == 0)
    }

    // Full refund: "every transaction of the period revoked -> the whole group loses access" at the refund; the
    // member's own REVOKE a minute later must not move the end of access later (accessUntil = when access ended).
    @Test("linked ASSIGNED member: group revoked at T, own revocation at T+1min -> access ended at T")
    func assignedEarliestLossWins() throws {
        var b = appleGroup()
        let m = "2000000000000101"
        let refund = b.notification("REFUND", at: B.days(5), transaction: B.transaction(
            id: Self.p, original: Self.p, app: Self.pApp, quantity: 5, purchase: start, expires: end, signed: B.days(5),
            model: "APPLE", revocationDate: B.days(5), revocationType: "REFUND_FULL"))
        let mid = try #require(b.state(Self.p, asOf: B.days(5) + 30_000))
        #expect(mid.member(otid: m)?.revocation == Revocation(reason: .groupRevoked, at: B.days(5), eventId: refund,
                                                              cause: RevocationCause(reason: .refundFull, at: B.days(5), eventId: refund)))
        b.notification("REVOKE", at: B.days(5) + 60_000, transaction: B.transaction(
            id: m, original: m, app: "7\(m)", ownership: "ASSIGNED", purchase: B.days(1), expires: end,
            signed: B.days(5) + 60_000, model: "APPLE", revocationDate: B.days(5) + 60_000, revocationType: "REFUND_FULL"))
        let later = try #require(b.state(Self.p, asOf: B.days(6)))
        #expect(later.member(otid: m)?.accessUntil == B.days(5))
    }

    // ledger-semantics: "Reducing seats: effective at the next renewal". A renewal charged 1 h before the old period
    // ends (purchaseDate < old expiresDate) should not shrink the seats of the period that is still running.
    @Test("renewal charged early: the old period's seats apply until its expiresDate")
    func earlyRenewalDoesNotShrinkRunningPeriod() throws {
        var b = devGroup(seats: 10)
        for i in 1...9 { b.claim("c-\(i)", purchaser: Self.p, at: B.days(1) + EpochMillis(i * 1000)) }
        b.notification("DID_CHANGE_RENEWAL_PREF", "DECREASE_QUANTITY", at: B.days(20),
                       transaction: B.transaction(id: Self.p, original: Self.p, quantity: 10, purchase: start, expires: end),
                       renewal: B.renewal(original: Self.p, quantity: 6, signed: B.days(20)))
        b.notification("DID_RENEW", at: end - 3_600_000,
                       transaction: B.transaction(id: "2000000000000003", original: Self.p, quantity: 6, purchase: end - 3_600_000,
                                                  expires: B.days(60)),
                       renewal: B.renewal(original: Self.p, quantity: 6, signed: end - 3_600_000))
        let s = try #require(b.state(Self.p, asOf: end - 1_800_000))
        #expect(s.seats.total == 10)
        #expect(s.seats.overCapacity == 0)
    }

    // MARK: Identity, in any order

    func purchaser(_ b: inout B, _ p: String, _ app: String) {
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: p, original: p, app: app, quantity: 5, purchase: start, expires: end, model: "APPLE"),
                       renewal: B.renewal(original: p, quantity: 5, signed: start))
    }

    func summary(_ groups: [String: GroupMembership]) -> [String: [String]] {
        groups.mapValues { ($0.memberOriginalTransactionIds.sorted() + $0.groupIds.sorted().map { "gid:" + $0 }) }
    }

    @Test("a purchaser whose appTransactionId also carries a personal subscription is linked the same in any order")
    func personalSubscriptionSharesAppTransactionId() {
        var b = B()
        purchaser(&b, Self.p, Self.pApp)
        // The same Apple account's own subscription of another product: not multiseat, same appTransactionId.
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(0.5),
                       transaction: B.transaction(id: "3000000000000009", original: "3000000000000009", app: Self.pApp,
                                                  purchase: B.days(0.5), expires: end, model: nil))
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1),
                       transaction: B.transaction(id: "2000000000000101", original: "2000000000000101", app: "704000000000000101",
                                                  ownership: "ASSIGNED", purchase: B.days(1), expires: end, model: "APPLE"))
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1",
              body: ["members": [["appTransactionId": .string(Self.pApp)], ["appTransactionId": "704000000000000101"]]], at: B.days(2))
        let forward = summary(GroupIdentityResolver.resolve(b.facts))
        #expect(forward[Self.p] == ["2000000000000101", "gid:grp-1"])
        #expect(summary(GroupIdentityResolver.resolve(b.facts.reversed())) == forward)
    }

    @Test("a member who moved groups (one appTransactionId, two ASSIGNED holders) is placed by the listings' times, in any order")
    func memberMovesGroups() {
        var b = B()
        let p2 = "2000000000000002", p2App = "704000000000000002", mApp = "704000000000000101"
        purchaser(&b, Self.p, Self.pApp)
        purchaser(&b, p2, p2App)
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1),
                       transaction: B.transaction(id: "2000000000000101", original: "2000000000000101", app: mApp,
                                                  ownership: "ASSIGNED", purchase: B.days(1), expires: B.days(5), model: "APPLE"))
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1",
              body: ["members": [["appTransactionId": .string(Self.pApp)], ["appTransactionId": .string(mApp)]]], at: B.days(2))
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(6),
                       transaction: B.transaction(id: "2000000000000201", original: "2000000000000201", app: mApp,
                                                  ownership: "ASSIGNED", purchase: B.days(6), expires: end, model: "APPLE"))
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-2",
              body: ["members": [["appTransactionId": .string(p2App)], ["appTransactionId": .string(mApp)]]], at: B.days(7))
        let forward = summary(GroupIdentityResolver.resolve(b.facts))
        #expect(forward[Self.p] == ["2000000000000101", "gid:grp-1"])
        #expect(forward[p2] == ["2000000000000201", "gid:grp-2"])
        #expect(summary(GroupIdentityResolver.resolve(b.facts.reversed())) == forward)
        #expect(summary(GroupIdentityResolver.resolve(b.facts.shuffled())) == forward)
    }

    @Test("Apple answering our Unclaim Seat with 404 ends the claim; an earlier end keeps its reason; an unknown claim stays unknown")
    func unclaimAnsweredNotFound() throws {
        var b = devGroup(seats: 5)
        b.claim("c-1", purchaser: Self.p, at: B.days(1))
        b.claim("c-2", purchaser: Self.p, at: B.days(1))
        let notFoundBody: JSONValue = ["errorCode": 4_040_020, "errorMessage": "Seat claim id not found."]
        let lost = b.api("UnclaimSeat", method: "DELETE", path: "/groups/v1/transactions/\(Self.p)/seats/c-1", status: 404,
                         body: notFoundBody, at: B.days(3))
        let unclaimed = b.unclaim("c-2", purchaser: Self.p, at: B.days(2))
        b.api("UnclaimSeat", method: "DELETE", path: "/groups/v1/transactions/\(Self.p)/seats/c-2", status: 404, body: notFoundBody,
              at: B.days(4))
        b.api("UnclaimSeat", method: "DELETE", path: "/groups/v1/transactions/\(Self.p)/seats/c-9", status: 404, body: notFoundBody,
              at: B.days(4))
        let state = try #require(b.state(Self.p, asOf: B.days(5)))
        #expect(state.member(claim: "c-1")?.revocation == Revocation(reason: .unclaimedByDeveloper, at: B.days(3), eventId: lost))
        #expect(state.member(claim: "c-2")?.revocation == Revocation(reason: .unclaimedByDeveloper, at: B.days(2), eventId: unclaimed))
        #expect(state.member(claim: "c-9") == nil)
        #expect(state.seats.claimed == 0)
        let before = try #require(b.state(Self.p, asOf: B.days(2.5)))
        #expect(before.member(claim: "c-1")?.hasAccess == true)
    }

    @Test("a 2xx Get Seat Info whose body is not Apple's object is no view of the claims (no drift, no claim)")
    func seatInfoWithForeignBody() throws {
        var b = devGroup(seats: 5)
        b.claim("c-1", purchaser: Self.p, at: B.days(1))
        b.api("GetSeatInfo", path: "/groups/v1/transactions/\(Self.p)/seats", body: "<html>gateway</html>", at: B.days(2))
        b.api("GetSeatInfo", path: "/groups/v1/transactions/\(Self.p)/seats", body: ["unexpected": true], at: B.days(3))
        let state = try #require(b.state(Self.p, asOf: B.days(4)))
        #expect(state.apple == nil && state.drift.isEmpty)
        #expect(state.seats.claimed == 1)

        b.api("GetSeatInfo", path: "/groups/v1/transactions/\(Self.p)/seats", body: ["totalSeatCount": 5, "availableSeatCount": 4],
              at: B.days(5))
        let listed = try #require(b.state(Self.p, asOf: B.days(6)))
        #expect(listed.apple?.assignedSeatClaimIds == [], "an omitted list is an empty one")
        #expect(listed.drift.map(\.field) == ["available", "assignedSeatClaimIds"], "Apple counts 4 available and no claim; we hold c-1")
    }

    // MARK: Which event a loss cites, and losses no other test reads (found by mutating the code)

    @Test("an expiry cites the EXPIRED notification, not a later event that repeats the transaction")
    func expiryCitesTheNotice() throws {
        var b = devGroup(seats: 3)
        b.claim("c-1", purchaser: Self.p, at: B.days(1))
        let expired = b.notification("EXPIRED", "VOLUNTARY", at: end + 1000,
                                     transaction: B.transaction(id: Self.p, original: Self.p, quantity: 3, purchase: start, expires: end,
                                                                signed: end + 1000))
        b.api("GetTransactionHistory", path: "/inApps/v2/history/\(Self.p)", body: ["hasMore": false], at: B.days(32),
              transactions: [B.transaction(id: Self.p, original: Self.p, quantity: 3, purchase: start, expires: end, signed: B.days(32))])
        let state = try #require(b.state(Self.p, asOf: B.days(33)))
        #expect(state.purchaser?.revocation == Revocation(reason: .expired, at: end, eventId: expired))
        #expect(state.member(claim: "c-1")?.revocation == Revocation(reason: .groupExpired, at: end, eventId: expired,
                                                                     cause: RevocationCause(reason: .expired, at: end, eventId: expired)))
    }

    @Test("a revocation cites the event that first carried it, for the purchaser and for a member")
    func revocationCitesFirstCarrier() throws {
        var b = appleGroup()
        let m = "2000000000000101"
        let member = B.transaction(id: m, original: m, app: "7\(m)", ownership: "ASSIGNED", purchase: B.days(1), expires: end,
                                   signed: B.days(3), model: "APPLE", revocationDate: B.days(3), revocationType: "ASSIGNMENT_REVOKE")
        let purchaser = B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: 5, purchase: start, expires: end,
                                      signed: B.days(5), model: "APPLE", revocationDate: B.days(5), revocationType: "REFUND_FULL")
        let revoke = b.notification("REVOKE", at: B.days(3), transaction: member)
        let refund = b.notification("REFUND", at: B.days(5), transaction: purchaser)
        // Later, a transaction history repeats both revoked transactions (newer signed dates).
        func later(_ tx: JSONValue) -> JSONValue {
            guard case .object(var fields) = tx else { return tx }
            fields["signedDate"] = .int(B.days(8))
            return .object(fields)
        }
        b.api("GetTransactionHistory", path: "/inApps/v2/history/\(Self.p)", body: ["hasMore": false], at: B.days(8),
              transactions: [later(member), later(purchaser)])
        let state = try #require(b.state(Self.p, asOf: B.days(9)))
        #expect(state.purchaser?.revocation == Revocation(reason: .refundFull, at: B.days(5), eventId: refund))
        #expect(state.member(otid: m)?.revocation == Revocation(reason: .assignmentRevoke, at: B.days(3), eventId: revoke))
    }

    @Test("a claim unclaimed before the group expired keeps its unclaim as the reason after the expiry")
    func unclaimBeforeExpiryWins() throws {
        var b = devGroup(seats: 3)
        b.claim("c-1", purchaser: Self.p, at: B.days(1))
        let unclaimed = b.unclaim("c-1", purchaser: Self.p, at: B.days(20))
        b.notification("EXPIRED", "VOLUNTARY", at: end + 1000,
                       transaction: B.transaction(id: Self.p, original: Self.p, quantity: 3, purchase: start, expires: end))
        let state = try #require(b.state(Self.p, asOf: B.days(35)))
        let claim = try #require(state.member(claim: "c-1"))
        #expect(claim.revocation == Revocation(reason: .unclaimedByDeveloper, at: B.days(20), eventId: unclaimed))
        #expect(claim.accessUntil == B.days(20) && !claim.hasAccess)
    }

    @Test("a claim whose purchaser's transaction was never seen has no access (nothing proves the subscription)")
    func claimWithoutPurchaserTransaction() throws {
        var b = B()
        b.claim("c-1", purchaser: Self.p, at: B.days(1))
        let state = try #require(b.state(Self.p, asOf: B.days(2)))
        #expect(state.status == .unknown)
        #expect(state.member(claim: "c-1")?.hasAccess == false)
        #expect(state.seats.claimed == 1)
    }

    @Test("a purchaser revoked with any revocationType keeps it verbatim; members get GROUP_REVOKED",
          arguments: ["REFUND_PRORATED", "FAMILY_REVOKE", "SOMETHING_NEW"])
    func purchaserRevocationTypeVerbatim(_ type: String) throws {
        var b = devGroup(seats: 3)
        b.claim("c-1", purchaser: Self.p, at: B.days(1))
        let refund = b.notification("REFUND", at: B.days(5), transaction: B.transaction(
            id: Self.p, original: Self.p, quantity: 3, purchase: start, expires: end, signed: B.days(5),
            revocationDate: B.days(5), revocationType: type))
        let state = try #require(b.state(Self.p, asOf: B.days(6)))
        #expect(state.status == .revoked)
        #expect(state.purchaser?.revocation == Revocation(reason: RevocationReason(rawValue: type), at: B.days(5), eventId: refund))
        #expect(state.member(claim: "c-1")?.revocation == Revocation(reason: .groupRevoked, at: B.days(5), eventId: refund,
                                                                     cause: RevocationCause(reason: RevocationReason(rawValue: type), at: B.days(5), eventId: refund)))
    }
}
