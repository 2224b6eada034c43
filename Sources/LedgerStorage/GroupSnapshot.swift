import AppStoreModels

/// A group's state folded at one moment and stored, with the moments it holds for.
///
/// The state is the same for every `asOf` in `computedAt ..< validUntil` with every event
/// recorded (`knownAt` `nil`): the fold compares the moment only with dates its facts carry
/// (`GroupProjection.nextChange(after:facts:)`), and the append that changes the group's facts
/// replaces or deletes its snapshot in the same transaction. A cache like the group index:
/// `rebuild` recomputes it, `verify` compares it with a recomputation.
public struct GroupSnapshot: Sendable, Hashable {
    /// The group's key.
    public var groupKey: String
    /// The moment it was folded at (the `asOf` in ``state``).
    public var computedAt: EpochMillis
    /// The first moment it no longer describes (`Int64.max`: it holds from `computedAt` on).
    public var validUntil: EpochMillis
    /// The `group show --json` object at `computedAt`, pretty-printed (indent 0).
    public var state: String

    /// Creates a snapshot.
    public init(groupKey: String, computedAt: EpochMillis, validUntil: EpochMillis, state: String) {
        self.groupKey = groupKey
        self.computedAt = computedAt
        self.validUntil = validUntil
        self.state = state
    }

    /// Whether it describes the group as of `asOf` (with every event recorded).
    public func holds(at asOf: EpochMillis) -> Bool { validity.holds(at: asOf) }

    /// When it was folded and until when it holds.
    public var validity: GroupSnapshotValidity { GroupSnapshotValidity(computedAt: computedAt, validUntil: validUntil) }
}

/// When a stored snapshot was folded and until when it holds, without its state (what a rebuild
/// reads to find the snapshots it must fold again).
public struct GroupSnapshotValidity: Sendable, Hashable {
    /// The moment it was folded at.
    public var computedAt: EpochMillis
    /// The first moment it no longer describes.
    public var validUntil: EpochMillis

    /// Creates a validity.
    public init(computedAt: EpochMillis, validUntil: EpochMillis) {
        self.computedAt = computedAt
        self.validUntil = validUntil
    }

    /// Whether the snapshot describes its group as of `asOf`: `computedAt <= asOf < validUntil`.
    public func holds(at asOf: EpochMillis) -> Bool { computedAt <= asOf && asOf < validUntil }
}
