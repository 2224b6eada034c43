import AppStoreModels
import EventStore
import Foundation
import LedgerEvents
import Projections

/// No group matches a reference.
public struct GroupNotFound: Error, Sendable, CustomStringConvertible {
    /// The reference the user gave.
    public let reference: String
    public var description: String {
        "no group or member matches \(reference) (try a purchaser originalTransactionId, a groupId, an appTransactionId, a transaction id or a seatClaimId)"
    }
}

/// One group a member belongs to, with their access in it.
public struct MemberInGroup: Sendable {
    /// The group's state (as of the requested moment).
    public let group: GroupState
    /// The member's entry in that group.
    public let member: MemberState
}

extension Ledger {
    /// Group keys that `reference` resolves to: a purchaser's `originalTransactionId`, a `groupId`,
    /// or any member identifier (`appTransactionId`, `originalTransactionId`, transaction id, `seatClaimId`).
    public func groupKeys(for reference: String) throws -> [String] {
        try store.groupKeys(forAny: [reference]).sorted()
    }

    /// The state of the group `reference` resolves to, as of `asOf` with events recorded by `knownAt`.
    ///
    /// A reference naming several groups (a member in two groups) picks the purchaser's group of
    /// the reference when there is one, else the first key in order.
    public func groupState(_ reference: String, asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> GroupState {
        let keys = try groupKeys(for: reference)
        let key = keys.contains(reference) ? reference : keys.first
        guard let key, let (membership, facts) = try ProjectionMaintainer(store: store).group(key) else {
            throw GroupNotFound(reference: reference)
        }
        return GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: knownAt)
    }

    /// Every group's state as of `asOf`.
    public func groups(asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> [GroupState] {
        let maintainer = ProjectionMaintainer(store: store)
        return try store.allGroupKeys().compactMap { key in
            guard let (membership, facts) = try maintainer.group(key) else { return nil }
            let state = GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: knownAt)
            // A group none of whose events were recorded by `knownAt` did not exist yet.
            if let knownAt, !facts.contains(where: { $0.recordedAt <= knownAt && $0.occurredAt <= asOf }) { return nil }
            return state
        }
    }

    /// A person's access in every group they belong or belonged to.
    public func memberAccess(_ identifier: String, asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> [MemberInGroup] {
        let keys = try groupKeys(for: identifier)
        guard !keys.isEmpty else { throw GroupNotFound(reference: identifier) }
        let maintainer = ProjectionMaintainer(store: store)
        var result: [MemberInGroup] = []
        for key in keys {
            guard let (membership, facts) = try maintainer.group(key) else { continue }
            let state = GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: knownAt)
            let aliases = Set(try store.groupIndexRows(groupKeys: [key]).filter { $0.identifier == identifier }.map(\.role))
            for member in state.members where member.matches(identifier) || (aliases.contains("purchaser") && member.role == .purchaser) {
                result.append(MemberInGroup(group: state, member: member))
            }
        }
        return result
    }

    /// Recomputes every projection from the log and replaces the stored ones, in one transaction.
    ///
    /// Events without cached facts get them derived first (in a transaction of their own).
    @discardableResult
    public func rebuildProjections(progress: ((String) -> Void)? = nil) throws -> Int {
        let groups = try ProjectionRebuilder(store: store).rebuildAll(progress: progress)
        try recordCurrentProjectionRules()
        return groups
    }

    /// Group keys whose stored projection differs from a fresh recomputation (empty: all match).
    public func staleProjections(progress: ((String) -> Void)? = nil) throws -> [String] {
        try ProjectionRebuilder(store: store).staleGroups(progress: progress)
    }
}

extension MemberState {
    /// Whether `identifier` names this member.
    public func matches(_ identifier: String) -> Bool {
        [originalTransactionId, appTransactionId, seatClaimId, memberRef].contains(identifier)
    }
}
