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

extension ClaimRequestRecord {
    /// A record from a row of `request_identifier, original_transaction_id, member_ref,
    /// app_transaction_id, state, created_at, updated_at, attempts, seat_claim_id, last_status, last_error`.
    init(row: any SQLRow) throws {
        self.init(requestIdentifier: try row.text(0), originalTransactionId: try row.text(1), memberRef: try row.optionalText(2),
                  appTransactionId: try row.optionalText(3), state: try row.text(4), createdAt: try row.int64(5),
                  updatedAt: try row.int64(6), attempts: try row.int64(7), seatClaimId: try row.optionalText(8),
                  lastStatus: try row.optionalInt64(9), lastError: try row.optionalText(10))
    }
}
