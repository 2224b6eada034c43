import AppStoreModels
import Foundation
import LedgerStorage

extension EventStore {
    private static let claimColumns = """
        request_identifier, original_transaction_id, member_ref, app_transaction_id, state, created_at, updated_at,
        attempts, seat_claim_id, last_status, last_error
        """

    private func readClaim(_ statement: SQLiteStatement) -> ClaimRequestRecord {
        ClaimRequestRecord(requestIdentifier: statement.text(0), originalTransactionId: statement.text(1),
                           memberRef: statement.optionalText(2), appTransactionId: statement.optionalText(3),
                           state: statement.text(4), createdAt: statement.int64(5), updatedAt: statement.int64(6),
                           attempts: statement.int64(7), seatClaimId: statement.optionalText(8),
                           lastStatus: statement.optionalInt64(9), lastError: statement.optionalText(10))
    }

    private func claimError(_ error: any Error) -> LedgerStoreError {
        if let sqlite = error as? SQLiteError {
            if sqlite.description.contains("no such table: claim_requests") {
                return .badConfiguration("this ledger has no claim_requests table (it was created by an older development build); create a new ledger with `seatledger init`")
            }
            return .database(sqlite)
        }
        if let store = error as? LedgerStoreError { return store }
        return .badConfiguration("\(error)")
    }

    /// Nothing: SQLite's writer lock already keeps a second writer out of the caller's transaction.
    public func lockClaimRequests(originalTransactionId: String) throws {}

    /// The group's `pending` requests, oldest first.
    public func pendingClaimRequests(originalTransactionId: String) throws(LedgerStoreError) -> [ClaimRequestRecord] {
        try claimRequests(originalTransactionId: originalTransactionId, state: ClaimRequestRecord.pending)
    }

    /// Stores a new request (inside the caller's write transaction).
    public func insertClaimRequest(_ record: ClaimRequestRecord) throws(LedgerStoreError) {
        do {
            try connection.prepare("""
                INSERT INTO claim_requests(request_identifier, original_transaction_id, member_ref, app_transaction_id, state,
                                           created_at, updated_at, attempts, seat_claim_id, last_status, last_error)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).bind(.text(record.requestIdentifier), .text(record.originalTransactionId), .optional(record.memberRef),
                          .optional(record.appTransactionId), .text(record.state), .integer(record.createdAt),
                          .integer(record.updatedAt), .integer(record.attempts), .optional(record.seatClaimId),
                          .optional(record.lastStatus), .optional(record.lastError)).run()
        } catch { throw claimError(error) }
    }

    /// Counts one more request sent for `requestIdentifier` (call just before sending).
    public func noteClaimAttempts(_ requestIdentifier: String, count: Int, now: EpochMillis) throws(LedgerStoreError) {
        do {
            try connection.writeTransaction {
                try connection.prepare("UPDATE claim_requests SET attempts = attempts + ?, updated_at = ? WHERE request_identifier = ?")
                    .bind(.integer(Int64(count)), .integer(now), .text(requestIdentifier)).run()
            }
        } catch { throw claimError(error) }
    }

    /// Records the outcome: `state` (`pending` keeps it resumable), the claim id, last status and error.
    public func updateClaimRequest(_ requestIdentifier: String, state: String, seatClaimId: String?, lastStatus: Int64?,
                                   lastError: String?, now: EpochMillis) throws(LedgerStoreError) {
        do {
            try connection.writeTransaction {
                try connection.prepare("""
                    UPDATE claim_requests SET state = ?, seat_claim_id = COALESCE(?, seat_claim_id), last_status = ?,
                        last_error = ?, updated_at = ? WHERE request_identifier = ?
                    """).bind(.text(state), .optional(seatClaimId), .optional(lastStatus), .optional(lastError), .integer(now),
                              .text(requestIdentifier)).run()
            }
        } catch { throw claimError(error) }
    }

    /// One request by identifier.
    public func claimRequest(_ requestIdentifier: String) throws(LedgerStoreError) -> ClaimRequestRecord? {
        do {
            let select = try connection.prepare("SELECT \(Self.claimColumns) FROM claim_requests WHERE request_identifier = ?")
            defer { select.reset() }
            try select.bind(.text(requestIdentifier))
            return try select.step() ? readClaim(select) : nil
        } catch { throw claimError(error) }
    }

    /// Requests, oldest first, optionally only one group's and/or one state.
    public func claimRequests(originalTransactionId: String? = nil, state: String? = nil) throws(LedgerStoreError) -> [ClaimRequestRecord] {
        do {
            var clauses: [String] = []
            var values: [SQLiteValue] = []
            if let originalTransactionId { clauses.append("original_transaction_id = ?"); values.append(.text(originalTransactionId)) }
            if let state { clauses.append("state = ?"); values.append(.text(state)) }
            let whereClause = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
            let select = try connection.prepare("SELECT \(Self.claimColumns) FROM claim_requests\(whereClause) ORDER BY created_at, request_identifier")
            defer { select.reset() }
            try select.bind(values)
            var records: [ClaimRequestRecord] = []
            while try select.step() { records.append(readClaim(select)) }
            return records
        } catch { throw claimError(error) }
    }
}
