import AppStoreAPI
import AppStoreModels
import Foundation
import LedgerStorage
import Projections
import SeatLedger

/// Why `seats claim` refused to call Apple. Each case says what the projection shows and which
/// error Apple would answer with.
public struct SeatClaimRefusal: Error, Sendable, CustomStringConvertible {
    /// Stable code: `no_available_seat`, `not_developer_hosted`, `not_active`, `already_claimed`, `no_purchaser`.
    public let code: String
    /// The explanation.
    public let message: String

    /// The explanation.
    public var description: String { message }
}

/// The result of a claim, unclaim or associate.
public struct SeatOperationResult: Sendable {
    /// The call's outcome (final attempt).
    public let result: APICallResult
    /// The purchaser's original transaction id used in the path.
    public let originalTransactionId: String
    /// For claims: the stored request (after the call).
    public let claimRequest: ClaimRequestRecord?
    /// For claims: whether an earlier unfinished request was reused.
    public let resumed: Bool
    /// Quarantine reasons of responses refused by ingest.
    public let quarantined: [String]
    /// Notes for the user.
    public let notes: [String]
    /// For unclaims whose answer was lost: the Get Seat Info call that checked the claim.
    public let confirmation: APICallResult?
    /// Whether the operation took effect: the call succeeded, or (unclaim) its retry was answered
    /// `SeatClaimIdNotFoundError` after a lost answer and Get Seat Info no longer lists the claim.
    public let succeeded: Bool
    /// Why it did not take effect although the call succeeded: Apple's 2xx lacked what it must
    /// carry (a claim's `seatClaimId`, Get Seat Info's claim list). `nil` otherwise.
    public var problem: String? = nil

    /// The `seatClaimId` Apple answered (claims) or the one acted on.
    public var seatClaimId: String? { claimRequest?.seatClaimId ?? result.body?["seatClaimId"]?.stringValue }

    /// JSON for `--json`.
    public var json: JSONValue {
        [
            "result": .string(succeeded ? "ok" : "failed"), "originalTransactionId": .string(originalTransactionId),
            "seatClaimId": .optional(seatClaimId), "requestIdentifier": .optional(claimRequest?.requestIdentifier),
            "resumed": .bool(resumed), "call": result.json, "claimRequest": claimRequest?.json ?? .null,
            "quarantined": .array(quarantined.map(JSONValue.string)), "notes": .array(notes.map(JSONValue.string)),
            "confirmation": confirmation?.json ?? .null, "problem": .optional(problem),
        ]
    }
}

/// Claim, unclaim and associate developer-hosted seats, recording every response.
///
/// Claim Seat writes its `requestIdentifier` to the ledger (`claim_requests`) **before** calling
/// Apple; a later claim for the same group and member finds the unfinished request and reuses
/// the identifier, and Apple (idempotent per `requestIdentifier`) returns the same `seatClaimId`,
/// so a crash or timeout never takes two seats.
///
/// Not `Sendable` (it uses a `Ledger`, one thread at a time), and every call blocks its thread
/// for the API calls it makes, retries and `Retry-After` waits included: run it off Swift's
/// cooperative pool (`serve` runs it inside `LedgerPool.write`).
public struct SeatOperations {
    /// The connection.
    public let api: LedgerAPI

    /// Creates the operations.
    public init(api: LedgerAPI) { self.api = api }

    /// The purchaser's original transaction id of the group `reference` resolves to.
    func purchaser(of state: GroupState, reference: String) throws(SeatClaimRefusal) -> String {
        guard let otid = state.purchaserOriginalTransactionId else {
            throw SeatClaimRefusal(code: "no_purchaser",
                                   message: "group \(state.groupKey) (from \(reference)) has no known purchaser transaction; seat endpoints need the purchaser's originalTransactionId (run `seatledger reconcile \(reference)` or ingest its notifications)")
        }
        return otid
    }

    /// The refusals the projection gives for a new claim (empty: go ahead).
    ///
    /// - Parameter checkSeats: `false` when resuming an unfinished request (it takes no new seat).
    public static func claimRefusals(state: GroupState, memberRef: String?, appTransactionId: String?,
                                     checkSeats: Bool) -> [SeatClaimRefusal] {
        var refusals: [SeatClaimRefusal] = []
        let group = state.groupKey
        if state.invitationManagement != .developer {
            let model = state.invitationManagement?.rawValue ?? "unknown"
            refusals.append(SeatClaimRefusal(code: "not_developer_hosted", message:
                "group \(group) is not developer-hosted (invitationManagement \(model)); Claim Seat applies only to DEVELOPER groups "
                + "and Apple would answer TransactionNotDevManagedGroupError"
                + (state.invitationManagement == nil ? " — if the ledger is missing the purchase, run `seatledger reconcile \(group)`" : "")))
        }
        if !state.status.grantsAccess {
            refusals.append(SeatClaimRefusal(code: "not_active", message:
                "group \(group)'s subscription is not active (status \(state.status.rawValue)); Apple would answer SubscriptionNotActiveError"))
        }
        if checkSeats {
            let seats = state.seats
            if (seats.available ?? 0) <= 0 {
                var detail = "total \(seats.total.map(String.init) ?? "unknown"), claimed \(seats.claimed), assigned \(seats.assigned)"
                if seats.overCapacity > 0 { detail += ", over capacity by \(seats.overCapacity)" }
                refusals.append(SeatClaimRefusal(code: "no_available_seat", message:
                    "group \(group) has no available seat (\(detail); the purchaser holds one seat); Apple would answer "
                    + "NoAvailableSeatsError — unclaim a seat first, or run `seatledger reconcile \(group)` if the ledger may be behind"))
            }
            if let holder = state.members.first(where: { member in
                member.role == .claim && member.hasAccess
                    && ((memberRef != nil && member.memberRef == memberRef) || (appTransactionId != nil && member.appTransactionId == appTransactionId))
            }) {
                refusals.append(SeatClaimRefusal(code: "already_claimed", message:
                    "\(memberRef ?? appTransactionId ?? "the member") already holds active seat claim \(holder.seatClaimId ?? "?") in group \(group)"))
            }
        }
        return refusals
    }

    /// Claims a seat in the group `reference` resolves to.
    ///
    /// - Parameters:
    ///   - requestIdentifier: resume this exact request (default: reuse the unfinished request for
    ///     the same group and member, else a new UUID).
    ///   - now: `asOf` of the guards.
    public func claim(_ reference: String, appTransactionId: String?, memberRef: String?, requestIdentifier: String? = nil,
                      now: EpochMillis) throws -> SeatOperationResult {
        let ledger = api.ledger
        let state = try api.ledger.groupState(reference, asOf: now)
        let otid = try purchaser(of: state, reference: reference)
        // The request `beginClaimRequest` will resume, by the same policy (bytes, not Swift's `==`,
        // which would take a canonically equivalent member ref for this one and skip the seat guard
        // for a claim that then starts a new request).
        let existing = ClaimResumption.resumable(among: try ledger.pendingClaimRequests(originalTransactionId: otid),
                                                 memberRef: memberRef, appTransactionId: appTransactionId)
        let explicit = try requestIdentifier.flatMap { try ledger.claimRequest($0) }
        if let explicit, explicit.state == ClaimRequestRecord.claimed {
            throw SeatClaimRefusal(code: "already_claimed", message:
                "request \(explicit.requestIdentifier) already claimed seat \(explicit.seatClaimId ?? "?"); nothing to resume")
        }
        let resuming = existing != nil || explicit != nil
        if let refusal = Self.claimRefusals(state: state, memberRef: memberRef, appTransactionId: appTransactionId,
                                            checkSeats: !resuming).first {
            throw refusal
        }
        let (record, resumed) = try ledger.beginClaimRequest(
            originalTransactionId: otid, memberRef: memberRef, appTransactionId: appTransactionId,
            newIdentifier: UUID().uuidString.lowercased(), explicitIdentifier: requestIdentifier, now: Timestamp.millis(Date()))
        var notes: [String] = []
        if resumed {
            notes.append("reusing requestIdentifier \(record.requestIdentifier) of an unfinished claim from \(Timestamp.iso8601(record.createdAt)) "
                + "(\(record.attempts) request\(record.attempts == 1 ? "" : "s") sent before); Apple returns the same seatClaimId, no second seat is taken")
        }
        let memberRefUsed = record.memberRef ?? memberRef
        var call = APICall.claimSeat(originalTransactionId: otid, requestIdentifier: record.requestIdentifier,
                                     appTransactionId: record.appTransactionId ?? appTransactionId)
        if let memberRefUsed { call = call.with(context: "memberRef", .string(memberRefUsed)) }
        try ledger.noteClaimAttempts(record.requestIdentifier, count: 1, now: Timestamp.millis(Date()))
        let (result, recorded) = try api.perform(call)
        if result.attempts.count > 1 {
            try ledger.noteClaimAttempts(record.requestIdentifier, count: result.attempts.count - 1, now: Timestamp.millis(Date()))
        }
        // Read the response into locals once (the 6.3 optimizer crashes on repeated optional
        // projections of `result` here in release builds).
        let httpStatus: Int? = result.status
        let responseBody: JSONValue? = result.body
        let succeeded = result.isSuccess
        let status = httpStatus.map(Int64.init)
        let finalState: String
        var seatClaimId: String?
        var lastError: String?
        if succeeded {
            seatClaimId = responseBody?["seatClaimId"]?.stringValue
            finalState = seatClaimId == nil ? ClaimRequestRecord.pending : ClaimRequestRecord.claimed
            if seatClaimId == nil { lastError = "2xx without seatClaimId" }
        } else if let code = httpStatus, !RetryPolicy.isRetryable(status: code, errorCode: result.errorCode) {
            finalState = ClaimRequestRecord.failed
            lastError = result.summary
        } else {
            finalState = ClaimRequestRecord.pending
            lastError = result.summary
            notes.append("the claim's outcome is unknown; run the same `seats claim` again to retry with requestIdentifier \(record.requestIdentifier)")
        }
        try ledger.recordClaimOutcome(record.requestIdentifier, state: finalState, seatClaimId: seatClaimId, lastStatus: status,
                                      lastError: lastError, now: Timestamp.millis(Date()))
        // A 2xx without a seatClaimId took no seat we know of: not a success (the request stays
        // pending, and the same claim resumes it).
        let problem = succeeded && seatClaimId == nil
            ? "Apple answered \(httpStatus.map(String.init) ?? "2xx") without a seatClaimId; the request stays pending: "
                + "run the same `seats claim` again to resume it (requestIdentifier \(record.requestIdentifier))"
            : nil
        return SeatOperationResult(result: result, originalTransactionId: otid, claimRequest: try ledger.claimRequest(record.requestIdentifier),
                                   resumed: resumed, quarantined: Self.quarantined(recorded), notes: notes, confirmation: nil,
                                   succeeded: succeeded && seatClaimId != nil, problem: problem)
    }

    /// Unclaims `seatClaimId` in the group `reference` resolves to (revoke the member's access in your app too).
    ///
    /// Unclaim Seat is not idempotent: when an attempt got no answer (timeout) after Apple applied
    /// it, the retry is answered `SeatClaimIdNotFoundError`. In that case only (final answer
    /// `SeatClaimIdNotFoundError`, an earlier attempt of the same call without a response) Get Seat
    /// Info is called (and recorded like every response): if Apple no longer lists the claim in
    /// `assignedSeatClaimIds`, the unclaim took effect and the result counts as succeeded, with a
    /// note; otherwise the error stands.
    public func unclaim(_ reference: String, seatClaimId: String, now: EpochMillis) throws -> SeatOperationResult {
        let state = try api.ledger.groupState(reference, asOf: now)
        let otid = try purchaser(of: state, reference: reference)
        var notes: [String] = []
        let member = state.members.first { $0.seatClaimId == seatClaimId }
        if member == nil { notes.append("the ledger knows no claim \(seatClaimId) in group \(state.groupKey); asking Apple anyway") }
        var call = APICall.unclaimSeat(originalTransactionId: otid, seatClaimId: seatClaimId)
        if let ref = member?.memberRef { call = call.with(context: "memberRef", .string(ref)) }
        let (result, recorded) = try api.perform(call)
        var quarantined = Self.quarantined(recorded)
        guard !result.isSuccess, result.isAppleError(.seatClaimIdNotFound), result.hadLostAnswer else {
            return SeatOperationResult(result: result, originalTransactionId: otid, claimRequest: nil, resumed: false,
                                       quarantined: quarantined, notes: notes, confirmation: nil, succeeded: result.isSuccess)
        }
        var check = APICall.getSeatInfo(originalTransactionId: otid).with(context: "confirmsUnclaimOf", .string(seatClaimId))
        if let ref = member?.memberRef { check = check.with(context: "memberRef", .string(ref)) }
        let (info, infoRecorded) = try api.perform(check)
        quarantined += Self.quarantined(infoRecorded)
        let listed = info.isSuccess ? info.body?["assignedSeatClaimIds"]?.arrayValue?.compactMap(\.stringValue) : nil
        let released = listed.map { !$0.contains(seatClaimId) } ?? false
        if released {
            notes.append("the first attempt's answer was lost; Apple no longer lists the claim, so the unclaim took effect "
                + "(\(result.summary); confirmed by Get Seat Info)")
        } else if let listed, listed.contains(seatClaimId) {
            notes.append("an attempt's answer was lost and the retry got SeatClaimIdNotFoundError, but Get Seat Info still lists claim \(seatClaimId)")
        } else {
            notes.append("an attempt's answer was lost and the retry got SeatClaimIdNotFoundError; Get Seat Info could not confirm the unclaim (\(info.summary))")
        }
        return SeatOperationResult(result: result, originalTransactionId: otid, claimRequest: nil, resumed: false,
                                   quarantined: quarantined, notes: notes, confirmation: info, succeeded: released)
    }

    /// Associates `seatClaimId` with the member's `appTransactionId`.
    public func associate(_ reference: String, seatClaimId: String, appTransactionId: String, now: EpochMillis) throws -> SeatOperationResult {
        let state = try api.ledger.groupState(reference, asOf: now)
        let otid = try purchaser(of: state, reference: reference)
        var notes: [String] = []
        let member = state.members.first { $0.seatClaimId == seatClaimId }
        if member == nil { notes.append("the ledger knows no claim \(seatClaimId) in group \(state.groupKey); asking Apple anyway") }
        var call = APICall.associateSeat(originalTransactionId: otid, seatClaimId: seatClaimId, appTransactionId: appTransactionId)
        if let ref = member?.memberRef { call = call.with(context: "memberRef", .string(ref)) }
        let (result, recorded) = try api.perform(call)
        return SeatOperationResult(result: result, originalTransactionId: otid, claimRequest: nil, resumed: false,
                                   quarantined: Self.quarantined(recorded), notes: notes, confirmation: nil, succeeded: result.isSuccess)
    }

    /// Get Seat Info for the group `reference` resolves to.
    public func info(_ reference: String, now: EpochMillis) throws -> SeatOperationResult {
        let state = try api.ledger.groupState(reference, asOf: now)
        let otid = try purchaser(of: state, reference: reference)
        let (result, recorded) = try api.perform(.getSeatInfo(originalTransactionId: otid))
        // A 2xx that is not Get Seat Info (a proxy's page, another body) must not read as "no claims".
        // The answer is read through one local `exchange`: reading `result.body`, `.isSuccess` and
        // `.status` (each a look into `result.lastExchange`) crashed Swift 6.3.1's optimiser in
        // release builds (CopyPropagation: "Found outside of lifetime use?!" on a borrow of
        // `result`). Fold it back when the toolchain is fixed.
        let exchange = result.lastExchange
        let isSeatInfo = exchange?.body?["assignedSeatClaimIds"]?.arrayValue != nil
        let problem = result.isSuccess && !isSeatInfo
            ? "Apple answered \(exchange.map { String($0.status) } ?? "2xx") but the body is not Get Seat Info (no assignedSeatClaimIds list); it was recorded as it came"
            : nil
        return SeatOperationResult(result: result, originalTransactionId: otid, claimRequest: nil, resumed: false,
                                   quarantined: Self.quarantined(recorded), notes: [], confirmation: nil,
                                   succeeded: result.isSuccess && isSeatInfo, problem: problem)
    }

    static func quarantined(_ recorded: [RecordedExchange]) -> [String] {
        recorded.compactMap { item in
            if case .quarantined(let id, let rejection) = item.outcome {
                return "\(item.exchange.endpoint.rawValue) response quarantined as #\(id): \(rejection.reason)"
            }
            return nil
        }
    }
}

extension Ledger {
    /// The latest verified version (by `signedDate`) of transaction `transactionId` the ledger
    /// holds (from notifications or API responses); `nil` when unknown.
    public func latestTransaction(_ transactionId: String) throws -> TransactionPayload? {
        var best: TransactionPayload?
        for event in try events(mentioning: transactionId) {
            var payloads: [JSONValue] = []
            if let tx = event.decoded["transactionInfo"] { payloads.append(tx) }
            for item in event.decoded["transactions"]?.arrayValue ?? [] {
                if let payload = item["payload"] { payloads.append(payload) }
            }
            for payload in payloads {
                let transaction = TransactionPayload(json: payload)
                guard transaction.transactionId == transactionId else { continue }
                if best == nil || (transaction.signedDate ?? 0) > (best?.signedDate ?? 0) { best = transaction }
            }
        }
        return best
    }

    /// Refuses `endpoint` for an `ASSIGNED` transaction (and for a transaction the ledger does not
    /// hold, whose ownership is unknown): the library guard every Extend a Subscription Renewal
    /// Date, Send Consumption Information or Set App Account Token path must pass.
    ///
    /// - Returns: the verified transaction, for ``AssignedTransactionGuard``'s call builders.
    public func transactionForGuardedCall(_ endpoint: APIEndpoint, transactionId: String) throws -> TransactionPayload {
        guard let transaction = try latestTransaction(transactionId) else {
            throw APIUsageError("refusing to call \(endpoint.rawValue) for transaction \(transactionId): the ledger holds no verified copy, "
                + "so whether it is ASSIGNED (which Apple refuses with 4030028 / 4000227) is unknown; record it first (Get Transaction Info)")
        }
        try AssignedTransactionGuard.check(endpoint, transaction: transaction)
        return transaction
    }
}
