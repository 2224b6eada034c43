import AppStoreModels
import Foundation
import HTTPServer
import LedgerStorage
import Projections
import Reports
import SeatLedger
import SeatLedgerAppStoreAPI
import struct AppStoreAPI.APICallResult
import struct AppStoreAPI.APICredentialsError
import struct AppStoreAPI.APIUsageError

/// The `seats` endpoints: Claim, Unclaim and Associate Seat through the App Store Server API,
/// with the same ``SeatOperations`` as `seatledger seats` (the `requestIdentifier` stored in
/// `claim_requests` before Claim Seat is sent; every response recorded as an event).
///
/// Each operation runs inside ``LedgerPool/write(_:)``: the API client is blocking (URLSession
/// behind a synchronous transport), so it runs on the pool's writer thread, never on a
/// cooperative thread. That also serialises claims: the seat check, the stored request and the
/// call cannot interleave with another claim of this process. The cost: webhook appends wait
/// while a call is in flight (at most `--api-timeout` × `--api-max-attempts` plus Retry-After waits).
struct SeatRoutes: Sendable {
    let pool: LedgerPool
    let now: @Sendable () -> EpochMillis
    let settings: SeatAPISettings
    let log: RequestLog

    /// `POST /v1/groups/{ref}/seats` `{"memberRef", "appTransactionId"?, "requestId"?}`.
    func claim(_ reference: String, _ request: HTTPRequest, fields: inout [String: JSONValue]) async throws -> HTTPResponse {
        let body = try Self.object(request)
        let memberRef = try Self.text(body, "memberRef", required: true)
        let appTransactionId = try Self.text(body, "appTransactionId", required: false)
        let requestId = try Self.text(body, "requestId", required: false).map { $0.lowercased() }
        if let requestId, UUID(uuidString: requestId) == nil {
            throw APIError(status: 400, code: "bad_body", message: "requestId \(requestId) is not a UUID (it is sent to Apple as the requestIdentifier)")
        }
        let now = now()
        let outcome = try await writing { ledger -> Outcome in
            let state = try ledger.groupState(reference, asOf: now)
            if let requestId, let stored = try ledger.claimRequest(requestId) {
                guard stored.originalTransactionId == state.purchaserOriginalTransactionId else {
                    throw APIError(status: 409, code: "request_conflict",
                                   message: "requestId \(requestId) is a claim in group \(stored.originalTransactionId), not in \(reference)")
                }
                guard stored.memberRef == memberRef else {
                    throw APIError(status: 409, code: "request_conflict",
                                   message: "requestId \(requestId) is a claim for member \(DisplayText.visible(stored.memberRef ?? "(none)")), not \(DisplayText.visible(memberRef ?? ""))")
                }
                // Claimed before: the same answer again, no call to Apple.
                if stored.state == ClaimRequestRecord.claimed, let claimId = stored.seatClaimId {
                    return Outcome(status: 200, body: Self.claimBody(claimId: claimId, record: stored, resumed: true, replayed: true,
                                                                     notes: [], state: state))
                }
            } else {
                // A new request: the ledger must show a free seat before Apple is asked.
                let pending = try state.purchaserOriginalTransactionId.map {
                    try ledger.claimRequests(originalTransactionId: $0, state: ClaimRequestRecord.pending)
                } ?? []
                let unfinished = pending.first { $0.memberRef == memberRef }
                // A new requestId while this member's earlier claim is unresolved could take a second
                // seat if that one went through: resume it instead.
                if requestId != nil, let unfinished {
                    throw APIError(status: 409, code: "claim_pending",
                                   message: "member \(DisplayText.visible(memberRef ?? "")) has an unfinished claim with requestId \(unfinished.requestIdentifier); retry with that requestId (or without one)",
                                   details: ["requestId": .string(unfinished.requestIdentifier)])
                }
                let resuming = unfinished != nil
                if let refusal = SeatOperations.claimRefusals(state: state, memberRef: memberRef, appTransactionId: appTransactionId,
                                                              checkSeats: !resuming).first {
                    throw Self.refused(refusal, state: state)
                }
            }
            let api = try connect(ledger)
            let result: SeatOperationResult
            do {
                result = try SeatOperations(api: api).claim(reference, appTransactionId: appTransactionId, memberRef: memberRef,
                                                            requestIdentifier: requestId, now: now)
            } catch let refusal as SeatClaimRefusal {
                throw Self.refused(refusal, state: state)
            }
            let after = try ledger.groupState(reference, asOf: now)
            guard result.succeeded, let claimId = result.seatClaimId else {
                throw Self.appleFailure(result, state: after, retryHint: result.claimRequest.map {
                    "retry with requestId \($0.requestIdentifier): Apple returns the same seatClaimId, no second seat is taken"
                })
            }
            return Outcome(status: result.resumed ? 200 : 201,
                           body: Self.claimBody(claimId: claimId, record: result.claimRequest, resumed: result.resumed, replayed: false,
                                                notes: result.notes, state: after))
        }
        fields["outcome"] = .string(outcome.status == 201 ? "claimed" : "claim_returned")
        return .json(outcome.body, status: outcome.status)
    }

    /// `DELETE /v1/groups/{ref}/seats/{seatClaimId}`.
    func unclaim(_ reference: String, seatClaimId: String, fields: inout [String: JSONValue]) async throws -> HTTPResponse {
        let now = now()
        let body = try await writing { ledger -> JSONValue in
            let result = try SeatOperations(api: try connect(ledger)).unclaim(reference, seatClaimId: seatClaimId, now: now)
            let after = try ledger.groupState(reference, asOf: now)
            guard result.succeeded else { throw Self.appleFailure(result, state: after, retryHint: nil) }
            return ["result": "unclaimed", "seatClaimId": .string(seatClaimId),
                    "notes": .array(result.notes.map(JSONValue.string)), "group": after.json]
        }
        fields["outcome"] = "unclaimed"
        return .json(body)
    }

    /// `POST /v1/groups/{ref}/seats/{seatClaimId}/associate` `{"appTransactionId"}`.
    func associate(_ reference: String, seatClaimId: String, _ request: HTTPRequest, fields: inout [String: JSONValue]) async throws -> HTTPResponse {
        let appTransactionId = try Self.text(try Self.object(request), "appTransactionId", required: true) ?? ""
        let now = now()
        let body = try await writing { ledger -> JSONValue in
            let result = try SeatOperations(api: try connect(ledger)).associate(reference, seatClaimId: seatClaimId,
                                                                                 appTransactionId: appTransactionId, now: now)
            let after = try ledger.groupState(reference, asOf: now)
            guard result.succeeded else { throw Self.appleFailure(result, state: after, retryHint: nil) }
            return ["result": "associated", "seatClaimId": .string(seatClaimId), "appTransactionId": .string(appTransactionId),
                    "notes": .array(result.notes.map(JSONValue.string)), "group": after.json]
        }
        fields["outcome"] = "associated"
        return .json(body)
    }

    // MARK: Pieces

    private struct Outcome: Sendable {
        let status: Int
        let body: JSONValue
    }

    private func writing<T: Sendable>(_ body: @escaping @Sendable (Ledger) throws -> T) async throws -> T {
        do { return try await pool.write(body) } catch { throw LedgerService.describe(error) }
    }

    /// The API connection for one operation on the writer's ledger.
    private func connect(_ ledger: Ledger) throws -> LedgerAPI {
        let log = self.log
        let options = settings.options(clock: now) { line in log.log(["event": "appStoreAPI", "note": .string(line)]) }
        do {
            return try LedgerAPI.connect(ledger, options: options).0
        } catch let error as APICredentialsError {
            throw APIError(status: 503, code: "api_not_configured", message: "the App Store Server API is not configured for `serve`: \(error.message)")
        } catch let error as APIUsageError {
            throw APIError(status: 503, code: "api_not_configured", message: "the App Store Server API is not configured for `serve`: \(error.message)")
        }
    }

    private static func claimBody(claimId: String, record: ClaimRequestRecord?, resumed: Bool, replayed: Bool,
                                  notes: [String], state: GroupState) -> JSONValue {
        ["result": "claimed", "seatClaimId": .string(claimId), "requestId": .optional(record?.requestIdentifier),
         "resumed": .bool(resumed), "replayed": .bool(replayed), "notes": .array(notes.map(JSONValue.string)), "group": state.json]
    }

    /// A refusal from the ledger's view, before any call: 409 with the seat counts.
    private static func refused(_ refusal: SeatClaimRefusal, state: GroupState) -> APIError {
        APIError(status: 409, code: refusal.code, message: refusal.message,
                 details: ["seats": state.json["seats"] ?? .null, "status": .string(state.status.rawValue)])
    }

    /// Apple's answer when it was not a success: its 4xx passed through with its error code; 429
    /// after the last retry with its `Retry-After`; 5xx as 502; no answer as 504.
    private static func appleFailure(_ result: SeatOperationResult, state: GroupState, retryHint: String?) -> APIError {
        let call = result.result
        var details: [String: JSONValue] = [
            "appleStatus": .optional(call.status.map(Int64.init)), "appleErrorCode": .optional(call.errorCode),
            "appleErrorMessage": .optional(call.errorMessage), "attempts": .int(Int64(call.attempts.count)),
            "requestId": .optional(result.claimRequest?.requestIdentifier), "seats": state.json["seats"] ?? .null,
        ]
        if !result.notes.isEmpty { details["notes"] = .array(result.notes.map(JSONValue.string)) }
        let hint = retryHint.map { "; \($0)" } ?? ""
        guard let status = call.status else {
            return APIError(status: 504, code: "apple_no_answer", message: "Apple did not answer (\(call.summary))\(hint)", details: details)
        }
        if status == 429 {
            // The client already waited Apple's Retry-After between its attempts; the exchange does
            // not keep headers, so the caller is told a fixed minute.
            return APIError(status: 429, code: "apple_rate_limited", message: "Apple is rate-limiting (\(call.summary))\(hint)",
                            headers: [("Retry-After", "60")], details: details)
        }
        if status >= 500 {
            return APIError(status: 502, code: "apple_unavailable", message: "Apple answered \(status) (\(call.summary))\(hint)", details: details)
        }
        return APIError(status: (400..<500).contains(status) ? status : 502, code: "apple_refused",
                        message: "Apple refused: \(call.summary)", details: details)
    }

    private static func object(_ request: HTTPRequest) throws -> [String: JSONValue] {
        guard case .object(let object)? = try? JSONValue.parse(request.body) else {
            throw APIError(status: 400, code: "bad_body", message: "the body must be a JSON object, got \(request.body.count) bytes that are not")
        }
        return object
    }

    private static func text(_ body: [String: JSONValue], _ name: String, required: Bool) throws -> String? {
        guard let value = body[name], value != .null else {
            if required { throw APIError(status: 400, code: "bad_body", message: "the body needs \(name) (a string)") }
            return nil
        }
        guard let text = value.stringValue, !text.isEmpty, text.count <= 256 else {
            throw APIError(status: 400, code: "bad_body", message: "\(name) must be a non-empty string of at most 256 characters")
        }
        // Recorded for good and shown in reports: nothing DisplayText would have to escape.
        guard DisplayText.visible(text) == text else {
            throw APIError(status: 400, code: "bad_body", message: "\(name) holds a control character (\(DisplayText.visible(text))); give plain text")
        }
        return text
    }
}

extension LedgerService {
    /// A seat operation on the ledger that knows the group (``searching(_:_:)``'s rule: 404 when
    /// none of the request's candidate ledgers does, 409 when several do), with that ledger's
    /// App Store Server API settings; the answer names the ledger.
    func seatOperation(_ match: RouteMatch, fields: inout [String: JSONValue],
                       _ operation: (SeatRoutes, inout [String: JSONValue]) async throws -> HTTPResponse) async throws -> HTTPResponse {
        let reference = match.path("ref")
        var holders: [ServedLedger] = []
        var failure: (any Error)?
        let candidates = try candidates(match)
        if candidates.count == 1 {
            holders = candidates
        } else {
            for ledger in candidates {
                do {
                    if try await !ledger.pool.read({ ledger in try ledger.groupKeys(for: reference) }).isEmpty { holders.append(ledger) }
                } catch {
                    failure = error
                }
            }
        }
        guard holders.count == 1 else {
            if holders.count > 1 {
                throw APIError(status: 409, code: "ambiguous_reference",
                               message: "the reference is known to \(holders.count) ledgers (" + holders.map(\.name).joined(separator: ", ") + "): add ?ledger=",
                               details: ["ledgers": .array(holders.map(\.json))])
            }
            if let failure { throw LedgerService.describe(failure) }
            throw APIError(status: 404, code: "not_found", message: "no ledger this token opens knows group \(reference)")
        }
        fields["ledger"] = .string(holders[0].name)
        return LedgerService.named(try await operation(seatRoutes(holders[0]), &fields), by: holders[0])
    }
}
