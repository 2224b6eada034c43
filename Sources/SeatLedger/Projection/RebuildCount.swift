/// How far one step of a rebuild has got: `done` of `total` `unit`s.
///
/// A rebuild reports it for each step whose size is known in advance (deriving facts, resolving
/// identities, writing the group index), so a caller can show the share, a rate and an ETA.
public struct RebuildCount: Sendable, Equatable {
    /// The step: `deriving facts`, `resolving identities`, `comparing the group index` or `writing the group index`.
    public let step: String
    /// Items of the step done so far.
    public let done: Int
    /// Items the step has in all.
    public let total: Int
    /// What is counted: `events` or `groups`.
    public let unit: String

    /// Creates a count.
    public init(step: String, done: Int, total: Int, unit: String) {
        self.step = step
        self.done = done
        self.total = total
        self.unit = unit
    }
}
