import AppStoreModels
import Foundation

/// Claim Seat requests (an operational table beside the log, not events), written once for every
/// engine over ``TransactionalStore/database``; which request a new claim resumes is decided in
/// ``beginClaimRequest(originalTransactionId:memberRef:appTransactionId:newIdentifier:explicitIdentifier:now:)``
/// and ``ClaimResumption``. An engine supplies only its lock.
public protocol SeatClaimStore: TransactionalStore {
    /// Serialises beginning claims for one group until the caller's write transaction ends (inside
    /// it), so two processes cannot both create a request for the same member. An engine whose
    /// write transactions already exclude each other (SQLite's writer lock) does nothing.
    func lockClaimRequests(originalTransactionId: String) throws
}

extension SeatClaimStore {
    private static var columns: String {
        """
        request_identifier, original_transaction_id, member_ref, app_transaction_id, state, created_at, updated_at,
        attempts, seat_claim_id, last_status, last_error
        """
    }

    /// The group's `pending` requests, oldest first (then by identifier).
    public func pendingClaimRequests(originalTransactionId: String) throws -> [ClaimRequestRecord] {
        try claimRequests(originalTransactionId: originalTransactionId, state: ClaimRequestRecord.pending)
    }

    /// Stores a new request (inside the caller's write transaction).
    public func insertClaimRequest(_ record: ClaimRequestRecord) throws {
        try claimTable {
            try database.execute("""
                INSERT INTO claim_requests (request_identifier, original_transaction_id, member_ref, app_transaction_id, state,
                                            created_at, updated_at, attempts, seat_claim_id, last_status, last_error)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(record.requestIdentifier), .text(record.originalTransactionId), .optional(record.memberRef),
                      .optional(record.appTransactionId), .text(record.state), .integer(record.createdAt),
                      .integer(record.updatedAt), .integer(record.attempts), .optional(record.seatClaimId),
                      .optional(record.lastStatus), .optional(record.lastError)])
        }
    }

    /// Counts `count` more requests sent for `requestIdentifier` (call just before sending), in a
    /// write transaction of its own.
    public func noteClaimAttempts(_ requestIdentifier: String, count: Int, now: EpochMillis) throws {
        try claimTable {
            try write {
                try database.execute("UPDATE claim_requests SET attempts = attempts + ?, updated_at = ? WHERE request_identifier = ?",
                                     [.integer(Int64(count)), .integer(now), .text(requestIdentifier)])
            }
        }
    }

    /// Records a claim request's outcome: `state` (`pending` keeps it resumable), the claim id
    /// (kept when `nil`), last status and error, in a write transaction of its own.
    public func updateClaimRequest(_ requestIdentifier: String, state: String, seatClaimId: String?, lastStatus: Int64?,
                                   lastError: String?, now: EpochMillis) throws {
        try claimTable {
            try write {
                try database.execute("""
                    UPDATE claim_requests SET state = ?, seat_claim_id = coalesce(?, seat_claim_id), last_status = ?,
                        last_error = ?, updated_at = ? WHERE request_identifier = ?
                    """, [.text(state), .optional(seatClaimId), .optional(lastStatus), .optional(lastError), .integer(now),
                          .text(requestIdentifier)])
            }
        }
    }

    /// One claim request.
    public func claimRequest(_ requestIdentifier: String) throws -> ClaimRequestRecord? {
        try claimTable {
            try database.query("SELECT \(Self.columns) FROM claim_requests WHERE request_identifier = ?", [.text(requestIdentifier)],
                               ClaimRequestRecord.init(row:)).first
        }
    }

    /// Claim requests, oldest first (then by identifier), optionally only one group's and/or one state.
    public func claimRequests(originalTransactionId: String? = nil, state: String? = nil) throws -> [ClaimRequestRecord] {
        var clauses: [String] = []
        var arguments: [SQLValue] = []
        if let originalTransactionId { clauses.append("original_transaction_id = ?"); arguments.append(.text(originalTransactionId)) }
        if let state { clauses.append("state = ?"); arguments.append(.text(state)) }
        let whereClause = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        return try claimTable {
            try database.query("SELECT \(Self.columns) FROM claim_requests\(whereClause) ORDER BY created_at, request_identifier",
                               arguments, ClaimRequestRecord.init(row:))
        }
    }

    /// Runs `body`; a failure on a ledger without `claim_requests` (made by an older development
    /// build) says so instead of the engine's "no such table".
    private func claimTable<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as LedgerStoreError {
            guard case .database = error, (try? database.tableExists("claim_requests")) == false else { throw error }
            throw LedgerStoreError.badConfiguration(
                "this ledger has no claim_requests table (it was created by an older development build); create a new ledger with `seatledger init`")
        }
    }

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
}
