import AppStoreModels
import Foundation
import LedgerConcurrency
import LedgerStorage
import Projections

/// Group snapshots (``GroupSnapshot``): made from a fold, kept in step by appends and rebuilds,
/// served by the `groups` listing.
///
/// Why they exist: reading and folding every group is too slow for a `groups --json` listing of
/// a large ledger (`docs/decisions/0019-group-snapshots-say-until-when.md`). A snapshot is the
/// group's `group show --json` text folded at one moment,
/// with the moment until which it holds (``GroupProjection/nextChange(after:facts:)``); a listing
/// at a moment in that range with every event recorded prints it, with its `asOf` set, instead
/// of folding. Every other read (and every other moment) folds as before.
///
/// Kept in step: an append re-folds the groups it re-resolves at its recording time, in its own
/// transaction (``ProjectionMaintainer/update(after:provisionalFacts:eventKeys:foldsSnapshots:)``),
/// or deletes their snapshots there and folds them later (a pipelined ingest at its end, the
/// pool's writer when no append waits: ``Ledger/foldDeferredSnapshots(limit:)``); a rebuild
/// folds again every group it rewrites and every group whose snapshot is missing or no longer
/// holds; `verify` compares each stored snapshot with a fold at its moment.
enum ProjectionSnapshots {
    /// The snapshot of a group folded at `moment`, or `nil` when the group does not exist yet then
    /// (none of its events had taken effect).
    static func make(_ membership: GroupMembership, facts: [EventFacts], at moment: EpochMillis) -> GroupSnapshot? {
        guard let state = Ledger.existingState(membership, facts: facts, asOf: moment, knownAt: nil) else { return nil }
        return GroupSnapshot(groupKey: membership.groupKey, computedAt: moment,
                             validUntil: GroupProjection.nextChange(after: moment, facts: facts) ?? .max,
                             state: state.json.prettyString())
    }

    /// The line of the pretty `group show --json` object that holds `asOf` (top-level keys are
    /// indented two spaces; nested ones more).
    private static let asOfLine = "\n  \"asOf\": \""

    /// The snapshot's text as of `asOf` (its `asOf` member set to it), nested `levels` deep as
    /// ``JSONValue/prettyString(indent:)`` writes it; `nil` when the stored text has no `asOf`
    /// member where a pretty `group show --json` object has it (then the caller folds).
    static func text(of snapshot: GroupSnapshot, asOf: EpochMillis, levels: Int) -> String? {
        let state = snapshot.state
        guard let start = state.range(of: asOfLine)?.upperBound,
              let end = state[start...].firstIndex(of: "\"") else { return nil }
        return JSONValue.nestingPretty(state[..<start] + Timestamp.iso8601(asOf) + state[end...], levels: levels)
    }

    /// Folds the groups `keys` at `moment` and stores their snapshots (deleting those of groups
    /// that do not exist then), inside the caller's write transaction: this thread reads a chunk
    /// of groups while the chunk before is folded on the other cores. Returns how many it stored.
    static func refold(_ keys: [String], at moment: EpochMillis, in store: any LedgerStore, chunk: Int,
                       progressed: ((Int) -> Void)? = nil) throws -> Int {
        let maintainer = ProjectionMaintainer(store: store)
        let starts = Array(stride(from: 0, to: keys.count, by: chunk))
        var stored = 0
        var done = 0
        try pipelined(chunks: starts.count, produce: { index -> ([String], [LoadedGroup]) in
            let range = starts[index]..<min(keys.count, starts[index] + chunk)
            let groups = try keys[range].compactMap { key in
                try maintainer.group(key).map { LoadedGroup(key: key, membership: $0.0, facts: $0.1) }
            }
            return (Array(keys[range]), groups)
        }, transform: { (keys: [String], groups: [LoadedGroup]) in
            (keys, parallelMap(groups, workers: ParallelWork.workersBesidePipeline) { make($0.membership, facts: $0.facts, at: moment) })
        }, consume: { (keys: [String], folded: [GroupSnapshot?]) in
            let snapshots = folded.compactMap { $0 }
            // A key the index no longer has, or a group that does not exist yet at the moment: no snapshot.
            try store.deleteGroupSnapshots(groupKeys: Set(keys).subtracting(snapshots.map(\.groupKey)))
            try store.storeGroupSnapshots(snapshots)
            stored += snapshots.count
            done += keys.count
            progressed?(done)
        })
        return stored
    }

    /// Keys of the stored snapshots that differ from a fold of their group at their moment (state
    /// or validity), or whose group the index does not have; inside the caller's read snapshot.
    static func differing(in store: any LedgerStore, chunk: Int) throws -> [String] {
        let keys = try store.groupSnapshotValidity().keys.sorted()
        let maintainer = ProjectionMaintainer(store: store)
        let starts = Array(stride(from: 0, to: keys.count, by: chunk))
        var found: [String] = []
        try pipelined(chunks: starts.count, produce: { index -> [(GroupSnapshot, LoadedGroup?)] in
            let range = starts[index]..<min(keys.count, starts[index] + chunk)
            let stored = try store.groupSnapshots(from: keys[range.lowerBound], through: keys[range.upperBound - 1])
            return try keys[range].compactMap { key in
                guard let snapshot = stored[key] else { return nil }
                return (snapshot, try maintainer.group(key).map { LoadedGroup(key: key, membership: $0.0, facts: $0.1) })
            }
        }, transform: { pairs in
            parallelMap(pairs, workers: ParallelWork.workersBesidePipeline) { snapshot, group -> String? in
                guard let group, make(group.membership, facts: group.facts, at: snapshot.computedAt) == snapshot else { return snapshot.groupKey }
                return nil
            }
        }, consume: { keys in
            found += keys.compactMap { $0 }
        })
        return found
    }

    /// One group read from the store, to be folded on another thread.
    struct LoadedGroup: Sendable {
        let key: String
        let membership: GroupMembership
        let facts: [EventFacts]
    }
}
