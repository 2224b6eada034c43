import AppStoreModels
import Foundation

/// Claim Seat requests (an operational table beside the log, not events).
///
/// An engine supplies the rows; which request a new claim resumes is decided once, in
/// ``beginClaimRequest(originalTransactionId:memberRef:appTransactionId:newIdentifier:explicitIdentifier:now:)``
/// and ``ClaimResumption``.
public protocol SeatClaimStore: TransactionalStore {
    /// Serialises beginning claims for one group until the caller's write transaction ends (inside
    /// it), so two processes cannot both create a request for the same member. An engine whose
    /// write transactions already exclude each other (SQLite's writer lock) does nothing.
    func lockClaimRequests(originalTransactionId: String) throws
    /// The group's `pending` requests, oldest first (then by identifier).
    func pendingClaimRequests(originalTransactionId: String) throws -> [ClaimRequestRecord]
    /// Stores a new request (inside the caller's write transaction).
    func insertClaimRequest(_ record: ClaimRequestRecord) throws
    /// Records attempts made for a claim request.
    func noteClaimAttempts(_ requestIdentifier: String, count: Int, now: EpochMillis) throws
    /// Records a claim request's outcome: `state` (`pending` keeps it resumable), the claim id
    /// (kept when `nil`), last status and error.
    func updateClaimRequest(_ requestIdentifier: String, state: String, seatClaimId: String?, lastStatus: Int64?,
                            lastError: String?, now: EpochMillis) throws
    /// One claim request.
    func claimRequest(_ requestIdentifier: String) throws -> ClaimRequestRecord?
    /// Claim requests, oldest first, optionally only one group's and/or one state.
    func claimRequests(originalTransactionId: String?, state: String?) throws -> [ClaimRequestRecord]
}

extension SeatClaimStore {
    /// The request a claim resumes, or a new one with `newIdentifier`, in one write transaction.
    ///
    /// With `explicitIdentifier`, that exact request is resumed in whatever state it is (or created
    /// with that identifier). Otherwise the group's unfinished (`pending`) request for the same
    /// member is resumed (``ClaimResumption/resumable(among:memberRef:appTransactionId:)``), and a
    /// new one is written only when there is none.
    ///
    /// - Returns: the record and whether it already existed (a resumed claim).
    public func beginClaimRequest(originalTransactionId: String, memberRef: String?, appTransactionId: String?,
                                  newIdentifier: String, explicitIdentifier: String? = nil,
                                  now: EpochMillis) throws -> (record: ClaimRequestRecord, resumed: Bool) {
        try write {
            try lockClaimRequests(originalTransactionId: originalTransactionId)
            if let explicitIdentifier {
                if let existing = try claimRequest(explicitIdentifier) { return (existing, true) }
            } else if let pending = ClaimResumption.resumable(
                among: try pendingClaimRequests(originalTransactionId: originalTransactionId),
                memberRef: memberRef, appTransactionId: appTransactionId) {
                return (pending, true)
            }
            let record = ClaimRequestRecord(requestIdentifier: explicitIdentifier ?? newIdentifier,
                                            originalTransactionId: originalTransactionId, memberRef: memberRef,
                                            appTransactionId: appTransactionId, state: ClaimRequestRecord.pending,
                                            createdAt: now, updatedAt: now, attempts: 0, seatClaimId: nil,
                                            lastStatus: nil, lastError: nil)
            try insertClaimRequest(record)
            return (record, false)
        }
    }

    /// Every claim request, optionally one group's.
    public func claimRequests(originalTransactionId: String? = nil) throws -> [ClaimRequestRecord] {
        try claimRequests(originalTransactionId: originalTransactionId, state: nil)
    }
}
