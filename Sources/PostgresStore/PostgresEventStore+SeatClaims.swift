import AppStoreModels
import LedgerStorage
import Foundation
import PostgresClient

extension PostgresEventStore {
    private static let claimColumns = """
        request_identifier, original_transaction_id, member_ref, app_transaction_id, state, created_at, updated_at,
        attempts, seat_claim_id, last_status, last_error
        """

    private func readClaim(_ row: PostgresRow) throws -> ClaimRequestRecord {
        ClaimRequestRecord(requestIdentifier: try row.text(0), originalTransactionId: try row.text(1),
                           memberRef: try row.optionalText(2), appTransactionId: try row.optionalText(3),
                           state: try row.text(4), createdAt: try row.int64(5), updatedAt: try row.int64(6),
                           attempts: try row.int64(7), seatClaimId: try row.optionalText(8),
                           lastStatus: try row.optionalInt64(9), lastError: try row.optionalText(10))
    }

    /// Takes a transaction-level advisory lock keyed by the group, so two processes beginning a
    /// claim for the same member at once serialise and cannot both create one (SQLite's writer
    /// lock does this there).
    public func lockClaimRequests(originalTransactionId: String) throws {
        try connection.run("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                           [.text("seatledger.claim:" + originalTransactionId)])
    }

    /// The group's `pending` requests, oldest first.
    public func pendingClaimRequests(originalTransactionId: String) throws -> [ClaimRequestRecord] {
        try claimRequests(originalTransactionId: originalTransactionId, state: ClaimRequestRecord.pending)
    }

    /// Stores a new request (inside the caller's write transaction).
    public func insertClaimRequest(_ record: ClaimRequestRecord) throws {
        try connection.run("""
            INSERT INTO claim_requests (request_identifier, original_transaction_id, member_ref, app_transaction_id, state,
                                        created_at, updated_at, attempts, seat_claim_id, last_status, last_error)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
            """, [.text(record.requestIdentifier), .text(record.originalTransactionId), .optional(record.memberRef),
                  .optional(record.appTransactionId), .text(record.state), .int64(record.createdAt), .int64(record.updatedAt),
                  .int64(record.attempts), .optional(record.seatClaimId), .optional(record.lastStatus),
                  .optional(record.lastError)])
    }

    /// Counts `count` more requests sent for `requestIdentifier` (call just before sending).
    public func noteClaimAttempts(_ requestIdentifier: String, count: Int, now: EpochMillis) throws {
        try write {
            _ = try connection.run(
                "UPDATE claim_requests SET attempts = attempts + $1, updated_at = $2 WHERE request_identifier = $3",
                [.int64(Int64(count)), .int64(now), .text(requestIdentifier)])
        }
    }

    /// Records the outcome: `state` (`pending` keeps it resumable), the claim id, last status and error.
    public func updateClaimRequest(_ requestIdentifier: String, state: String, seatClaimId: String?, lastStatus: Int64?,
                                   lastError: String?, now: EpochMillis) throws {
        try write {
            _ = try connection.run("""
                UPDATE claim_requests SET state = $1, seat_claim_id = COALESCE($2::text, seat_claim_id), last_status = $3::bigint,
                    last_error = $4::text, updated_at = $5 WHERE request_identifier = $6
                """, [.text(state), .optional(seatClaimId), .optional(lastStatus), .optional(lastError), .int64(now),
                      .text(requestIdentifier)])
        }
    }

    /// One request by identifier.
    public func claimRequest(_ requestIdentifier: String) throws -> ClaimRequestRecord? {
        let result = try connection.run(
            "SELECT \(Self.claimColumns) FROM claim_requests WHERE request_identifier = $1",
            [.text(requestIdentifier)])
        return try result.first.map(readClaim)
    }

    /// Requests, oldest first, optionally only one group's and/or one state.
    public func claimRequests(originalTransactionId: String?, state: String?) throws -> [ClaimRequestRecord] {
        var clauses: [String] = []
        var values: [PostgresValue] = []
        if let originalTransactionId {
            values.append(.text(originalTransactionId))
            clauses.append("original_transaction_id = $\(values.count)")
        }
        if let state {
            values.append(.text(state))
            clauses.append("state = $\(values.count)")
        }
        let whereClause = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        let result = try connection.run(
            "SELECT \(Self.claimColumns) FROM claim_requests\(whereClause) ORDER BY created_at, request_identifier",
            values)
        return try result.map(readClaim)
    }
}
