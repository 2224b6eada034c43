/// What a rebuild wrote (``Ledger/rebuild(progress:counted:)``).
///
/// A rebuild compares the stored group index with the one the log gives and rewrites only the
/// groups that differ; when the index is empty or half of it differs, it empties the index and
/// writes every group instead (``indexWrittenWhole``). Then it folds the group snapshots that
/// need it (``snapshotsWritten``). Each step is timed (``steps``).
public struct RebuildReport: Sendable, Equatable {
    /// The groups the log resolves to.
    public let groups: Int
    /// The groups whose index rows were written: those that differed, or all of them when the
    /// index was written whole.
    public let groupsRewritten: Int
    /// The stored groups the log no longer has, removed from the index (`nil` when the index was
    /// written whole: it was emptied first, so nothing was counted).
    public let groupsRemoved: Int?
    /// Whether the index was emptied and every group written again.
    public let indexWrittenWhole: Bool
    /// The group snapshots folded and stored: those of rewritten groups and those that were
    /// missing or no longer held (every group's when the index was written whole).
    public let snapshotsWritten: Int
    /// How long each step took, in the order they ran (see ``RebuildStep``).
    public var steps: [RebuildStep]

    /// Creates a report.
    public init(groups: Int, groupsRewritten: Int, groupsRemoved: Int?, indexWrittenWhole: Bool, snapshotsWritten: Int = 0,
                steps: [RebuildStep] = []) {
        self.groups = groups
        self.groupsRewritten = groupsRewritten
        self.groupsRemoved = groupsRemoved
        self.indexWrittenWhole = indexWrittenWhole
        self.snapshotsWritten = snapshotsWritten
        self.steps = steps
    }
}
