import LedgerStorage

extension Ledger {
    /// The quarantine item `id` (its raw bytes, reason and state), or `nil`.
    public func quarantineRecord(id: Int64) throws -> QuarantineRecord? {
        try store.quarantineRecord(id: id)
    }

    /// How many quarantined inputs are in `state` (`open`, `released`, `dismissed`, `duplicate`).
    public func quarantineCount(state: String) throws -> Int {
        try store.quarantineCount(state: state)
    }
}
