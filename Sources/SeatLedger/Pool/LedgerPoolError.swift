/// Why a ``LedgerPool`` refused work.
public enum LedgerPoolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// ``LedgerPool/close()`` was called: the pool takes no new work (work submitted before still ran).
    case closed

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .closed: return "the ledger pool is closed; it takes no new work"
        }
    }
}
