import AppStoreModels

/// Valid time: when what each event says took effect, from the dates Apple signs in its payloads
/// rather than from the time Apple signed the payload (`Events/projection-rules.md`, "Two clocks").
///
/// - A transaction version takes effect at its `revocationDate` when it reports a revocation; the
///   first known version of a transaction (the one with the earliest transaction `signedDate`)
///   at its `purchaseDate` (the transaction exists from then, whenever its notification was
///   signed: a `DID_RENEW` signed two hours late leaves no gap); any other version, and any
///   version reporting refunded seats (Apple signs no date for a seat refund), at the signing
///   time of the event that carried it.
/// - The billing state in renewal info (`gracePeriodExpiresDate`, `isInBillingRetryPeriod`)
///   takes effect at its grace end when that has passed by the signing time (`GRACE_PERIOD_EXPIRED`
///   reports the grace end), else at the end of the period the event's transaction reports as
///   ended (a `DID_FAIL_TO_RENEW` signed minutes after the period ended describes the time since
///   it ended), else at the signing time.
/// - Everything else (renewal quantities, claims, unclaims, API observations) at the signing
///   time (`occurredAt`).
///
/// Nothing takes effect later than its event's signing time. An event's effective time is the
/// earliest of its parts: the event takes part in the state as of `T` when it is at or before `T`.
/// "First known version" is a property of the set of events known (at `knownAt`): when a
/// backfill brings an earlier version, that one becomes the first. Pure.
public struct EffectiveTimes: Sendable {
    /// The effective time of each event, by event id.
    public private(set) var byEvent: [String: EpochMillis] = [:]
    /// When each transaction of an event (same order as `EventFacts.transactions`) takes effect, by event id.
    private var transactionTimes: [String: [EpochMillis]] = [:]
    /// When the billing state of an event's renewal info takes effect, by event id.
    private var billingTimes: [String: EpochMillis] = [:]

    /// The effective times of a set of events.
    public init(_ facts: [EventFacts]) {
        // The first known version of each transaction: the least (transaction signedDate, occurredAt, eventId).
        var first: [String: (key: (EpochMillis, EpochMillis, String), eventId: String)] = [:]
        for fact in facts {
            for tx in fact.transactions {
                let key = (tx.signedDate ?? fact.occurredAt, fact.occurredAt, fact.eventId)
                if let existing = first[tx.transactionId], existing.key <= key { continue }
                first[tx.transactionId] = (key, fact.eventId)
            }
        }
        for fact in facts {
            let signed = fact.occurredAt
            var earliest = signed
            var times: [EpochMillis] = []
            times.reserveCapacity(fact.transactions.count)
            for tx in fact.transactions {
                var at = signed
                if let revoked = tx.revocationDate { at = min(at, revoked) }
                let refundsSeats = (tx.revokedSeatQuantity ?? 0) != 0
                if !refundsSeats, first[tx.transactionId]?.eventId == fact.eventId, let purchased = tx.purchaseDate {
                    at = min(at, purchased)
                }
                times.append(at)
                earliest = min(earliest, at)
            }
            if !fact.transactions.isEmpty { transactionTimes[fact.eventId] = times }
            var billing = signed
            for renewal in fact.renewals where renewal.gracePeriodExpiresDate != nil || renewal.isInBillingRetryPeriod == true {
                // A grace end already passed is what the event reports (GRACE_PERIOD_EXPIRED): from then.
                if let grace = renewal.gracePeriodExpiresDate, grace <= signed {
                    billing = min(billing, grace)
                    continue
                }
                let ended = fact.transactions.filter { $0.originalTransactionId == renewal.originalTransactionId }
                    .compactMap(\.expiresDate).filter { $0 <= signed }.max()
                if let ended { billing = min(billing, ended) }
            }
            if billing < signed { billingTimes[fact.eventId] = billing }
            byEvent[fact.eventId] = min(earliest, billing)
        }
    }

    /// When `fact` takes effect (its signing time if it is not one of the set's events).
    public func effectiveAt(_ fact: EventFacts) -> EpochMillis { byEvent[fact.eventId] ?? fact.occurredAt }

    /// When the transaction at `index` in `fact.transactions` takes effect.
    func transactionEffectiveAt(_ fact: EventFacts, index: Int) -> EpochMillis {
        transactionTimes[fact.eventId].flatMap { index < $0.count ? $0[index] : nil } ?? fact.occurredAt
    }

    /// When the billing state of `fact`'s renewal info takes effect.
    func billingEffectiveAt(_ fact: EventFacts) -> EpochMillis { billingTimes[fact.eventId] ?? fact.occurredAt }
}
