import AppStoreModels
import LedgerStorage

extension Ledger {
    /// The group's unfinished (`pending`) Claim Seat requests, oldest first.
    public func pendingClaimRequests(originalTransactionId: String) throws -> [ClaimRequestRecord] {
        try store.pendingClaimRequests(originalTransactionId: originalTransactionId)
    }

    /// The stored Claim Seat requests, of one group (its purchaser's `originalTransactionId`)
    /// and in one `state` when given.
    public func claimRequests(originalTransactionId: String?, state: String?) throws -> [ClaimRequestRecord] {
        try store.claimRequests(originalTransactionId: originalTransactionId, state: state)
    }

    /// The Claim Seat request `requestIdentifier`, or `nil` when there is none.
    public func claimRequest(_ requestIdentifier: String) throws -> ClaimRequestRecord? {
        try store.claimRequest(requestIdentifier)
    }

    /// The request a claim resumes, or a new one with `newIdentifier`, in one write transaction
    /// (``SeatClaimStore/beginClaimRequest(originalTransactionId:memberRef:appTransactionId:newIdentifier:explicitIdentifier:now:)``).
    ///
    /// - Returns: the record and whether it already existed (a resumed claim).
    public func beginClaimRequest(originalTransactionId: String, memberRef: String?, appTransactionId: String?,
                                  newIdentifier: String, explicitIdentifier: String?,
                                  now: EpochMillis) throws -> (record: ClaimRequestRecord, resumed: Bool) {
        try store.beginClaimRequest(originalTransactionId: originalTransactionId, memberRef: memberRef,
                                    appTransactionId: appTransactionId, newIdentifier: newIdentifier,
                                    explicitIdentifier: explicitIdentifier, now: now)
    }

    /// Counts `count` more requests sent for the claim `requestIdentifier` (just before sending them).
    public func noteClaimAttempts(_ requestIdentifier: String, count: Int, now: EpochMillis) throws {
        try store.noteClaimAttempts(requestIdentifier, count: count, now: now)
    }

    /// Records a claim request's outcome: `state` (`pending` keeps it resumable), the claim id
    /// (kept when `nil`), the last HTTP status and error.
    public func recordClaimOutcome(_ requestIdentifier: String, state: String, seatClaimId: String?, lastStatus: Int64?,
                                   lastError: String?, now: EpochMillis) throws {
        try store.updateClaimRequest(requestIdentifier, state: state, seatClaimId: seatClaimId, lastStatus: lastStatus,
                                     lastError: lastError, now: now)
    }
}
