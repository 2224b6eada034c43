import Foundation

/// The named lifecycles of Apple's *Testing multiseat subscriptions* guide, as scenarios.
public enum BuiltInLifecycles {
    /// Every built-in scenario, in guide order.
    public static let all: [Scenario] = [
        groupPurchase, appleMemberJoin, appleMemberRemoved, appleMemberLeaves, developerClaim, developerUnclaim,
        unclaimSeatsMemberLeave, unclaimSeatsParentalDecline, seatIncrease, decreaseAtRenewal, guide1096,
        partialSeatRefundApple, partialSeatRefundDeveloper, fullRefund, cancelExpire, billingRetry, billingRetryRecovery,
        gracePeriod, graceExpired, billingRecovery, organizationSeats, resubscribe, sandboxPlaceholder, unknownRevocationType,
        lateSigningFamily,
    ]

    /// The scenario named `name`, if any.
    public static func named(_ name: String) -> Scenario? { all.first { $0.name == name } }

    /// Identifier stride between built-ins: each built-in gets its own block of transaction ids,
    /// appTransactionIds, group ids and UUIDs, so all committed streams can go into one ledger.
    public static let identifierStride = 100_000

    /// Options for a built-in: its own identifier block (position × ``identifierStride``).
    /// A scenario that is not built in gets block 0.
    public static func options(for scenario: Scenario, seed: UInt64 = 0) -> SimulationOptions {
        var options = SimulationOptions(seed: seed)
        options.groupIndexBase = (all.firstIndex { $0.name == scenario.name } ?? 0) * identifierStride
        return options
    }

    private static func group(_ model: String, seats: Int) -> GroupDefinition {
        var g = GroupDefinition()
        g.invitationManagement = model
        g.seats = seats
        return g
    }

    private static func claims(_ names: [String], withAppTransactionId: Bool = false) -> [Step] {
        names.map { Step(.claimSeat, member: $0, withAppTransactionId: withAppTransactionId) }
    }

    private static let link: [Step] = [
        Step(.getCustomerGroups, customer: "purchaser", note: "purchaser shared group visibility"),
        Step(.getGroupMembers),
    ]

    static let groupPurchase = Scenario(
        name: "group-purchase",
        description: "Guide §1: an 8-seat Apple-hosted group bought with tiers 5 × 9.99 + 3 × 7.99 = 73.92; the purchaser shares group visibility.",
        group: group("APPLE", seats: 8),
        steps: [Step(.purchase)] + link)

    static let appleMemberJoin = Scenario(
        name: "apple-member-join",
        description: "Guide §2: two Apple-hosted members join (SUBSCRIBED/INITIAL_BUY with their own ASSIGNED transactions); Get Customer Groups and Get Group Members link them.",
        group: group("APPLE", seats: 8),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1"), Step(.memberJoin, member: "m2")] + link)

    static let appleMemberRemoved = Scenario(
        name: "apple-member-removed",
        description: "Guide §3: the purchaser removes an Apple-hosted member: REVOKE with revocationType ASSIGNMENT_REVOKE; group size unchanged.",
        group: group("APPLE", seats: 8),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1"), Step(.memberJoin, member: "m2")] + link
            + [Step(.memberRemove, at: "+1d", member: "m2")])

    static let appleMemberLeaves = Scenario(
        name: "apple-member-leaves",
        description: "Guide §4: an Apple-hosted member leaves: the same REVOKE / ASSIGNMENT_REVOKE as a removal.",
        group: group("APPLE", seats: 8),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1"), Step(.memberJoin, member: "m2")] + link
            + [Step(.memberLeave, at: "+2d", member: "m1")])

    static let developerClaim = Scenario(
        name: "developer-claim",
        description: "Guide §5–6: developer-hosted claims (one with appTransactionId), a retried claim returning the same seatClaimId, Associate Seat, then Get Seat Info.",
        group: group("DEVELOPER", seats: 8),
        steps: [
            Step(.purchase),
            Step(.claimSeat, member: "m1", withAppTransactionId: true),
            Step(.claimSeat, member: "m2"),
            Step(.claimSeatRetry, at: "+30s", member: "m2", note: "timeout on our side: same requestIdentifier"),
            Step(.associateSeat, member: "m2"),
            Step(.claimSeat, member: "m3"),
            Step(.getSeatInfo),
        ])

    static let developerUnclaim = Scenario(
        name: "developer-unclaim",
        description: "Guide §7: our app removes a developer-hosted member with Unclaim Seat; the seat is claimed again by someone else.",
        group: group("DEVELOPER", seats: 8),
        steps: [Step(.purchase)] + claims(["m1", "m2", "m3"]) + [
            Step(.unclaimSeat, at: "+2d", member: "m2"),
            Step(.getSeatInfo),
            Step(.claimSeat, member: "m4", withAppTransactionId: true),
            Step(.getSeatInfo),
        ])

    static let unclaimSeatsMemberLeave = Scenario(
        name: "unclaim-seats-member-leave",
        description: "Guide §8: a developer-hosted member chooses Leave Subscription; UNCLAIM_SEATS carrying only unclaimInfo.",
        group: group("DEVELOPER", seats: 8),
        steps: [Step(.purchase)] + claims(["m1", "m2"], withAppTransactionId: true) + [
            Step(.unclaimSeats, at: "+3d", members: ["m1"], reason: "memberLeft", shape: .unclaimInfo),
            Step(.getSeatInfo),
        ])

    static let unclaimSeatsParentalDecline = Scenario(
        name: "unclaim-seats-parental-decline",
        description: "Guide §6/§8: Associate Seat for an Ask to Buy member, the parent declines; UNCLAIM_SEATS with data + unclaimInfo.",
        group: group("DEVELOPER", seats: 8),
        steps: [
            Step(.purchase),
            Step(.claimSeat, member: "m1"),
            Step(.claimSeat, member: "m2"),
            Step(.associateSeat, member: "m2"),
            Step(.unclaimSeats, at: "+1d", members: ["m2"], reason: "parentalDecline", shape: .dataAndUnclaimInfo),
            Step(.getSeatInfo),
        ])

    static let seatIncrease = Scenario(
        name: "seat-increase",
        description: "Guide §9: 8 → 10 seats mid-period: DID_CHANGE_RENEWAL_PREF/INCREASE_QUANTITY with a second transaction (2 seats, same expiresDate, SEAT_ADDITION).",
        group: group("DEVELOPER", seats: 8),
        steps: [Step(.purchase)] + claims(["m1", "m2", "m3"]) + [
            Step(.increaseSeats, at: "10d", seats: 10),
            Step(.getSeatInfo),
        ])

    static let decreaseAtRenewal = Scenario(
        name: "decrease-at-renewal",
        description: "Guide §10 (Apple-hosted): renewal size changed three times (4, 2, then 3); the purchaser removes two members; DID_RENEW with one 3-seat transaction.",
        group: group("APPLE", seats: 5),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1"), Step(.memberJoin, member: "m2"), Step(.memberJoin, member: "m3"),
                Step(.memberJoin, member: "m4")] + link + [
            Step(.decreaseAtRenewal, at: "20d", seats: 4),
            Step(.decreaseAtRenewal, at: "+1d", seats: 2),
            Step(.decreaseAtRenewal, at: "+1d", seats: 3, note: "raised part of the way back: still DECREASE_QUANTITY"),
            Step(.memberRemove, at: "periodEnd-1h", member: "m4"),
            Step(.memberRemove, at: "periodEnd-1h", member: "m3"),
            Step(.renew),
        ])

    static let guide1096 = Scenario(
        name: "guide-10-9-6",
        description: "Guide §10 (developer-hosted): a group of 10 with 9 claimed renews at 6; the App Store never unclaims, so 4 claims are over capacity.",
        group: group("DEVELOPER", seats: 10),
        steps: [Step(.purchase)] + claims(["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"]) + [
            Step(.getSeatInfo),
            Step(.decreaseAtRenewal, at: "20d", seats: 6),
            Step(.getSeatInfo),
            Step(.renew),
            Step(.getSeatInfo, at: "+1h"),
        ])

    static let partialSeatRefundApple = Scenario(
        name: "partial-seat-refund-apple",
        description: "Guide §11 (Apple-hosted): REFUND/SEATS of 3 of 5 seats: one unheld seat, then the two newest members are revoked (REVOKE).",
        group: group("APPLE", seats: 5),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1"), Step(.memberJoin, member: "m2"), Step(.memberJoin, member: "m3")]
            + link + [Step(.refundSeats, at: "5d", seats: 3)])

    static let partialSeatRefundDeveloper = Scenario(
        name: "partial-seat-refund-developer",
        description: "Guide §11 (developer-hosted): REFUND/SEATS of 2 of 6 seats in a full group, then UNCLAIM_SEATS for the two newest claims.",
        group: group("DEVELOPER", seats: 6),
        steps: [Step(.purchase)] + claims(["m1", "m2", "m3", "m4", "m5"]) + [
            Step(.refundSeats, at: "5d", seats: 2),
            Step(.getSeatInfo, at: "+1h"),
        ])

    static let fullRefund = Scenario(
        name: "full-refund",
        description: "Guide §12: a period with a seat addition is refunded in full: REFUND with REFUND_FULL on both transactions; every claim loses access.",
        group: group("DEVELOPER", seats: 8),
        steps: [Step(.purchase)] + claims(["m1", "m2"]) + [
            Step(.increaseSeats, at: "3d", seats: 10),
            Step(.claimSeat, member: "m3"),
            Step(.refundFull, at: "5d"),
        ])

    static let cancelExpire = Scenario(
        name: "cancel-expire",
        description: "Guide §13: auto-renew turned off (nothing changes), then EXPIRED/VOLUNTARY at the period end: nobody keeps access.",
        group: group("DEVELOPER", seats: 8),
        steps: [Step(.purchase)] + claims(["m1", "m2"], withAppTransactionId: true) + [
            Step(.cancel, at: "10d"),
            Step(.expire),
        ])

    static let billingRetry = Scenario(
        name: "billing-retry",
        description: "Guide §14: renewal fails with no grace period: DID_FAIL_TO_RENEW, isInBillingRetryPeriod; the group loses access.",
        group: group("DEVELOPER", seats: 8),
        steps: [Step(.purchase)] + claims(["m1"]) + [Step(.billingRetry)])

    static let billingRetryRecovery = Scenario(
        name: "billing-retry-recovery",
        description: "Guide §14: billing retry, then DID_RENEW/BILLING_RECOVERY two days later: a new period starts at the recovery, access resumes.",
        group: group("DEVELOPER", seats: 8),
        steps: [Step(.purchase)] + claims(["m1"]) + [Step(.billingRetry), Step(.recover, at: "periodEnd+2d"), Step(.getSeatInfo)])

    static let gracePeriod = Scenario(
        name: "grace-period",
        description: "Guide §14: DID_FAIL_TO_RENEW/GRACE_PERIOD; evaluated three days into grace, members keep access.",
        group: group("APPLE", seats: 8),
        evaluateAt: try? TimeExpression.parse("periodEnd+3d"),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1"), Step(.memberJoin, member: "m2")] + link + [Step(.gracePeriod)])

    static let graceExpired = Scenario(
        name: "grace-expired",
        description: "Guide §14: GRACE_PERIOD_EXPIRED: the whole group loses access at the grace end (billing retry continues).",
        group: group("APPLE", seats: 8),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1")] + link + [Step(.gracePeriod), Step(.graceExpired)])

    static let billingRecovery = Scenario(
        name: "billing-recovery",
        description: "Guide §14: billing recovers within the grace period: DID_RENEW/BILLING_RECOVERY keeps the renewal date; members renew too.",
        group: group("APPLE", seats: 8),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1")] + link + [Step(.gracePeriod), Step(.recover, at: "periodEnd+2d")])

    static let organizationSeats = Scenario(
        name: "organization-seats",
        description: "Guide §15: two organization (Volume Purchasing) seats assigned, Get Customer Groups returns the ORGANIZATION group with roles; one seat revoked.",
        group: group("APPLE", seats: 8),
        steps: [
            Step(.orgAssign, member: "o1", organization: "acme", role: "ADMIN"),
            Step(.getCustomerGroups, customer: "o1"),
            Step(.orgAssign, member: "o2", organization: "acme", role: "NONE"),
            Step(.getCustomerGroups, customer: "o2"),
            Step(.orgRevoke, at: "+2d", member: "o2"),
        ])

    static let resubscribe = Scenario(
        name: "resubscribe",
        description: "Guide §16: cancelled and expired, then SUBSCRIBED/RESUBSCRIBE (same originalTransactionId, new transactionId); the member rejoins with RESUBSCRIBE.",
        group: group("APPLE", seats: 8),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1")] + link + [
            Step(.cancel, at: "10d"),
            Step(.expire),
            Step(.resubscribe, at: "periodEnd+5d"),
            Step(.memberJoin, member: "m1"),
            Step(.getGroupMembers),
        ])

    static let sandboxPlaceholder = Scenario(
        name: "sandbox-placeholder",
        description: "Guide §17: sandbox Get Customer Groups returns the placeholder group 900000000000000000 (ORGANIZATION, ADMIN/NONE) whose only member is 700000000000000000; neither is real.",
        group: group("APPLE", seats: 8),
        steps: [
            Step(.purchase),
            Step(.memberJoin, member: "m1"),
            Step(.getCustomerGroups, customer: "purchaser", placeholder: true, note: "purchaser has not shared group visibility"),
            Step(.getGroupMembers, placeholder: true),
        ])

    static let unknownRevocationType = Scenario(
        name: "unknown-revocation-type",
        description: "A member revoke carrying a revocationType SeatLedger does not know (SOMETHING_NEW): kept verbatim.",
        group: group("APPLE", seats: 8),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1"), Step(.memberJoin, member: "m2")] + link
            + [Step(.memberRemove, at: "+1d", member: "m2", revocationType: "SOMETHING_NEW")])

    static let lateSigningFamily = Scenario(
        name: "late-signing-family",
        description: "Valid time and Family Sharing: a member's REVOKE signed 9 h after its revocationDate, the family member's FAMILY_REVOKE signed 3 h late, a DID_RENEW signed 2 h after the period ended (purchaseDate = the period end: no gap); a FAMILY_SHARED copy of the group purchase (multiSeatInfo included) and a holder with an undocumented inAppOwnershipType (GUEST_PASS), each with access from their own transaction, neither a purchaser nor a seat.",
        group: group("APPLE", seats: 8),
        steps: [Step(.purchase), Step(.memberJoin, member: "m1"), Step(.memberJoin, member: "m2"),
                Step(.familyShare, member: "f1"), Step(.familyShare, member: "g1", ownership: "GUEST_PASS")] + link
            + [Step(.memberRemove, at: "+1d", member: "m2", signedLate: "9h"),
               Step(.familyRevoke, at: "+1d", member: "f1", signedLate: "3h"),
               Step(.renew, signedLate: "2h")])
}
