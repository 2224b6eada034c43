import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import Projections
import Reports

extension Ledger {
    /// The group `reference` resolves to, with the facts of every event that concerns it.
    public func groupFacts(_ reference: String) throws -> (GroupMembership, [EventFacts]) {
        let keys = try groupKeys(for: reference)
        let key = keys.contains(reference) ? reference : keys.first
        guard let key, let group = try ProjectionMaintainer(store: store).group(key) else { throw GroupNotFound(reference: reference) }
        return group
    }

    /// Every event touching the group, in effective order, with the state change each caused.
    public func replay(_ reference: String, from: EpochMillis? = nil, to: EpochMillis? = nil, knownAt: EpochMillis? = nil,
                       now: EpochMillis) throws -> [ReplayEntry] {
        let (membership, facts) = try groupFacts(reference)
        let duplicates = try store.duplicateCounts(for: facts.map(\.eventId))
        return GroupReplay.entries(membership: membership, facts: facts, from: from, to: to, knownAt: knownAt, now: now,
                                   duplicateArrivals: duplicates)
    }

    /// What changed between two knowledge times (e.g. before and after a backfill), as of `asOf`.
    public func diff(_ reference: String, knownAt a: EpochMillis, _ b: EpochMillis, asOf: EpochMillis) throws -> GroupDiff {
        let (membership, facts) = try groupFacts(reference)
        return GroupDiff.knownAt(a, b, membership: membership, facts: facts, asOf: asOf)
    }

    /// How the group changed between two moments.
    public func diff(_ reference: String, asOf a: EpochMillis, _ b: EpochMillis, knownAt: EpochMillis?) throws -> GroupDiff {
        let (membership, facts) = try groupFacts(reference)
        return GroupDiff.asOf(a, b, membership: membership, facts: facts, knownAt: knownAt)
    }

    /// Our projection against Apple's latest recorded Get Seat Info and Get Group Members, as of
    /// `asOf`: only Apple's answers effective by then count (as for the projection itself), so a
    /// past moment is not compared with what Apple said later.
    public func compareWithApple(_ reference: String, asOf: EpochMillis) throws -> AppleComparison {
        let (membership, allFacts) = try groupFacts(reference)
        let times = EffectiveTimes(allFacts)
        let facts = allFacts.filter { times.effectiveAt($0) <= asOf }
        let state = GroupProjection.project(membership, facts: allFacts, asOf: asOf, knownAt: nil)
        return AppleComparison.compare(state: state, facts: facts)
    }

    /// The support report for a group.
    ///
    /// Only events effective by `asOf` are used: the report shows the group as it was then.
    public func auditGroup(_ reference: String, asOf: EpochMillis, now: EpochMillis) throws -> GroupAudit {
        let (membership, allFacts) = try groupFacts(reference)
        let times = EffectiveTimes(allFacts)
        let facts = allFacts.filter { times.effectiveAt($0) <= asOf }
        let state = GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: nil)
        let duplicates = try store.duplicateCounts(for: facts.map(\.eventId))
        let timeline = GroupReplay.entries(membership: membership, facts: facts, to: asOf, now: now, duplicateArrivals: duplicates)
        let context = GroupAnalysis.Context(leafFingerprints: try store.leafFingerprints(at: Set(facts.map(\.position))),
                                            environment: configuration.environment, now: now)
        let anomalies = GroupAnalysis.anomalies(state: state, membership: membership, facts: facts, replay: timeline, context: context)
        return GroupAudit(state: state, timeline: timeline, anomalies: anomalies,
                          actions: GroupAnalysis.actions(state: state, anomalies: anomalies, context: context), generatedAt: now)
    }

    /// The "why did this member lose access?" report; with `knownAt`, from what the ledger had
    /// recorded by then (`member show --known-at`, the desk's member page).
    public func auditMember(_ identifier: String, asOf: EpochMillis, knownAt: EpochMillis? = nil, now: EpochMillis) throws -> MemberAudit {
        var entries: [MemberAudit.GroupEntry] = []
        for found in try memberAccess(identifier, asOf: asOf, knownAt: knownAt) {
            let (membership, facts) = try groupFacts(found.group.groupKey)
            let duplicates = try store.duplicateCounts(for: facts.map(\.eventId))
            let timeline = GroupReplay.entries(membership: membership, facts: facts, to: asOf, knownAt: knownAt, now: now,
                                               duplicateArrivals: duplicates)
            entries.append(MemberAudit.GroupEntry(group: found.group, member: found.member,
                                                  chain: MemberAudit.chain(for: found.member, in: timeline)))
        }
        let (links, conflicts) = try personLinks(identifier, knownAt: knownAt)
        return MemberAudit(identifier: identifier, groups: entries, generatedAt: now, links: links, conflicts: conflicts)
    }
}
