import LedgerEvents

extension Ledger {
    /// The events at `positions`, in that order; positions with no event are skipped.
    public func events(at positions: [Int64]) throws -> [LedgerEvent] {
        try store.events(at: positions)
    }
}
