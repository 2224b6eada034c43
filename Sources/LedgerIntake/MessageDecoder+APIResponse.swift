import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage
import Projections

extension MessageDecoder {
    /// Decodes an `apiResponse` envelope: its own event, plus one notification event per
    /// Get Notification History item (deduplicated later by `notificationUUID`).
    func decodeAPIResponse(outer: JSONValue, inner: JSONValue, message: InboundMessage) throws(IngestRejection) -> [NewEvent] {
        let envelope: APIResponseEnvelope
        do {
            envelope = try APIResponseEnvelope(json: inner)
        } catch {
            throw IngestRejection(code: .invalidEnvelope, reason: error.description)
        }
        if let env = envelope.environment, env != configuration.environment {
            throw .environmentMismatch(found: env.rawValue, expected: configuration.environment.rawValue, at: "apiResponse")
        }
        let eventId = SHA256Digest.hex(outer.canonicalData())
        var identifiers = Set(Self.pathIdentifiers(envelope))
        var verification: [VerificationRecord] = []
        var transactions: [JSONValue] = []
        var renewals: [JSONValue] = []
        let fallback = Timestamp.date(envelope.respondedAt)

        func verifyNested(_ jws: String, path: String) throws(IngestRejection) -> JSONValue {
            let verified: VerifiedJWS
            do {
                verified = try verifier.verify(jws, fallbackDate: fallback)
            } catch {
                throw IngestRejection(code: RejectionCode(error.failure), reason: "body.\(path): \(error.description)")
            }
            verification.append(VerificationRecord(path: "body.\(path)", rootFingerprint: verified.rootFingerprint,
                                                   intermediateFingerprint: verified.intermediateFingerprint,
                                                   leafFingerprint: verified.leafFingerprint))
            return verified.payload
        }
        func addTransaction(_ jws: String, path: String) throws(IngestRejection) {
            let payload = try verifyNested(jws, path: path)
            let transaction = TransactionPayload(json: payload)
            if let bundle = transaction.bundleId, bundle != configuration.bundleId {
                throw .bundleMismatch(found: bundle, expected: configuration.bundleId, at: "body.\(path)")
            }
            if let env = transaction.environment, env != configuration.environment {
                throw .environmentMismatch(found: env.rawValue, expected: configuration.environment.rawValue, at: "body.\(path)")
            }
            identifiers.formUnion(Self.identifiers(of: transaction))
            transactions.append(.object(["path": .string("body.\(path)"), "payload": payload]))
        }
        func addRenewal(_ jws: String, path: String) throws(IngestRejection) {
            let payload = try verifyNested(jws, path: path)
            let renewal = RenewalInfoPayload(json: payload)
            if let env = renewal.environment, env != configuration.environment {
                throw .environmentMismatch(found: env.rawValue, expected: configuration.environment.rawValue, at: "body.\(path)")
            }
            if let id = renewal.originalTransactionId { identifiers.insert(EventIdentifier(.originalTransactionId, id)) }
            renewals.append(.object(["path": .string("body.\(path)"), "payload": payload]))
        }

        var carried: [NewEvent] = []
        if let body = envelope.body {
            if let bundle = body["bundleId"]?.stringValue, bundle != configuration.bundleId {
                throw .bundleMismatch(found: bundle, expected: configuration.bundleId, at: "body")
            }
            for (index, item) in (body["signedTransactions"]?.arrayValue ?? []).enumerated() {
                if let jws = item.stringValue { try addTransaction(jws, path: "signedTransactions[\(index)]") }
            }
            if let jws = body["signedTransactionInfo"]?.stringValue { try addTransaction(jws, path: "signedTransactionInfo") }
            if let jws = body["signedRenewalInfo"]?.stringValue { try addRenewal(jws, path: "signedRenewalInfo") }
            for (i, group) in (body["data"]?.arrayValue ?? []).enumerated() {
                for (j, last) in (group["lastTransactions"]?.arrayValue ?? []).enumerated() {
                    let base = "data[\(i)].lastTransactions[\(j)]"
                    if let jws = last["signedTransactionInfo"]?.stringValue { try addTransaction(jws, path: "\(base).signedTransactionInfo") }
                    if let jws = last["signedRenewalInfo"]?.stringValue { try addRenewal(jws, path: "\(base).signedRenewalInfo") }
                    if let id = last["originalTransactionId"]?.stringValue { identifiers.insert(EventIdentifier(.originalTransactionId, id)) }
                }
            }
            for (index, item) in (body["notificationHistory"]?.arrayValue ?? []).enumerated() {
                guard let jws = item["signedPayload"]?.stringValue else { continue }
                let itemRaw = Data(JSONValue.object(["signedPayload": .string(jws)]).canonicalData())
                do {
                    let event = try decodeNotification(jws: jws, raw: itemRaw,
                                                       source: "\(message.source)#notificationHistory[\(index)]",
                                                       origin: .backfill)
                    carried.append(event)
                    identifiers.insert(EventIdentifier(.notificationUUID, event.eventId))
                } catch {
                    throw IngestRejection(code: error.code, reason: "body.notificationHistory[\(index)]: \(error.reason)")
                }
            }
            identifiers.formUnion(Self.bodyIdentifiers(envelope: envelope, body: body))
        }
        if let request = envelope.requestBody {
            if let id = request["requestIdentifier"]?.stringValue { identifiers.insert(EventIdentifier(.requestIdentifier, id)) }
            if let id = request["appTransactionId"]?.stringValue { identifiers.insert(EventIdentifier(.appTransactionId, id)) }
        }
        if let ref = envelope.context?["memberRef"]?.stringValue { identifiers.insert(EventIdentifier(.memberRef, ref)) }

        var decoded: [String: JSONValue] = ["apiResponse": inner]
        if !transactions.isEmpty { decoded["transactions"] = .array(transactions) }
        if !renewals.isEmpty { decoded["renewalInfos"] = .array(renewals) }
        let own = NewEvent(eventId: eventId, kind: .apiResponse, type: envelope.endpoint.rawValue, subtype: nil,
                           status: envelope.status, occurredAt: envelope.respondedAt, raw: message.raw,
                           decoded: .object(decoded), identifiers: identifiers.sorted(), verification: verification,
                           source: message.source, origin: message.origin == .live ? .recorded : message.origin)
        return [own] + carried
    }

    /// Identifiers in the request path: seat paths carry the purchaser's original transaction id
    /// and the claim id; group paths the group id; classic paths a transaction id.
    static func pathIdentifiers(_ envelope: APIResponseEnvelope) -> [EventIdentifier] {
        var ids: [EventIdentifier] = []
        if let id = envelope.seatPathTransactionId {
            ids.append(EventIdentifier(.originalTransactionId, id))
            if let claim = envelope.seatPathClaimId { ids.append(EventIdentifier(.seatClaimId, claim)) }
        }
        switch envelope.endpoint {
        case .getCustomerGroups:
            if let id = envelope.pathSegment(after: "currentGroups") { ids.append(EventIdentifier(.customerId, id)) }
        case .getGroupMembers:
            if let id = envelope.pathSegment(after: "group") { ids.append(EventIdentifier(.groupId, id)) }
        case .getAllSubscriptionStatuses:
            if let id = envelope.pathSegment(after: "subscriptions") { ids.append(EventIdentifier(.transactionId, id)) }
        case .getTransactionInfo:
            if let id = envelope.pathSegment(after: "transactions") { ids.append(EventIdentifier(.transactionId, id)) }
        case .getTransactionHistory:
            if let id = envelope.pathSegment(after: "history") { ids.append(EventIdentifier(.transactionId, id)) }
        default:
            break
        }
        return ids
    }

    /// Identifiers in a response body (claims, groups, members).
    static func bodyIdentifiers(envelope: APIResponseEnvelope, body: JSONValue) -> [EventIdentifier] {
        var ids: [EventIdentifier] = []
        if let id = body["seatClaimId"]?.stringValue { ids.append(EventIdentifier(.seatClaimId, id)) }
        for id in body["assignedSeatClaimIds"]?.arrayValue ?? [] {
            if let id = id.stringValue { ids.append(EventIdentifier(.seatClaimId, id)) }
        }
        for group in body["groups"]?.arrayValue ?? [] {
            if let id = group["groupId"]?.stringValue { ids.append(EventIdentifier(.groupId, id)) }
        }
        for member in GroupMembersBodyReader.members(in: body) {
            ids.append(EventIdentifier(.appTransactionId, member))
        }
        return ids
    }
}
