import AppStoreModels
import EventStore
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

    /// The unfinished (`pending`) request for the same group and member, or a new one with
    /// `newIdentifier`, in one write transaction (see ``EventStore/beginClaimRequest(originalTransactionId:memberRef:appTransactionId:newIdentifier:explicitIdentifier:now:)``).
    ///
    /// Two processes beginning a claim for the same member at once serialise on a transaction-level
    /// advisory lock keyed by the group, so they cannot both create one (SQLite's writer lock does
    /// this there).
    ///
    /// - Returns: the record and whether it already existed (a resumed claim).
    public func beginClaimRequest(originalTransactionId: String, memberRef: String?, appTransactionId: String?,
                                  newIdentifier: String, explicitIdentifier: String?,
                                  now: EpochMillis) throws -> (record: ClaimRequestRecord, resumed: Bool) {
        try write {
            try connection.run("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                                         [.text("seatledger.claim:" + originalTransactionId)])
            if let explicitIdentifier {
                let result = try connection.run(
                    "SELECT \(Self.claimColumns) FROM claim_requests WHERE request_identifier = $1",
                    [.text(explicitIdentifier)])
                if let row = result.first { return (try readClaim(row), true) }
            } else {
                let result: PostgresResult
                let prefix = "SELECT \(Self.claimColumns) FROM claim_requests WHERE original_transaction_id = $1 AND state = 'pending'"
                if let memberRef {
                    result = try connection.run("\(prefix) AND member_ref = $2 ORDER BY created_at LIMIT 1",
                                                          [.text(originalTransactionId), .text(memberRef)])
                } else if let appTransactionId {
                    result = try connection.run(
                        "\(prefix) AND member_ref IS NULL AND app_transaction_id = $2 ORDER BY created_at LIMIT 1",
                        [.text(originalTransactionId), .text(appTransactionId)])
                } else {
                    result = try connection.run(
                        "\(prefix) AND member_ref IS NULL AND app_transaction_id IS NULL ORDER BY created_at LIMIT 1",
                        [.text(originalTransactionId)])
                }
                if let row = result.first { return (try readClaim(row), true) }
            }
            let identifier = explicitIdentifier ?? newIdentifier
            try connection.run("""
                INSERT INTO claim_requests (request_identifier, original_transaction_id, member_ref, app_transaction_id, state,
                                            created_at, updated_at, attempts)
                VALUES ($1, $2, $3, $4, 'pending', $5, $6, 0)
                """, [.text(identifier), .text(originalTransactionId), .optional(memberRef), .optional(appTransactionId),
                      .int64(now), .int64(now)])
            return (ClaimRequestRecord(requestIdentifier: identifier, originalTransactionId: originalTransactionId,
                                       memberRef: memberRef, appTransactionId: appTransactionId, state: ClaimRequestRecord.pending,
                                       createdAt: now, updatedAt: now, attempts: 0, seatClaimId: nil, lastStatus: nil,
                                       lastError: nil), false)
        }
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
