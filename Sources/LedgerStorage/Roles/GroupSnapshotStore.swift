import AppStoreModels

/// Stored group snapshots (``GroupSnapshot``): each group's state folded at one moment, served
/// by the `groups` listing for the moments it holds; re-derivable from the log.
///
/// A ledger of an older schema opened read-only has none: ``hasGroupSnapshots`` is `false`, reads
/// return nothing and writes are refused by the engine.
public protocol GroupSnapshotStore {
    /// Whether this ledger stores group snapshots (its schema has them).
    var hasGroupSnapshots: Bool { get }
    /// The snapshots of the groups whose keys are in `first ... last` (by bytes), by group key.
    func groupSnapshots(from first: String, through last: String) throws -> [String: GroupSnapshot]
    /// When each stored snapshot was folded and until when it holds, by group key.
    func groupSnapshotValidity() throws -> [String: GroupSnapshotValidity]
    /// Stores `snapshots`, replacing any stored for the same groups (inside the caller's transaction).
    func storeGroupSnapshots(_ snapshots: [GroupSnapshot]) throws
    /// Deletes the snapshots of the given groups (inside the caller's transaction).
    func deleteGroupSnapshots(groupKeys: Set<String>) throws
    /// Deletes every snapshot (a rebuild that rewrites the whole index).
    func clearGroupSnapshots() throws
}
