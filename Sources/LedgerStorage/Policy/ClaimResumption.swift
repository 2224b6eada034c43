/// Which unfinished Claim Seat request a new claim for a member resumes: the claim-resume policy,
/// written once for every engine.
///
/// Resuming matters because the request's identifier was written before Apple was called: a retry
/// after a crash sends the same identifier, and Apple answers with the same `seatClaimId` instead of
/// taking a second seat.
public enum ClaimResumption {
    /// The oldest of `pending` (one group's `pending` requests, oldest first) made for the same
    /// member: matched by `memberRef` when given; else by `appTransactionId` among requests without
    /// a member ref; else the group's anonymous request (neither given). `nil`: start a new one.
    public static func resumable(among pending: [ClaimRequestRecord], memberRef: String?,
                                 appTransactionId: String?) -> ClaimRequestRecord? {
        pending.first { request in
            guard request.state == ClaimRequestRecord.pending else { return false }
            if let memberRef { return sameBytes(request.memberRef, memberRef) }
            if let appTransactionId { return request.memberRef == nil && sameBytes(request.appTransactionId, appTransactionId) }
            return request.memberRef == nil && request.appTransactionId == nil
        }
    }

    /// Byte equality, as the databases compare text (Swift's `==` would take canonically
    /// equivalent spellings for one identifier).
    private static func sameBytes(_ stored: String?, _ wanted: String) -> Bool {
        guard let stored else { return false }
        return stored.utf8.elementsEqual(wanted.utf8)
    }
}
