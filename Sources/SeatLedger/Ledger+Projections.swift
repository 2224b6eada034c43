import AppStoreModels
import Foundation
import LedgerConcurrency
import LedgerEvents
import LedgerStorage
import Projections

/// No group matches a reference.
public struct GroupNotFound: Error, Sendable, CustomStringConvertible {
    /// The reference the user gave.
    public let reference: String
    /// The text a person reads (what the CLI prints for it).
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
    ///
    /// Read in one read snapshot (one shared lock for the whole listing instead of one per
    /// statement), a chunk of groups at a time, each chunk's folds on all cores, so the listing
    /// grows linearly with the groups and uses every core.
    public func groups(asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> [GroupState] {
        var states: [GroupState] = []
        try forEachGroup(asOf: asOf, knownAt: knownAt) { states.append($0) }
        return states
    }

    /// Calls `body` with every group's state as of `asOf`, in the order of ``groups(asOf:knownAt:)``,
    /// holding two chunks of groups at a time (`groups --json` prints as it goes, so its memory
    /// does not grow with the ledger: 2.1 GB for 100,000 groups when the whole array was built).
    /// `body` runs inside the listing's read snapshot, so it must not write to this ledger.
    ///
    /// A pipeline (``pipelined(chunks:produce:transform:consume:)``): while one chunk is folded
    /// (on the cores but one), the calling thread gives the chunk before it to `body` and reads the
    /// next one, so the store's reads and the printing (a third of the work, serial on the one
    /// connection) overlap the folds.
    public func forEachGroup(asOf: EpochMillis, knownAt: EpochMillis? = nil, _ body: (GroupState) throws -> Void) throws {
        let maintainer = ProjectionMaintainer(store: store)
        try store.read {
            let keys = try store.allGroupKeys()
            let chunks = stride(from: 0, to: keys.count, by: Self.groupsChunk).map { $0..<min(keys.count, $0 + Self.groupsChunk) }
            try pipelined(chunks: chunks.count, produce: { index in
                try keys[chunks[index]].compactMap { try maintainer.group($0) }.map { GroupToFold(membership: $0.0, facts: $0.1) }
            }, transform: { loaded in
                parallelMap(loaded, workers: ParallelWork.workersBesidePipeline) {
                    Self.existingState($0.membership, facts: $0.facts, asOf: asOf, knownAt: knownAt)
                }
            }, consume: { states in
                for state in states { if let state { try body(state) } }
            })
        }
    }

    /// One page of ``groups(asOf:knownAt:)``: the first `limit` groups after `cursor` (by key, as
    /// Swift orders strings) that `matching` keeps, and whether more follow. It folds only the
    /// groups the page reaches, a chunk at a time on all cores, not the whole ledger per page
    /// (`GET /v1/groups` folded every group for every page).
    public func groupsPage(asOf: EpochMillis, knownAt: EpochMillis? = nil, after cursor: String?, limit: Int,
                           matching: (GroupState) -> Bool = { _ in true }) throws -> (groups: [GroupState], more: Bool) {
        let maintainer = ProjectionMaintainer(store: store)
        return try store.read {
            let keys = try store.allGroupKeys().sorted().filter { key in cursor.map { key > $0 } ?? true }
            let chunk = min(Self.groupsChunk, max(16, limit + 1))
            var found: [GroupState] = []
            var start = 0
            while start < keys.count, found.count <= limit {
                let loaded = try keys[start..<min(keys.count, start + chunk)].compactMap { try maintainer.group($0) }
                    .map { GroupToFold(membership: $0.0, facts: $0.1) }
                let states = parallelMap(loaded) { Self.existingState($0.membership, facts: $0.facts, asOf: asOf, knownAt: knownAt) }
                found += states.compactMap { $0 }.filter(matching)
                start += chunk
            }
            return (Array(found.prefix(limit)), found.count > limit)
        }
    }

    /// Calls `body` with every group's `group show --json` text as of `asOf`, in the order of
    /// ``groups(asOf:knownAt:)``, pretty-printed as ``JSONValue/prettyString(indent:)`` writes it
    /// `levels` deep (`groups --json` prints them as the elements of one array).
    ///
    /// A group whose stored snapshot holds at `asOf` is printed from it, with its `asOf` set
    /// (``ProjectionSnapshots``; only with every event recorded, `knownAt` `nil`, and projections
    /// built by this build's rules); the others are folded as ``forEachGroup(asOf:knownAt:_:)``
    /// folds them, on the cores but one while this thread reads the next chunk and prints.
    /// `body` runs inside the listing's read snapshot, so it must not write to this ledger.
    public func forEachGroupJSON(asOf: EpochMillis, knownAt: EpochMillis? = nil, levels: Int = 0,
                                 _ body: (String) throws -> Void) throws {
        let maintainer = ProjectionMaintainer(store: store)
        try store.read {
            let servesSnapshots = try knownAt == nil && store.hasGroupSnapshots && snapshotsFollowCurrentRules()
            let keys = try store.allGroupKeys()
            let chunks = stride(from: 0, to: keys.count, by: Self.groupsChunk).map { $0..<min(keys.count, $0 + Self.groupsChunk) }
            try pipelined(chunks: chunks.count, produce: { index -> [ListedGroup] in
                let chunk = keys[chunks[index]]
                let snapshots = servesSnapshots && !chunk.isEmpty
                    ? try store.groupSnapshots(from: chunk.first!, through: chunk.last!) : [:]
                return try chunk.compactMap { key -> ListedGroup? in
                    if let snapshot = snapshots[key], snapshot.holds(at: asOf),
                       let text = ProjectionSnapshots.text(of: snapshot, asOf: asOf, levels: levels) {
                        return .printed(text)
                    }
                    return try maintainer.group(key).map { .toFold(membership: $0.0, facts: $0.1) }
                }
            }, transform: { listed in
                parallelMap(listed, workers: ParallelWork.workersBesidePipeline) { group -> String? in
                    switch group {
                    case .printed(let text): return text
                    case .toFold(let membership, let facts):
                        return Self.existingState(membership, facts: facts, asOf: asOf, knownAt: knownAt)?.json.prettyString(indent: levels)
                    }
                }
            }, consume: { texts in
                for text in texts { if let text { try body(text) } }
            })
        }
    }

    /// Whether stored snapshots were made by this build's rules: the ledger is stamped with this
    /// build's projection rules and is not an unfinished copy (otherwise every group is folded).
    func snapshotsFollowCurrentRules() throws -> Bool {
        try storedProjectionRules() == ProjectionRules.version && outdatedProjectionsWarning() == nil
    }

    /// A group of a listing: printed from its snapshot, or read to be folded.
    private enum ListedGroup: Sendable {
        case printed(String)
        case toFold(membership: GroupMembership, facts: [EventFacts])
    }

    /// Groups read before their folds run in parallel: enough to keep the cores busy, few enough
    /// that their facts stay a few megabytes (two chunks are in memory at a time).
    static let groupsChunk = 512

    /// One group read from the store, to be folded on another thread.
    private struct GroupToFold: Sendable {
        let membership: GroupMembership
        let facts: [EventFacts]
    }

    /// The group's state, or `nil` when none of its events had happened by `asOf` (or been
    /// recorded by `knownAt`): the group did not exist yet, and is left out rather than listed as
    /// an empty UNKNOWN group.
    static func existingState(_ membership: GroupMembership, facts: [EventFacts],
                                      asOf: EpochMillis, knownAt: EpochMillis?) -> GroupState? {
        let known = knownAt.map { knownAt in facts.filter { $0.recordedAt <= knownAt } } ?? facts
        // Nothing takes effect after its event was signed, so an event signed by `asOf` settles
        // it without computing every effective time.
        if !known.contains(where: { $0.occurredAt <= asOf }) {
            let times = EffectiveTimes(known)
            guard known.contains(where: { times.effectiveAt($0) <= asOf }) else { return nil }
        }
        return GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: knownAt)
    }

    /// A person's access in every group they belong or belonged to.
    ///
    /// `identifier` is any of the member's identifiers, or any transaction id of their own (a
    /// renewal's `transactionId`, say). A seat holder whom evidence links to a group only after the
    /// moment asked about is shown as they were then: on their own, in their `unlinked:` group.
    public func memberAccess(_ identifier: String, asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> [MemberInGroup] {
        let linked = try linkedIdentifiers(of: identifier, knownAt: knownAt)
        let maintainer = ProjectionMaintainer(store: store)
        var found = false
        var result: [MemberInGroup] = []
        // The app's user id answers for the Apple identities the app server linked to it.
        for id in [identifier] + linked {
            let keys = try groupKeys(for: id)
            found = found || !keys.isEmpty
            for entry in try keys.flatMap({ try foldedMemberAccess(id, inGroup: $0, asOf: asOf, knownAt: knownAt, maintainer: maintainer) })
            where !result.contains(where: { $0.group.groupKey == entry.group.groupKey && $0.member == entry.member }) {
                result.append(entry)
            }
        }
        guard found || !linked.isEmpty else { throw GroupNotFound(reference: identifier) }
        return result
    }

    /// ``memberAccess(_:asOf:knownAt:)`` in the group `key`, folded from its facts.
    func foldedMemberAccess(_ identifier: String, inGroup key: String, asOf: EpochMillis, knownAt: EpochMillis?,
                            maintainer: ProjectionMaintainer) throws -> [MemberInGroup] {
        guard let (membership, facts, rows) = try maintainer.groupWithRows(key) else { return [] }
        var result: [MemberInGroup] = []
        let state = GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: knownAt)
        let aliases = Set(rows.filter { $0.identifier == identifier }.map(\.role))
        let owners = Self.transactionOwners(of: identifier, in: facts)
        func names(_ member: MemberState) -> Bool {
            member.matches(identifier) || (member.originalTransactionId.map(owners.contains) ?? false)
                || (aliases.contains("purchaser") && member.role == .purchaser)
        }
        for member in state.members where names(member) { result.append(MemberInGroup(group: state, member: member)) }
        let present = Set(state.members.compactMap(\.originalTransactionId))
        for holder in membership.memberOriginalTransactionIds.sorted() where owners.contains(holder) && !present.contains(holder) {
            var alone = GroupMembership(groupKey: GroupIdentityResolver.unlinkedKey(for: holder))
            alone.memberOriginalTransactionIds = [holder]
            let then = GroupProjection.project(alone, facts: facts, asOf: asOf, knownAt: knownAt)
            for member in then.members where names(member) { result.append(MemberInGroup(group: then, member: member)) }
        }
        return result
    }

    /// The `originalTransactionId`s whose transactions carry `identifier` as their original,
    /// transaction or app transaction id.
    static func transactionOwners(of identifier: String, in facts: [EventFacts]) -> Set<String> {
        var owners = Set<String>()
        for fact in facts {
            for tx in fact.transactions
            where tx.originalTransactionId == identifier || tx.transactionId == identifier || tx.appTransactionId == identifier {
                owners.insert(tx.originalTransactionId)
            }
        }
        return owners
    }

    /// Recomputes every projection from the log and replaces the stored ones, in one transaction.
    ///
    /// Events without cached facts get them derived first (in a transaction of their own).
    /// `progress` gets a line at each phase; `counted`, how far each counted step has got.
    @discardableResult
    public func rebuildProjections(progress: ((String) -> Void)? = nil, counted: ((RebuildCount) -> Void)? = nil) throws -> Int {
        try rebuild(progress: progress, counted: counted).groups
    }

    /// ``rebuildProjections(progress:counted:)``, reporting how much of the group index it wrote:
    /// the groups whose stored rows differed from the log (none on an intact ledger), or every
    /// group when the index was empty or differed by half.
    ///
    /// Group snapshots are folded again for the rewritten groups and where they are missing or
    /// no longer hold; `allSnapshots` folds every one again (what a snapshot that `verify` found
    /// different from its fold needs: a rebuild does not fold a snapshot that holds).
    @discardableResult
    public func rebuild(allSnapshots: Bool = false, progress: ((String) -> Void)? = nil,
                        counted: ((RebuildCount) -> Void)? = nil) throws -> RebuildReport {
        try requireWritable()
        var rebuilder = ProjectionRebuilder(store: store)
        rebuilder.counted = counted
        rebuilder.refoldsAllSnapshots = try allSnapshots || !snapshotsFollowCurrentRules()
        let report = try rebuilder.rebuildAllReporting(progress: progress)
        try recordCurrentProjectionRules()
        return report
    }

    /// Group keys whose stored projection differs from a fresh recomputation (empty: all match).
    ///
    /// The recomputation reads the cached facts: events without them (`store.positionsWithoutFacts()`,
    /// a ledger from an older build) are left out, so check that first, as `seatledger verify` does.
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
