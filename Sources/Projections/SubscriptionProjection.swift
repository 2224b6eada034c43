import AppStoreModels
import LedgerEvents

/// One individual subscription (a customer's own purchase with no `multiSeatInfo`: the same
/// product sold to one person) at a moment: what ``SubscriptionProjection`` folds.
public struct SubscriptionState: Sendable, Hashable {
    /// The subscription's `originalTransactionId`.
    public var originalTransactionId: String
    /// The product of its latest transaction; `nil` when none says.
    public var productId: String?
    /// The subscriber's `appTransactionId`, when a transaction carries it.
    public var appTransactionId: String?
    /// The subscription's status at `asOf`, with the group statuses' meanings (`ACTIVE`, `GRACE_PERIOD`, …).
    public var status: GroupStatus
    /// Whether the subscriber has access at `asOf`.
    public var hasAccess: Bool
    /// Start of the current (or last) continuous access.
    public var accessSince: EpochMillis?
    /// When access ends (period or grace end) or ended (`revocation.at`).
    public var accessUntil: EpochMillis?
    /// How access was lost; `nil` while it lasts.
    public var revocation: Revocation?
    /// The valid time evaluated.
    public var asOf: EpochMillis
}

/// Folds an individual subscription, the way ``GroupProjection`` folds a group purchaser: the
/// same periods, billing grace, billing retry, revocation and late-news rules (a pure function,
/// no I/O, no clock). A group purchaser's subscription is a group's, never folded here.
public enum SubscriptionProjection {
    /// The state of the subscription `originalTransactionId` as of `asOf`, using events recorded
    /// by `knownAt` (`nil`: all); `nil` when no own, non-multiseat transaction of it is visible then.
    public static func project(originalTransactionId otid: String, facts: [EventFacts], asOf: EpochMillis,
                               knownAt: EpochMillis?) -> SubscriptionState? {
        let known = Retraction.withdraw(knownAt.map { knownAt in facts.subset { $0.recordedAt <= knownAt } } ?? facts)
        let times = EffectiveTimes(known)
        let visible = known.subset { times.effectiveAt($0) <= asOf }
            .sortedIfNeeded { ($0.occurredAt, $0.eventId) < ($1.occurredAt, $1.eventId) }
        let index = FactIndex(visible, times: times, at: asOf)
        let own = index.transactions(of: otid, held: false)
        // A subscription that ever carried `multiSeatInfo` is a group purchase: the group answers for it.
        guard !own.isEmpty, !own.contains(where: { $0.fact.isMultiSeat }) else { return nil }
        let timeline = PurchaserTimeline(otid: otid, index: index, at: asOf)
        guard timeline.isKnown else { return nil }
        return SubscriptionState(originalTransactionId: otid, productId: timeline.latestTransaction?.productId,
                                 appTransactionId: timeline.appTransactionId, status: timeline.status,
                                 hasAccess: timeline.hasAccess, accessSince: timeline.accessSince,
                                 accessUntil: timeline.accessUntil, revocation: timeline.hasAccess ? nil : timeline.loss,
                                 asOf: asOf)
    }

    /// The `originalTransactionId`s of the individual subscriptions (own purchases without
    /// `multiSeatInfo`) among `facts`' transactions whose ids include one of `identifiers`.
    public static func subscriptions(naming identifiers: Set<String>, in facts: [EventFacts]) -> Set<String> {
        var result = Set<String>(), multiSeat = Set<String>()
        for fact in facts {
            for tx in fact.transactions where tx.isOwnPurchase {
                if tx.isMultiSeat { multiSeat.insert(tx.originalTransactionId); continue }
                if identifiers.contains(tx.originalTransactionId) || identifiers.contains(tx.transactionId)
                    || (tx.appTransactionId.map(identifiers.contains) ?? false) {
                    result.insert(tx.originalTransactionId)
                }
            }
        }
        return result.subtracting(multiSeat)
    }
}
