import LedgerStorage

extension Ledger {
    /// The stored Claim Seat request with this `requestIdentifier`, or `nil`.
    public func claimRequest(_ requestIdentifier: String) throws -> ClaimRequestRecord? {
        try store.claimRequest(requestIdentifier)
    }

    /// The stored Claim Seat requests, of one group (its purchaser's `originalTransactionId`)
    /// and in one `state` when given.
    public func claimRequests(originalTransactionId: String?, state: String?) throws -> [ClaimRequestRecord] {
        try store.claimRequests(originalTransactionId: originalTransactionId, state: state)
    }
}
