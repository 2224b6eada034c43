import AppStoreModels
import Foundation
import HTTPServer
import LedgerIntake
import SeatLedger

extension LedgerService {
    /// The rejection of a body posted to `POST /v1/api-responses` that is not an `apiResponse`
    /// envelope: a signed notification (Apple's form) or text that is not JSON. The route records
    /// only what `seatledger record` records; the body is quarantined with its raw bytes.
    static func notAnAPIResponse(_ what: String) -> IngestRejection {
        IngestRejection(code: .notAnAPIResponse,
                        reason: "\(what) was posted to POST /v1/api-responses, which records only App Store Server API responses "
                            + "as {\"apiResponse\": {…}} (what `seatledger record` takes); Apple's signed notifications go to POST /notifications")
    }

    /// The rejection of `body` before decoding when it is not an `apiResponse` envelope: a JSON
    /// object with `signedPayload` and no `apiResponse`, or text that cannot be JSON (a bare JWS);
    /// or when its `respondedAt` is a moment outside the years 0001 to 9999. `nil` for everything
    /// else, which the decoder reads as `seatledger record` does (an empty body, malformed JSON,
    /// an array, an invalid envelope: each refused with its own code).
    ///
    /// The `respondedAt` check is this route's own: `respondedAt` becomes the event's
    /// `occurredAt`, which the `/v1` answers print as ISO 8601 with four-digit years (the
    /// document's `IsoTime`), and the decoder, shared with `record` and `ingest`, takes any
    /// 64-bit millisecond (IngestRobustnessTests keeps `Int64.max` appending there).
    static func apiResponsePreRejection(_ body: Data) -> IngestRejection? {
        var bytes = [UInt8](body)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard let first = bytes.first(where: { !" \t\r\n".utf8.contains($0) }) else { return nil }
        guard first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else {
            return notAnAPIResponse("text that is not JSON (\(bytes.count) bytes)")
        }
        guard case .object(let members)? = try? JSONValue.parse(bytes: bytes) else { return nil }
        if members["apiResponse"] == nil, members["signedPayload"] != nil {
            return notAnAPIResponse("a signed notification ({\"signedPayload\": …})")
        }
        if let responded = Timestamp.parse(members["apiResponse"]?["respondedAt"]), !Timestamp.printableRange.contains(responded) {
            return IngestRejection(code: .invalidEnvelope,
                                   reason: "invalid apiResponse envelope: respondedAt \(responded) (epoch milliseconds) is outside the years "
                                       + "0001 to 9999, which POST /v1/api-responses records (it becomes the event's occurredAt)")
        }
        return nil
    }

    /// The source recorded for a body of `POST /v1/api-responses`: the token that posted it and
    /// the route (what `events` and `quarantine list` show).
    static func apiResponseSource(token: String) -> String {
        "token \(token) POST \(ServiceRoute.apiResponses.template)"
    }

    /// The message a body of `POST /v1/api-responses` is: origin `app-server`, the token in its
    /// source, API responses accepted (the authenticated route is an import the operator named
    /// by giving the token scope `record`; the origin itself does not trust envelopes).
    static func apiResponseMessage(_ body: Data, token: String) -> InboundMessage {
        InboundMessage(raw: body, source: apiResponseSource(token: token), origin: .appServer,
                       preRejection: apiResponsePreRejection(body), acceptsAPIResponses: true)
    }

    /// `POST /v1/api-responses`: appends the `apiResponse` envelope exactly as received, as
    /// `seatledger record` does. 201 when appended, 200 for an envelope recorded before (the event
    /// id is the SHA-256 of the canonical envelope), 400 naming the problem when refused (the raw
    /// bytes quarantined, the quarantine id in the body), 503 when nothing could be stored.
    func recordAPIResponse(_ match: RouteMatch, fields: inout [String: JSONValue]) async throws(APIError) -> HTTPResponse {
        guard let token = match.token else {
            // The table gives the route a scope, so dispatch authorized a token before this.
            throw APIError(status: 401, code: "unauthorized", message: "POST /v1/api-responses needs a bearer token of scope record")
        }
        let ledger = try target(match)
        fields["ledger"] = .string(ledger.name)
        let receipt: AppendReceipt
        do {
            receipt = try await ledger.pool.appendReceipts([Self.apiResponseMessage(match.request.body, token: token)])[0]
        } catch {
            fields["outcome"] = "not_stored"
            throw APIError(status: 503, code: "not_stored",
                           message: "the API response could not be stored (nothing was recorded; retry): \(error)",
                           headers: [("Retry-After", "5")])
        }
        if let eventId = receipt.eventId { fields["eventId"] = .string(eventId) }
        switch receipt.outcome {
        case .appended(let positions, let duplicates):
            fields["outcome"] = "appended"
            if let first = positions.first { fields["position"] = .int(first) }
            return .json(["outcome": "appended", "positions": .array(positions.map { .int($0) }),
                          "eventId": .optional(receipt.eventId), "carriedDuplicates": .count(duplicates)], status: 201)
        case .duplicate(let position):
            fields["outcome"] = "duplicate"
            fields["position"] = .int(position)
            return .json(["outcome": "duplicate", "existingPosition": .int(position), "eventId": .optional(receipt.eventId)])
        case .quarantined(let id, let rejection):
            fields["outcome"] = "quarantined"
            fields["quarantineId"] = .int(id)
            fields["reason"] = .string(rejection.code.rawValue)
            throw APIError(status: 400, code: rejection.code.rawValue,
                           message: "\(rejection.reason) (kept in quarantine as #\(id): `seatledger quarantine show \(id)`)",
                           details: ["quarantineId": .int(id)])
        }
    }
}
