import AppStoreModels
import Foundation
import HTTPServer
import LedgerIntake
import SeatLedger

extension LedgerService {
    /// The rejection of an `apiResponse` envelope posted to the webhook: the webhook applies only
    /// Apple's signed notifications (API responses count only from our own API client or an
    /// import the operator names: `seatledger record`, `POST /v1/api-responses`), so it is
    /// quarantined with its raw bytes, never applied.
    static let envelopeOnWebhook = IngestRejection(
        code: "api_response_on_webhook",
        reason: "an apiResponse envelope was posted to POST /notifications; the webhook accepts only Apple's signed notifications "
            + "(record API responses with `seatledger record`, or POST them to /v1/api-responses with a token of scope record)")

    /// Whether `body` is a JSON object with an `apiResponse` member and no `signedPayload` (the
    /// shape the decoder would apply as an API response). Apple's own form is recognised without a parse.
    ///
    /// The member name is looked for with `memchr` and `memcmp`: `Data.range(of:)` was 4.7% of
    /// `serve`'s CPU under the webhook load (bench step 1c, target at 64 connections ≥ 0.8× the
    /// file ingest).
    static func isAPIResponseEnvelope(_ body: Data) -> Bool {
        let mentioned = body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            contains(apiResponseName, in: bytes)
        }
        guard mentioned else { return false }
        guard let value = try? JSONValue.parse(bytes: [UInt8](body)), case .object(let members) = value else { return false }
        return members["apiResponse"] != nil && members["signedPayload"] == nil
    }

    private static let apiResponseName: [UInt8] = Array("apiResponse".utf8)

    /// Whether `needle` (not empty) occurs in `bytes`.
    private static func contains(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count >= needle.count else { return false }
        return needle.withUnsafeBytes { name -> Bool in
            let first = Int32(needle[0])
            var offset = 0
            let last = bytes.count - needle.count
            while offset <= last {
                guard let hit = memchr(base + offset, first, last - offset + 1) else { return false }
                let at = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + at, name.baseAddress!, needle.count) == 0 { return true }
                offset = at + 1
            }
            return false
        }
    }

    /// `POST /notifications`: appends the body exactly as received; 200 once the outcome is
    /// durable (appended, duplicate, or quarantined with its raw bytes), 503 with `Retry-After`
    /// when nothing could be stored, so Apple retries.
    func receiveNotification(_ request: HTTPRequest, fields: inout [String: JSONValue]) async -> HTTPResponse {
        let message = notificationMessage(request)
        let result: Result<AppendReceipt, any Error>
        do {
            result = .success(try await pool.appendReceipts([message])[0])
        } catch {
            result = .failure(error)
        }
        return notificationAnswer(result, fields: &fields)
    }

    /// The message a posted notification is (counted as received): an `apiResponse` envelope is
    /// marked for quarantine (``envelopeOnWebhook``).
    func notificationMessage(_ request: HTTPRequest) -> InboundMessage {
        metrics.received()
        let preRejection = Self.isAPIResponseEnvelope(request.body) ? Self.envelopeOnWebhook : nil
        return InboundMessage(raw: request.body, source: "webhook", origin: .webhook, preRejection: preRejection)
    }

    /// The answer to a posted notification once its append ended (counted in the metrics; the
    /// log line's fields set): 200 with what became of it, or 503 when nothing was stored.
    func notificationAnswer(_ result: Result<AppendReceipt, any Error>, fields: inout [String: JSONValue]) -> HTTPResponse {
        let receipt: AppendReceipt
        switch result {
        case .success(let stored):
            receipt = stored
        case .failure(let error):
            metrics.failed()
            storeFailures.failed("\(error)")
            fields["outcome"] = "not_stored"
            return APIError(status: 503, code: "not_stored",
                            message: "the notification could not be stored (nothing was recorded; retry): \(error)",
                            headers: [("Retry-After", "5")]).response
        }
        let body: JSONValue
        switch receipt.outcome {
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
            metrics.quarantined(reason: rejection.code.rawValue)
            fields["outcome"] = "quarantined"
            fields["quarantineId"] = .int(id)
            fields["reason"] = .string(rejection.code.rawValue)
            body = ["result": "quarantined", "quarantineId": .int(id), "errorCode": .string(rejection.code.rawValue), "reason": .string(rejection.reason)]
        }
        // The event id, for the log line: the pool knows it from decoding (reading it back was 8% of the CPU).
        if let eventId = receipt.eventId { fields["eventId"] = .string(eventId) }
        return .json(body)
    }

    /// A body over the limit: 413, nothing stored; the log names its size and SHA-256.
    func refuseOversize(_ report: OversizeRequest) -> HTTPResponse {
        metrics.oversize()
        metrics.observe(route: RouteTable.service.label(path: report.path), status: 413, seconds: 0)
        log.log(["method": .string(report.method), "path": .string(report.path), "status": 413, "outcome": "body_too_large",
                 "declaredBytes": .optional(report.declaredLength.map(Int64.init)), "receivedBytes": .int(Int64(report.receivedBytes)),
                 "bodySha256": .optional(report.sha256)])
        return APIError(status: 413, code: "body_too_large",
                        message: "the body (\(report.declaredLength ?? report.receivedBytes) bytes) is over the limit of "
                            + "\(configuration.http.maxBodyBytes) bytes; nothing was stored").response
    }
}
