import LedgerStorage

extension Ledger {
    /// The quarantine item `id` (its raw bytes, reason and state), or `nil`.
    public func quarantineRecord(id: Int64) throws -> QuarantineRecord? {
        try store.quarantineRecord(id: id)
    }
}
