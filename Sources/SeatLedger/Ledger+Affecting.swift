import AppStoreModels
import LedgerEvents
import Projections

extension Ledger {
    /// Positions (ascending) of every event that mentions `identifier`, and of every event that
    /// affected what it names through the projections' identities (`events --mentioning`):
    ///
    /// - a group (its key, its purchaser's `originalTransactionId`, one of its `groupId`s): every
    ///   event its fold reads, such as an `UNCLAIM_SEATS` that names only the group's seat claim ids;
    /// - a member (a `memberRef`, `seatClaimId`, `appTransactionId`, …), in each group it belongs
    ///   or belonged to: the events naming the member's own identifiers (a `memberRef`'s seat claim
    ///   ids), the member's evidence, and the event that revoked its access and the one that caused
    ///   that (a purchaser's seat `REFUND` that cascaded to an unclaim).
    ///
    /// Members are read from each group as of the group's own latest event: every member it knows
    /// of and every revocation an event caused count, and the answer does not depend on other
    /// groups' events or on the clock (an expiry that only time brings is no event's doing).
    public func positions(affecting identifier: String) throws -> [Int64] {
        var positions = Set(try store.positions(mentioning: identifier))
        let keys = try groupKeys(for: identifier)
        guard !keys.isEmpty else { return positions.sorted() }
        let maintainer = ProjectionMaintainer(store: store)
        for key in keys {
            guard let (membership, facts) = try maintainer.group(key) else { continue }
            let asOf = facts.map(\.occurredAt).max() ?? 0
            if membership.names(group: identifier) {
                positions.formUnion(facts.map(\.position))
                continue
            }
            let byEventId = Dictionary(facts.map { ($0.eventId, $0.position) }, uniquingKeysWith: { first, _ in first })
            for found in try foldedMemberAccess(identifier, inGroup: key, asOf: asOf, knownAt: nil, maintainer: maintainer) {
                let member = found.member
                let own = Set([member.seatClaimId, member.appTransactionId, member.originalTransactionId].compactMap { $0 })
                positions.formUnion(try store.positions(mentioningAny: own))
                let events = member.evidence + [member.revocation?.eventId, member.revocation?.cause?.eventId].compactMap { $0 }
                positions.formUnion(events.compactMap { byEventId[$0] })
            }
        }
        return positions.sorted()
    }
}

extension GroupMembership {
    /// Whether `identifier` names the group itself: its key, its purchaser's
    /// `originalTransactionId` or one of its `groupId`s (not one of its members).
    func names(group identifier: String) -> Bool {
        groupKey == identifier || purchaserOriginalTransactionId == identifier || groupIds.contains(identifier)
    }
}
