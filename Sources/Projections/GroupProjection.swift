import AppStoreModels
import LedgerEvents

/// Folds a group's events into its state at a moment: a pure function, no I/O, no clock.
///
/// The same set of events in any order gives the same state (every fact merges by "latest
/// wins" on Apple's dates, ties broken by event id). See `Events/projection-rules.md`.
///
/// ```swift
/// let groups = GroupIdentityResolver.resolve(facts)
/// let state = GroupProjection.project(groups["2000000000000001"]!, facts: facts, asOf: now, knownAt: nil)
/// state.seats.available
/// ```
public enum GroupProjection {
    /// How long after a `REFUND`/`SEATS` an unclaim or revocation is attributed to the seat refund.
    public static let seatRefundWindow: EpochMillis = 24 * 3600 * 1000

    /// The group's seat refund nearest to `moment` within ``seatRefundWindow`` either side (ties:
    /// the smaller event id), or `nil`: the purchaser-level event behind a claim the App Store
    /// unclaimed or a member's revocation, whichever Apple signed first.
    static func nearestSeatRefund(to moment: EpochMillis, among refunds: [(at: EpochMillis, eventId: String)])
        -> (at: EpochMillis, eventId: String)? {
        refunds.filter { moment.saturatingSubtract($0.at).magnitude <= UInt64(seatRefundWindow) }
            .min { (moment.saturatingSubtract($0.at).magnitude, $0.eventId) < (moment.saturatingSubtract($1.at).magnitude, $1.eventId) }
    }

    /// The state of `membership`'s group as of `asOf`, using events recorded by `knownAt` (`nil`: all).
    ///
    /// Valid time is the time in the payload, not the signing time: an event takes part when its
    /// effective time (``EffectiveTimes``) is at or before `asOf`, and each transaction version it carries
    /// counts from its own effective date (a revocation from its `revocationDate`, a renewal from
    /// its `purchaseDate`), so the answer for a moment does not change when a late-signed event
    /// about it arrives, only the knowledge does (`knownAt`).
    public static func project(_ membership: GroupMembership, facts: [EventFacts], asOf: EpochMillis,
                               knownAt: EpochMillis?) -> GroupState {
        // A retraction recorded by `knownAt` withdraws its event; before that moment the event counted.
        let known = Retraction.withdraw(knownAt.map { knownAt in facts.subset { $0.recordedAt <= knownAt } } ?? facts)
        let times = EffectiveTimes(known)
        let visible = known.subset { times.effectiveAt($0) <= asOf }
            .sortedIfNeeded { ($0.occurredAt, $0.eventId) < ($1.occurredAt, $1.eventId) }
        // Identity as of the moment: links whose evidence is not visible yet do not count.
        let current = GroupIdentityResolver.resolve(visible)[membership.groupKey] ?? GroupMembership(groupKey: membership.groupKey)
        var state = evaluate(current, visible, times: times, at: asOf)
        state.knownAt = knownAt
        if let apple = state.apple {
            // Observed at `asOf` (Get Seat Info the latest event, as after a reconcile): the
            // evaluation at the observation has the same inputs as the one just made.
            let atObservation = apple.observedAt == asOf
                ? state : evaluate(current, visible, times: times, at: apple.observedAt)
            state.drift = drift(ours: atObservation, apple: apple)
        }
        return state
    }

    // MARK: Evaluation

    static func evaluate(_ membership: GroupMembership, _ facts: [EventFacts], times: EffectiveTimes, at t: EpochMillis) -> GroupState {
        let ledger = FactIndex(facts, times: times, at: t)
        let purchaser = membership.purchaserOriginalTransactionId.map { PurchaserTimeline(otid: $0, index: ledger, at: t) }

        var members: [MemberState] = []
        var claimed: Int64 = 0
        var assigned: Int64 = 0
        if let purchaser, purchaser.isKnown {
            members.append(purchaser.member)
        }
        let seatRefunds = purchaser?.seatRefunds ?? []
        for claimId in membership.seatClaimIds.sorted() {
            guard let claim = ClaimTimeline(claimId: claimId, index: ledger, at: t, seatRefunds: seatRefunds) else { continue }
            let member = claim.member(purchaser: purchaser)
            if claim.isActive { claimed += 1 }
            members.append(member)
        }
        for otid in membership.memberOriginalTransactionIds.sorted() {
            guard let timeline = AssignedTimeline(otid: otid, index: ledger, at: t, seatRefunds: purchaser?.seatRefunds ?? [])
            else { continue }
            let linked = !membership.groupKey.hasPrefix(GroupIdentityResolver.unlinkedPrefix)
            let member = timeline.member(group: linked ? purchaser : nil)
            // Only ASSIGNED holders take a seat: a family member shares the purchaser's, and an
            // unknown ownership value says nothing about seats.
            if member.hasAccess, linked, member.role == .assigned { assigned += 1 }
            members.append(member)
        }
        members.sort { $0.sortKey < $1.sortKey }

        var seats = SeatCounts()
        seats.total = purchaser?.total
        seats.refunded = purchaser?.refunded ?? 0
        seats.renewalTotal = purchaser?.renewalQuantity ?? seats.total
        seats.claimed = claimed
        seats.assigned = assigned
        if let total = seats.total {
            // Saturating: `total` and `renewalTotal` are Apple's numbers (any Int64).
            let held = claimed.saturatingAdd(assigned)
            seats.available = max(0, total.saturatingSubtract(1).saturatingSubtract(held))
            seats.overCapacity = max(0, held.saturatingSubtract(total.saturatingSubtract(1)))
            seats.renewalOverCapacity = max(0, held.saturatingSubtract((seats.renewalTotal ?? total).saturatingSubtract(1)))
        }

        var apple: AppleSeatView?
        if let p = membership.purchaserOriginalTransactionId,
           let latest = ledger.facts.last(where: { $0.seatInfo != nil && $0.isSuccessfulResponse && $0.seatPathTransactionId == p }),
           let info = latest.seatInfo {
            apple = AppleSeatView(totalSeatCount: info.totalSeatCount, availableSeatCount: info.availableSeatCount,
                                  assignedSeatClaimIds: info.assignedSeatClaimIds.sorted(), observedAt: latest.occurredAt,
                                  eventId: latest.eventId)
        }
        let anyTx = purchaser?.latestTransaction ?? ledger.latestAssignedTransaction(in: membership.memberOriginalTransactionIds)
        return GroupState(
            groupKey: membership.groupKey, purchaserOriginalTransactionId: membership.purchaserOriginalTransactionId,
            groupIds: membership.groupIds.sorted(), productId: anyTx?.productId ?? membership.productId,
            invitationManagement: anyTx?.invitationManagement, status: purchaser?.status ?? .unknown, asOf: t, knownAt: nil,
            seats: seats, members: members, apple: apple, drift: [], periodEnd: purchaser?.periodEnd)
    }

    static func drift(ours: GroupState, apple: AppleSeatView) -> [Drift] {
        var result: [Drift] = []
        if let theirs = apple.totalSeatCount, ours.seats.total != theirs {
            result.append(Drift(field: "total", ours: .optional(ours.seats.total), apple: .int(theirs)))
        }
        if let theirs = apple.availableSeatCount, ours.seats.available != theirs {
            result.append(Drift(field: "available", ours: .optional(ours.seats.available), apple: .int(theirs)))
        }
        let ourClaims = Set(ours.members.filter { $0.role == .claim && $0.revocation?.reason != .unclaimedByDeveloper
            && $0.revocation?.reason != .unclaimedByAppStore && $0.revocation?.reason != .seatRefund }.compactMap(\.seatClaimId))
        let appleClaims = Set(apple.assignedSeatClaimIds)
        if ourClaims != appleClaims {
            result.append(Drift(field: "assignedSeatClaimIds",
                                ours: .array(ourClaims.subtracting(appleClaims).sorted().map(JSONValue.string)),
                                apple: .array(appleClaims.subtracting(ourClaims).sorted().map(JSONValue.string))))
        }
        return result
    }
}

/// A transaction's latest version, with the events that carried it.
///
/// A class: the timelines copy these into filtered and sorted lists many times per fold, and a
/// copy of the struct retained (and later released) each of its dozen strings. Only
/// ``FactIndex/init(_:)`` mutates one, while building its own index; afterwards they are read-only.
final class VersionedTransaction {
    var fact: TransactionFact
    /// The event that carried the latest version.
    var eventId: String
    /// The first event (by Apple time) whose version carried `revocationDate`.
    var revocationEventId: String?
    /// That event's (occurredAt, eventId), to order revocations of different transactions.
    var revocationEventKey: (EpochMillis, String)?
    var versionKey: (EpochMillis, EpochMillis, String)

    init(fact: TransactionFact, eventId: String, revocationEventId: String?, revocationEventKey: (EpochMillis, String)?,
         versionKey: (EpochMillis, EpochMillis, String)) {
        self.fact = fact
        self.eventId = eventId
        self.revocationEventId = revocationEventId
        self.revocationEventKey = revocationEventKey
        self.versionKey = versionKey
    }
}

/// The visible facts of one group at one moment, indexed for the timelines.
///
/// Built from the events effective by the moment (``EffectiveTimes``); what each part of an
/// event says counts from its own effective time: a transaction version from its revocation or
/// purchase date, the billing state of renewal info (grace end, billing retry) from the end of the
/// period its event reports as ended, everything else (renewal quantities, claims, unclaims, API
/// observations) from the event's signing time.
struct FactIndex {
    /// The facts signed (or answered) by the moment, in (occurredAt, eventId) order.
    let facts: [EventFacts]
    /// Every fact effective by the moment (late-signed ones included), in the same order.
    let effective: [EventFacts]
    /// Latest version of every transaction in force at the moment, by transaction id.
    var transactions: [String: VersionedTransaction] = [:]
    /// Latest renewal info signed by the moment, per original transaction id (with its event id).
    var renewals: [String: (fact: RenewalFact, key: (EpochMillis, EpochMillis, String))] = [:]
    /// Latest renewal info of an event effective by the moment, per original transaction id: its
    /// billing state (`isInBillingRetryPeriod`) describes the time since the period its event concerns.
    var billingRenewals: [String: (fact: RenewalFact, key: (EpochMillis, EpochMillis, String))] = [:]
    /// Every `gracePeriodExpiresDate` a renewal info version of an effective event carried, per original transaction id.
    var graceDates: [String: Set<EpochMillis>] = [:]
    /// Transaction ids by original transaction id (so a member's lookup does not scan every transaction).
    private var transactionIdsByOriginal: [String: [String]] = [:]
    /// Positions in `facts` of the facts that name each seat claim (so a claim's lookup does not scan every fact).
    private var factsByClaim: [String: [Int]] = [:]

    init(_ all: [EventFacts], times: EffectiveTimes, at t: EpochMillis) {
        effective = all.subset { times.effectiveAt($0) <= t }
        facts = effective.subset { $0.occurredAt <= t }
        for (offset, fact) in facts.enumerated() {
            var claims: [String] = fact.unclaimSeatIds
            if let id = fact.claimedSeatId { claims.append(id) }
            if let id = fact.seatPathClaimId { claims.append(id) }
            claims += fact.seatInfo?.assignedSeatClaimIds ?? []
            for claim in claims where factsByClaim[claim]?.last != offset { factsByClaim[claim, default: []].append(offset) }
            for renewal in fact.renewals {
                let key = (renewal.signedDate ?? fact.occurredAt, fact.occurredAt, fact.eventId)
                if let existing = renewals[renewal.originalTransactionId], existing.key >= key { continue }
                renewals[renewal.originalTransactionId] = (renewal, key)
            }
        }
        for fact in effective {
            for (offset, tx) in fact.transactions.enumerated() where times.transactionEffectiveAt(fact, index: offset) <= t {
                let key = (tx.signedDate ?? fact.occurredAt, fact.occurredAt, fact.eventId)
                if let existing = transactions[tx.transactionId] {
                    if tx.revocationDate != nil, existing.revocationEventKey.map({ (fact.occurredAt, fact.eventId) < $0 }) ?? true {
                        existing.revocationEventId = fact.eventId
                        existing.revocationEventKey = (fact.occurredAt, fact.eventId)
                    }
                    if key > existing.versionKey {
                        existing.fact = tx
                        existing.eventId = fact.eventId
                        existing.versionKey = key
                    }
                } else {
                    transactions[tx.transactionId] = VersionedTransaction(
                        fact: tx, eventId: fact.eventId, revocationEventId: tx.revocationDate != nil ? fact.eventId : nil,
                        revocationEventKey: tx.revocationDate != nil ? (fact.occurredAt, fact.eventId) : nil, versionKey: key)
                }
            }
            for renewal in fact.renewals where times.billingEffectiveAt(fact) <= t {
                if let grace = renewal.gracePeriodExpiresDate { graceDates[renewal.originalTransactionId, default: []].insert(grace) }
                let key = (renewal.signedDate ?? fact.occurredAt, fact.occurredAt, fact.eventId)
                if let existing = billingRenewals[renewal.originalTransactionId], existing.key >= key { continue }
                billingRenewals[renewal.originalTransactionId] = (renewal, key)
            }
        }
        for (id, versioned) in transactions { transactionIdsByOriginal[versioned.fact.originalTransactionId, default: []].append(id) }
    }

    /// The facts that name `claimId` (Claim Seat, Get Seat Info listing, a seat path, `UNCLAIM_SEATS`), in order.
    func facts(namingClaim claimId: String) -> [EventFacts] {
        (factsByClaim[claimId] ?? []).map { facts[$0] }
    }

    /// Latest versions of the transactions of `otid`: the customer's own purchases (`held` false)
    /// or access held from someone else's purchase (`ASSIGNED`, `FAMILY_SHARED`, unknown ownership).
    func transactions(of otid: String, held: Bool) -> [VersionedTransaction] {
        (transactionIdsByOriginal[otid] ?? []).compactMap { transactions[$0] }.filter { $0.fact.isHeldAccess == held }
            .sorted { ($0.fact.purchaseDate ?? 0, $0.fact.transactionId) < ($1.fact.purchaseDate ?? 0, $1.fact.transactionId) }
    }

    func latestAssignedTransaction(in otids: Set<String>) -> TransactionFact? {
        transactions.values.filter { otids.contains($0.fact.originalTransactionId) }
            .max { $0.versionKey < $1.versionKey }?.fact
    }
}
