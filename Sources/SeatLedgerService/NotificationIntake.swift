import AppStoreModels
import Foundation
import HTTPServer
import SeatLedger

extension LedgerService {
    /// The rejection of an `apiResponse` envelope posted to the webhook: the webhook applies only
    /// Apple's signed notifications (API responses count only from our own API client or an
    /// import the operator names), so it is quarantined with its raw bytes, never applied.
    static let envelopeOnWebhook = IngestRejection(
        code: "api_response_on_webhook",
        reason: "an apiResponse envelope was posted to POST /notifications; the webhook accepts only Apple's signed notifications "
            + "(record API responses with `seatledger record`)")

    /// Whether `body` is a JSON object with an `apiResponse` member and no `signedPayload` (the
    /// shape the decoder would apply as an API response). Apple's own form is recognised without a parse.
    static func isAPIResponseEnvelope(_ body: Data) -> Bool {
        guard body.range(of: Data("apiResponse".utf8)) != nil else { return false }
        guard let value = try? JSONValue.parse(bytes: [UInt8](body)), case .object(let members) = value else { return false }
        return members["apiResponse"] != nil && members["signedPayload"] == nil
    }

    /// `POST /notifications`: appends the body exactly as received; 200 once the outcome is
    /// durable (appended, duplicate, or quarantined with its raw bytes), 503 with `Retry-After`
    /// when nothing could be stored, so Apple retries.
    func receiveNotification(_ request: HTTPRequest, fields: inout [String: JSONValue]) async -> HTTPResponse {
        metrics.received()
        let preRejection = Self.isAPIResponseEnvelope(request.body) ? Self.envelopeOnWebhook : nil
        let message = InboundMessage(raw: request.body, source: "webhook", origin: .live, preRejection: preRejection)
        let outcome: MessageOutcome
        do {
            outcome = try await pool.append([message])[0]
        } catch {
            metrics.failed()
            fields["outcome"] = "not_stored"
            return APIError(status: 503, code: "not_stored",
                            message: "the notification could not be stored (nothing was recorded; retry): \(error)",
                            headers: [("Retry-After", "5")]).response
        }
        let body: JSONValue
        switch outcome {
        case .appended(let positions, _):
            metrics.appended()
            fields["outcome"] = "appended"
            body = ["result": "appended", "positions": .array(positions.map { .int($0) })]
            if let first = positions.first { fields["position"] = .int(first) }
        case .duplicate(let position):
            metrics.duplicate()
            fields["outcome"] = "duplicate"
            fields["position"] = .int(position)
            body = ["result": "duplicate", "existingPosition": .int(position)]
        case .quarantined(let id, let rejection):
            metrics.quarantined(reason: rejection.code)
            fields["outcome"] = "quarantined"
            fields["quarantineId"] = .int(id)
            fields["reason"] = .string(rejection.code)
            body = ["result": "quarantined", "quarantineId": .int(id), "errorCode": .string(rejection.code), "reason": .string(rejection.reason)]
        }
        if let position = fields["position"]?.int64Value {
            // The event id, for the log line: read back from the position just stored.
            if let eventId = try? await pool.read({ ledger in try ledger.store.event(at: position)?.eventId }) {
                fields["eventId"] = .optional(eventId)
            }
        }
        return .json(body)
    }

    /// A body over the limit: 413, nothing stored; the log names its size and SHA-256.
    func refuseOversize(_ report: OversizeRequest) -> HTTPResponse {
        metrics.oversize()
        metrics.observe(route: report.path == "/notifications" ? "/notifications" : "unmatched", status: 413, seconds: 0)
        log.log(["method": .string(report.method), "path": .string(report.path), "status": 413, "outcome": "body_too_large",
                 "declaredBytes": .optional(report.declaredLength.map(Int64.init)), "receivedBytes": .int(Int64(report.receivedBytes)),
                 "bodySha256": .optional(report.sha256)])
        return APIError(status: 413, code: "body_too_large",
                        message: "the body (\(report.declaredLength ?? report.receivedBytes) bytes) is over the limit of "
                            + "\(configuration.http.maxBodyBytes) bytes; nothing was stored").response
    }
}
