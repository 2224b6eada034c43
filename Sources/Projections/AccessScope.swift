import AppStoreModels

/// What one derivation of access transitions covers: one group (the facts ``GroupProjection``
/// folds) or one individual subscription (the facts ``SubscriptionProjection`` folds).
///
/// Its answer at a moment is the entitlement of every subject it knows, per product, as the
/// projections give it: one ``AccessEntry`` per ``AccessKey``. Pure.
public enum AccessScope: Sendable, Hashable {
    /// A group, by its key (the purchaser's `originalTransactionId`, a `groupId`, or
    /// `unlinked:<originalTransactionId>`): its purchaser, claims and transaction holders.
    case group(String)
    /// An individual subscription (an own purchase without `multiSeatInfo`), by its `originalTransactionId`.
    case subscription(String)

    /// The scope's key in transition ids and ``AccessKey``: `group:<groupKey>` or `subscription:<originalTransactionId>`.
    public var key: String {
        switch self {
        case .group(let groupKey): return "group:" + groupKey
        case .subscription(let otid): return "subscription:" + otid
        }
    }

    /// The scope a ``key`` names; `nil` for any other text.
    public init?(key: String) {
        if key.hasPrefix("group:") { self = .group(String(key.dropFirst(6))) }
        else if key.hasPrefix("subscription:") { self = .subscription(String(key.dropFirst(13))) }
        else { return nil }
    }

    /// The group key, `nil` for an individual subscription.
    public var groupKey: String? {
        if case .group(let groupKey) = self { return groupKey }
        return nil
    }

    /// The answer at `asOf` from `facts` (all of them count: filter by knowledge first; a
    /// retraction among them withdraws its event): every subject's entitlement per product.
    ///
    /// A group gives one entry per member of ``GroupProjection/project(_:facts:asOf:knownAt:)``
    /// (the grant ``EntitlementGrant/init(member:groupKey:productId:purchaserOriginalTransactionId:status:)``
    /// makes of it); an individual subscription one entry, or none while no transaction of it is visible.
    public func answer(facts: [EventFacts], asOf: EpochMillis) -> [AccessKey: AccessEntry] {
        var result: [AccessKey: AccessEntry] = [:]
        func add(_ grant: EntitlementGrant) {
            let subject = AccessSubject(scope: self, grant: grant)
            var key = AccessKey(scope: self.key, subject: subject.key, productId: grant.productId)
            // Two members never share a seat claim or an original transaction id; should they,
            // the second keeps its own key (its source appended) rather than hiding the first.
            if result[key] != nil {
                key = AccessKey(scope: self.key, subject: subject.key + "#" + grant.source.rawValue, productId: grant.productId)
            }
            result[key] = AccessEntry(subject: subject, snapshot: AccessSnapshot(grant: grant))
        }
        switch self {
        case .group(let groupKey):
            let state = GroupProjection.project(GroupMembership(groupKey: groupKey), facts: facts, asOf: asOf, knownAt: nil)
            for member in state.members {
                add(EntitlementGrant(member: member, groupKey: groupKey, productId: state.productId,
                                     purchaserOriginalTransactionId: state.purchaserOriginalTransactionId, status: state.status))
            }
        case .subscription(let otid):
            guard let state = SubscriptionProjection.project(originalTransactionId: otid, facts: facts, asOf: asOf, knownAt: nil)
            else { break }
            add(EntitlementGrant(subscription: state))
        }
        return result
    }

    /// The first moment after `asOf` at which the answer from `facts` can differ from the one at
    /// `asOf` (``GroupProjection/nextChange(after:facts:)``: the least date the facts carry after
    /// it; the subscription fold reads the same dates); `nil` when none can. A candidate only:
    /// the answer may turn out the same then.
    public func candidateChange(after asOf: EpochMillis, facts: [EventFacts]) -> EpochMillis? {
        GroupProjection.nextChange(after: asOf, facts: facts)
    }
}
