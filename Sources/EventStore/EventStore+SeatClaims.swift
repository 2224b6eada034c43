import AppStoreModels
import Foundation

/// A Claim Seat request as the ledger remembers it: its `requestIdentifier` is written **before**
/// Apple is called, so a retry after a crash reuses it and Apple returns the same `seatClaimId`
/// instead of taking a second seat. Not an event (the responses are); an operational table.
public struct ClaimRequestRecord: Sendable, Equatable {
    /// The idempotency key sent to Apple.
    public let requestIdentifier: String
    /// The purchaser's original transaction id (the group).
    public let originalTransactionId: String
    /// Our member reference, if given.
    public let memberRef: String?
    /// The member's app transaction id, if given.
    public let appTransactionId: String?
    /// `pending` (sent or about to be; outcome unknown), `claimed`, or `failed` (Apple refused).
    public let state: String
    /// When the request was written.
    public let createdAt: EpochMillis
    /// Last change.
    public let updatedAt: EpochMillis
    /// Requests sent so far (over all runs).
    public let attempts: Int64
    /// Apple's answer when claimed.
    public let seatClaimId: String?
    /// The last HTTP status seen.
    public let lastStatus: Int64?
    /// The last error (HTTP error or no response).
    public let lastError: String?

    /// Creates a record (for other ``LedgerStore`` implementations).
    public init(requestIdentifier: String, originalTransactionId: String, memberRef: String?, appTransactionId: String?,
                state: String, createdAt: EpochMillis, updatedAt: EpochMillis, attempts: Int64, seatClaimId: String?,
                lastStatus: Int64?, lastError: String?) {
        self.requestIdentifier = requestIdentifier
        self.originalTransactionId = originalTransactionId
        self.memberRef = memberRef
        self.appTransactionId = appTransactionId
        self.state = state
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.attempts = attempts
        self.seatClaimId = seatClaimId
        self.lastStatus = lastStatus
        self.lastError = lastError
    }

    /// `pending`: sent (or about to be) with the outcome unknown; reuse its identifier.
    public static let pending = "pending"
    /// Apple answered 2xx with a `seatClaimId`.
    public static let claimed = "claimed"
    /// Apple refused it (a non-retryable error); a new claim needs a new identifier.
    public static let failed = "failed"

    /// JSON form for `--json` output.
    public var json: JSONValue {
        [
            "requestIdentifier": .string(requestIdentifier), "originalTransactionId": .string(originalTransactionId),
            "memberRef": .optional(memberRef), "appTransactionId": .optional(appTransactionId), "state": .string(state),
            "createdAt": .timestamp(createdAt), "updatedAt": .timestamp(updatedAt), "attempts": .int(attempts),
            "seatClaimId": .optional(seatClaimId), "lastStatus": .optional(lastStatus), "lastError": .optional(lastError),
        ]
    }
}

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

    private func claimError(_ error: any Error) -> EventStoreError {
        if let sqlite = error as? SQLiteError {
            if sqlite.description.contains("no such table: claim_requests") {
                return .badConfiguration("this ledger has no claim_requests table (it was created by an older development build); create a new ledger with `seatledger init`")
            }
            return .sqlite(sqlite)
        }
        if let store = error as? EventStoreError { return store }
        return .badConfiguration("\(error)")
    }

    /// The unfinished (`pending`) request for the same group and member, or a new one with
    /// `newIdentifier`, in one write transaction (two processes cannot both create one).
    ///
    /// The member is matched by `memberRef` when given, else by `appTransactionId`, else it is the
    /// group's anonymous pending claim. `explicitIdentifier` resumes that exact request (any state
    /// but `claimed` … which is returned as is).
    ///
    /// - Returns: the record and whether it already existed (a resumed claim).
    public func beginClaimRequest(originalTransactionId: String, memberRef: String?, appTransactionId: String?,
                                  newIdentifier: String, explicitIdentifier: String? = nil,
                                  now: EpochMillis) throws(EventStoreError) -> (record: ClaimRequestRecord, resumed: Bool) {
        do {
            return try connection.writeTransaction {
                if let explicitIdentifier {
                    let select = try connection.prepare("SELECT \(Self.claimColumns) FROM claim_requests WHERE request_identifier = ?")
                    defer { select.reset() }
                    try select.bind(.text(explicitIdentifier))
                    if try select.step() { return (readClaim(select), true) }
                }
                let sql: String
                var values: [SQLiteValue] = [.text(originalTransactionId)]
                if let memberRef {
                    sql = "SELECT \(Self.claimColumns) FROM claim_requests WHERE original_transaction_id = ? AND state = 'pending' AND member_ref = ? ORDER BY created_at LIMIT 1"
                    values.append(.text(memberRef))
                } else if let appTransactionId {
                    sql = "SELECT \(Self.claimColumns) FROM claim_requests WHERE original_transaction_id = ? AND state = 'pending' AND member_ref IS NULL AND app_transaction_id = ? ORDER BY created_at LIMIT 1"
                    values.append(.text(appTransactionId))
                } else {
                    sql = "SELECT \(Self.claimColumns) FROM claim_requests WHERE original_transaction_id = ? AND state = 'pending' AND member_ref IS NULL AND app_transaction_id IS NULL ORDER BY created_at LIMIT 1"
                }
                if explicitIdentifier == nil {
                    let select = try connection.prepare(sql)
                    defer { select.reset() }
                    try select.bind(values)
                    if try select.step() { return (readClaim(select), true) }
                }
                let identifier = explicitIdentifier ?? newIdentifier
                try connection.prepare("""
                    INSERT INTO claim_requests(request_identifier, original_transaction_id, member_ref, app_transaction_id, state,
                                               created_at, updated_at, attempts)
                    VALUES (?, ?, ?, ?, 'pending', ?, ?, 0)
                    """).bind(.text(identifier), .text(originalTransactionId), .optional(memberRef), .optional(appTransactionId),
                              .integer(now), .integer(now)).run()
                return (ClaimRequestRecord(requestIdentifier: identifier, originalTransactionId: originalTransactionId,
                                           memberRef: memberRef, appTransactionId: appTransactionId, state: ClaimRequestRecord.pending,
                                           createdAt: now, updatedAt: now, attempts: 0, seatClaimId: nil, lastStatus: nil,
                                           lastError: nil), false)
            }
        } catch {
            throw claimError(error)
        }
    }

    /// Counts one more request sent for `requestIdentifier` (call just before sending).
    public func noteClaimAttempts(_ requestIdentifier: String, count: Int, now: EpochMillis) throws(EventStoreError) {
        do {
            try connection.writeTransaction {
                try connection.prepare("UPDATE claim_requests SET attempts = attempts + ?, updated_at = ? WHERE request_identifier = ?")
                    .bind(.integer(Int64(count)), .integer(now), .text(requestIdentifier)).run()
            }
        } catch { throw claimError(error) }
    }

    /// Records the outcome: `state` (`pending` keeps it resumable), the claim id, last status and error.
    public func updateClaimRequest(_ requestIdentifier: String, state: String, seatClaimId: String?, lastStatus: Int64?,
                                   lastError: String?, now: EpochMillis) throws(EventStoreError) {
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
    public func claimRequest(_ requestIdentifier: String) throws(EventStoreError) -> ClaimRequestRecord? {
        do {
            let select = try connection.prepare("SELECT \(Self.claimColumns) FROM claim_requests WHERE request_identifier = ?")
            defer { select.reset() }
            try select.bind(.text(requestIdentifier))
            return try select.step() ? readClaim(select) : nil
        } catch { throw claimError(error) }
    }

    /// Requests, oldest first, optionally only one group's and/or one state.
    public func claimRequests(originalTransactionId: String? = nil, state: String? = nil) throws(EventStoreError) -> [ClaimRequestRecord] {
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
