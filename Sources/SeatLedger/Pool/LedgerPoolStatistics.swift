extension LedgerPool {
    /// What the pool's writer has done since it opened: how well concurrent appends were grouped.
    public struct Statistics: Sendable, Equatable {
        /// Group commits: one ``Ledger/ingestBatch(_:)`` call (one transaction, one `fsync`) each,
        /// failed ones included.
        public var commits = 0
        /// Group commits that failed as a whole (every caller in them got the error).
        public var failedCommits = 0
        /// Append calls served (``LedgerPool/append(_:)`` and ``LedgerPool/append(notificationBody:source:)``).
        public var appendCalls = 0
        /// Messages in those calls.
        public var messages = 0
        /// The most append calls one group commit served.
        public var largestCommitCalls = 0
        /// Exclusive ``LedgerPool/write(_:)`` bodies run (counted as each starts).
        public var writes = 0

        /// No work yet.
        public init() {}
    }
}
