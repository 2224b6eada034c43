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

    /// The state of `membership`'s group as of `asOf`, using events recorded by `knownAt` (`nil`: all).
    public static func project(_ membership: GroupMembership, facts: [EventFacts], asOf: EpochMillis,
                               knownAt: EpochMillis?) -> GroupState {
        let visible = facts.filter { fact in fact.occurredAt <= asOf && (knownAt.map { fact.recordedAt <= $0 } ?? true) }
            .sorted { ($0.occurredAt, $0.eventId) < ($1.occurredAt, $1.eventId) }
        // Identity as of the moment: links whose evidence is not visible yet do not count.
        let current = GroupIdentityResolver.resolve(visible)[membership.groupKey] ?? GroupMembership(groupKey: membership.groupKey)
        var state = evaluate(current, visible, at: asOf)
        state.knownAt = knownAt
        if let apple = state.apple {
            // Observed at `asOf` (Get Seat Info the latest event, as after a reconcile): the
            // evaluation at the observation has the same inputs as the one just made.
            let atObservation = apple.observedAt == asOf
                ? state : evaluate(current, visible.filter { $0.occurredAt <= apple.observedAt }, at: apple.observedAt)
            state.drift = drift(ours: atObservation, apple: apple)
        }
        return state
    }

    // MARK: Evaluation

    static func evaluate(_ membership: GroupMembership, _ facts: [EventFacts], at t: EpochMillis) -> GroupState {
        let ledger = FactIndex(facts)
        let purchaser = membership.purchaserOriginalTransactionId.map { PurchaserTimeline(otid: $0, index: ledger, at: t) }

        var members: [MemberState] = []
        var claimed: Int64 = 0
        var assigned: Int64 = 0
        if let purchaser, purchaser.isKnown {
            members.append(purchaser.member)
        }
        let seatRefunds = purchaser?.seatRefundTimes ?? []
        for claimId in membership.seatClaimIds.sorted() {
            guard let claim = ClaimTimeline(claimId: claimId, index: ledger, at: t, seatRefunds: seatRefunds) else { continue }
            let member = claim.member(purchaser: purchaser)
            if claim.isActive { claimed += 1 }
            members.append(member)
        }
        for otid in membership.memberOriginalTransactionIds.sorted() {
            guard let timeline = AssignedTimeline(otid: otid, index: ledger, at: t, seatRefunds: seatRefunds) else { continue }
            let linked = !membership.groupKey.hasPrefix(GroupIdentityResolver.unlinkedPrefix)
            let member = timeline.member(group: linked ? purchaser : nil)
            if member.hasAccess, linked { assigned += 1 }
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
            let held = claimed + assigned
            seats.available = max(0, total - 1 - held)
            seats.overCapacity = max(0, held - (total - 1))
            seats.renewalOverCapacity = max(0, held - ((seats.renewalTotal ?? total) - 1))
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

/// The visible facts of one group, indexed for the timelines.
struct FactIndex {
    let facts: [EventFacts]
    /// Latest version of every transaction, by transaction id.
    var transactions: [String: VersionedTransaction] = [:]
    /// Latest renewal info per original transaction id (with its event id).
    var renewals: [String: (fact: RenewalFact, key: (EpochMillis, EpochMillis, String))] = [:]
    /// Every `gracePeriodExpiresDate` any renewal info version carried, per original transaction id.
    var graceDates: [String: Set<EpochMillis>] = [:]
    /// Transaction ids by original transaction id (so a member's lookup does not scan every transaction).
    private var transactionIdsByOriginal: [String: [String]] = [:]
    /// Positions in `facts` of the facts that name each seat claim (so a claim's lookup does not scan every fact).
    private var factsByClaim: [String: [Int]] = [:]

    init(_ facts: [EventFacts]) {
        self.facts = facts
        for (offset, fact) in facts.enumerated() {
            var claims: [String] = fact.unclaimSeatIds
            if let id = fact.claimedSeatId { claims.append(id) }
            if let id = fact.seatPathClaimId { claims.append(id) }
            claims += fact.seatInfo?.assignedSeatClaimIds ?? []
            for claim in claims where factsByClaim[claim]?.last != offset { factsByClaim[claim, default: []].append(offset) }
            for tx in fact.transactions {
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
            for renewal in fact.renewals {
                if let grace = renewal.gracePeriodExpiresDate { graceDates[renewal.originalTransactionId, default: []].insert(grace) }
                let key = (renewal.signedDate ?? fact.occurredAt, fact.occurredAt, fact.eventId)
                if let existing = renewals[renewal.originalTransactionId], existing.key >= key { continue }
                renewals[renewal.originalTransactionId] = (renewal, key)
            }
        }
        for (id, versioned) in transactions { transactionIdsByOriginal[versioned.fact.originalTransactionId, default: []].append(id) }
    }

    /// The facts that name `claimId` (Claim Seat, Get Seat Info listing, a seat path, `UNCLAIM_SEATS`), in order.
    func facts(namingClaim claimId: String) -> [EventFacts] {
        (factsByClaim[claimId] ?? []).map { facts[$0] }
    }

    /// Latest versions of the transactions of `otid` (optionally only purchaser or assigned ones).
    func transactions(of otid: String, assigned: Bool) -> [VersionedTransaction] {
        (transactionIdsByOriginal[otid] ?? []).compactMap { transactions[$0] }.filter { $0.fact.isAssigned == assigned }
            .sorted { ($0.fact.purchaseDate ?? 0, $0.fact.transactionId) < ($1.fact.purchaseDate ?? 0, $1.fact.transactionId) }
    }

    func latestAssignedTransaction(in otids: Set<String>) -> TransactionFact? {
        transactions.values.filter { otids.contains($0.fact.originalTransactionId) }
            .max { $0.versionKey < $1.versionKey }?.fact
    }
}
