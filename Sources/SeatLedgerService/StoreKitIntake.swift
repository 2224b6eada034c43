import AppStoreModels
import Foundation
import HTTPServer
import LedgerEvents
import LedgerIntake
import SeatLedger

/// `POST /v1/storekit`: the app server posts what the app sent it after the person signed in or
/// bought (a StoreKit transaction or a signed `AppTransaction`, with the app's user id for them).
///
/// The body is stored exactly as received, like a notification's: appended as a `storeKit` event
/// (origin `app-server`, source naming the token), a duplicate of the same input, or quarantined
/// with its raw bytes. The JWS is Apple's and verified like any; the user id is the token
/// holder's word, which is why the route needs a token of its own scope (`link`).
extension LedgerService {
    /// The source a posted input records: which token posted it, and where.
    static func storeKitSource(token: String) -> String { "token \(token) POST \(ServiceRoute.storeKit.template)" }

    /// Why a body is not a StoreKit input at all (`not_storekit_input`), or `nil` when the decoder
    /// should read it: a JSON object with a `storeKit` member (the decoder then checks the rest),
    /// and text the decoder refuses on its own (empty, or starting with `{` but not JSON).
    ///
    /// Anything else would be read as another form (a notification, an `apiResponse` envelope, a
    /// bare JWS) and must not be applied with this route's origin: it is quarantined instead.
    static func storeKitBodyProblem(_ body: Data) -> IngestRejection? {
        var bytes = [UInt8](body)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        while let last = bytes.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { bytes.removeLast() }
        let start = bytes.firstIndex { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) } ?? bytes.endIndex
        guard start < bytes.endIndex else { return nil }
        let what: String
        switch bytes[start] {
        case UInt8(ascii: "{"):
            guard let value = try? JSONValue.parse(bytes: Array(bytes[start...])), case .object(let members) = value else { return nil }
            if members["storeKit"] != nil { return nil }
            if members["signedPayload"] != nil {
                what = "a notification ({\"signedPayload\": …}): post it to POST /notifications"
            } else if members["apiResponse"] != nil {
                what = "an apiResponse envelope: record it with `seatledger record FILE`"
            } else {
                what = "a JSON object without a \"storeKit\" member"
            }
        case UInt8(ascii: "["):
            what = "a JSON array"
        default:
            what = "not a JSON object (a bare JWS is read only by `seatledger ingest FILE`)"
        }
        return IngestRejection(code: .notStoreKitInput,
                               reason: "not a StoreKit input: POST /v1/storekit takes {\"storeKit\": {\"userId\": \"…\", \"signedTransaction\" "
                                   + "or \"signedAppTransaction\": \"<JWS>\"}}; this body is \(what)")
    }

    /// Appends a posted StoreKit input: 201 with the event and the identities it links, 200 for
    /// the same input again, 400 (``APIError``: the rejection's code, its reason, the quarantine
    /// id) when it was refused and quarantined, 503 when nothing could be stored.
    func receiveStoreKit(_ match: RouteMatch, fields: inout [String: JSONValue]) async throws(APIError) -> HTTPResponse {
        let request = match.request
        let ledger = try target(match)
        fields["ledger"] = .string(ledger.name)
        let token = fields["token"]?.stringValue ?? "(none)"
        let message = InboundMessage(raw: request.body, source: Self.storeKitSource(token: token), origin: .appServer,
                                     preRejection: Self.storeKitBodyProblem(request.body))
        let receipt: AppendReceipt
        do {
            receipt = try await ledger.pool.appendReceipts([message])[0]
        } catch {
            ledger.storeFailures.failed("\(error)")
            fields["outcome"] = "not_stored"
            throw APIError(status: 503, code: "not_stored", message: "the StoreKit input could not be stored (nothing was recorded; retry): \(error)",
                           headers: [("Retry-After", "5")])
        }
        if let eventId = receipt.eventId { fields["eventId"] = .string(eventId) }
        let linked = StoreKitLinks(identifiers: receipt.identifiers).json
        switch receipt.outcome {
        case .appended(let positions, _):
            fields["outcome"] = "appended"
            if let first = positions.first { fields["position"] = .int(first) }
            return .json(["outcome": "appended", "eventId": .optional(receipt.eventId), "positions": .array(positions.map { .int($0) }),
                          "linked": linked], status: 201)
        case .duplicate(let position):
            fields["outcome"] = "duplicate"
            fields["position"] = .int(position)
            return .json(["outcome": "duplicate", "eventId": .optional(receipt.eventId), "existingPosition": .int(position),
                          "linked": linked])
        case .quarantined(let id, let rejection):
            fields["outcome"] = "quarantined"
            fields["quarantineId"] = .int(id)
            fields["reason"] = .string(rejection.code.rawValue)
            throw APIError(status: 400, code: rejection.code.rawValue, message: rejection.reason, details: ["quarantineId": .int(id)])
        }
    }
}
