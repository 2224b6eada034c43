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
    /// The member name is looked for with `memchr` and `memcmp`, not `Data.range(of:)`, which
    /// cost the webhook intake target its margin (`Tools/bench/PERFORMANCE.md`).
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

    /// `POST /notifications` and `/notifications/{ledger}` by the async handler (the polling
    /// thread's path is ``receiveNotification(_:respond:)``; the answers are the same).
    func receiveNotification(_ match: RouteMatch, fields: inout [String: JSONValue]) async -> HTTPResponse {
        let (ledger, message) = notificationMessage(match)
        fields["ledger"] = .string(ledger.name)
        let result: Result<AppendReceipt, any Error>
        do {
            result = .success(try await ledger.pool.appendReceipts([message])[0])
        } catch {
            result = .failure(error)
        }
        return notificationAnswer(result, ledger: ledger, fields: &fields)
    }

    /// The ledger a notification goes to and the message it is appended as (origin `webhook`).
    ///
    /// `/notifications/{ledger}` names it; `/notifications` of a one-ledger service goes to that
    /// ledger (which quarantines another app's or environment's notification, naming the
    /// mismatch); of a several-ledger service, to the one ledger whose app and environment the
    /// payload claims (unverified: that ledger verifies it). A body that fits none, or names a
    /// ledger that does not exist, is kept in ``unroutable``'s quarantine as
    /// `no_ledger_for_notification` with its raw bytes; a body with no claim to read (not JSON,
    /// no signed payload) goes there too, to be quarantined for what is wrong with it.
    func notificationMessage(_ match: RouteMatch) -> (ServedLedger, InboundMessage) {
        let request = match.request
        var ledger = ledgers.count == 1 ? ledgers[0] : unroutable
        var preRejection = Self.isAPIResponseEnvelope(request.body) ? Self.envelopeOnWebhook : nil
        if match.route.pathParameters.contains("ledger") {
            let name = match.path("ledger")
            if let named = self.ledger(named: name) {
                ledger = named
            } else {
                ledger = unroutable
                preRejection = preRejection ?? IngestRejection(
                    code: .noLedgerForNotification,
                    reason: "posted to /notifications/\(name), and this service has no ledger named \(name) (it serves "
                        + ledgers.map(\.name).joined(separator: ", ") + "); check the URL in App Store Connect")
            }
        } else if ledgers.count > 1, preRejection == nil, let claims = RoutingClaims.of(request.body) {
            let fitting = ledgers.filter { $0.records(claims) }
            if fitting.count == 1 {
                ledger = fitting[0]
            } else {
                preRejection = IngestRejection(
                    code: .noLedgerForNotification,
                    reason: "the notification names bundle id \(claims.bundleId ?? "(none)") and environment \(claims.environment ?? "(none)"), which "
                        + (fitting.isEmpty ? "no ledger of this service records" : "several ledgers of this service record (" + fitting.map(\.name).joined(separator: ", ") + ")")
                        + "; add its ledger to the configuration, or post it to /notifications/{ledger}")
            }
        }
        metrics.received(ledger: ledger.name)
        return (ledger, InboundMessage(raw: request.body, source: "webhook", origin: .webhook, preRejection: preRejection))
    }

    /// The answer to a posted notification once its append ended (counted in the metrics; the
    /// log line's fields set): 200 with what became of it, or 503 when nothing was stored.
    func notificationAnswer(_ result: Result<AppendReceipt, any Error>, ledger: ServedLedger, fields: inout [String: JSONValue]) -> HTTPResponse {
        let receipt: AppendReceipt
        switch result {
        case .success(let stored):
            receipt = stored
        case .failure(let error):
            metrics.failed(ledger: ledger.name)
            ledger.storeFailures.failed("\(error)")
            fields["outcome"] = "not_stored"
            return APIError(status: 503, code: "not_stored",
                            message: "the notification could not be stored (nothing was recorded; retry): \(error)",
                            headers: [("Retry-After", "5")]).response
        }
        let body: JSONValue
        switch receipt.outcome {
        case .appended(let positions, _):
            metrics.appended(ledger: ledger.name)
            fields["outcome"] = "appended"
            body = ["result": "appended", "positions": .array(positions.map { .int($0) })]
            if let first = positions.first { fields["position"] = .int(first) }
        case .duplicate(let position):
            metrics.duplicate(ledger: ledger.name)
            fields["outcome"] = "duplicate"
            fields["position"] = .int(position)
            body = ["result": "duplicate", "existingPosition": .int(position)]
        case .quarantined(let id, let rejection):
            metrics.quarantined(ledger: ledger.name, reason: rejection.code.rawValue)
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
