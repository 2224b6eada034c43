extension Ledger {
    /// What is wrong with this ledger against the head anchor in `file`, in words, or `nil`
    /// (also when there is no file yet): see ``HeadAnchor/problem(_:against:)``.
    public func headAnchorProblem(_ file: String) throws -> String? {
        try HeadAnchor.problem(file, against: store)
    }

    /// Everything wrong with this ledger against the head anchor in `file`, each in words; empty
    /// when it continues the anchor: see ``HeadAnchor/problems(_:against:)``.
    public func headAnchorProblems(_ file: String) throws -> [String] {
        try HeadAnchor.problems(file, against: store)
    }

    /// Moves the anchor in `file` to this ledger's heads, refusing a trust change it did not
    /// make: see ``HeadAnchor/advance(_:to:)``.
    @discardableResult
    public func advanceHeadAnchor(_ file: String) throws -> HeadAnchor {
        try HeadAnchor.advance(file, to: store)
    }

    /// Writes this ledger's heads and trust configuration to `file` (after a trust change the
    /// caller made and checked the anchor for).
    public func writeHeadAnchor(to file: String) throws {
        try HeadAnchor(headOf: store).write(to: file)
    }
}
