import AppStoreModels
import Foundation
import JWSVerification
import LedgerStorage

extension Ledger {
    /// The `webhook-id` of a message: the transition id (or `ev_<eventId>`) when it is 1 to 256
    /// bytes of printable ASCII, as Standard Webhooks requires; else `sha256:` and its digest in hex.
    public static func webhookMessageID(_ id: String) -> String {
        let bytes = Array(id.utf8)
        if !bytes.isEmpty, bytes.count <= 256, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) { return id }
        return "sha256:" + SHA256Digest.lowercaseHex(SHA256Digest.hash(Data(bytes)))
    }

    /// The deliveries of these messages (`webhook-id`s), to every endpoint.
    public func webhookDeliveries(messageIds: [String]) throws -> [WebhookDeliveryRecord] {
        try store.webhookDeliveries(messageIds: messageIds)
    }

    /// The enabled endpoints, by id.
    public func enabledWebhookEndpoints() throws -> [WebhookEndpointRecord] {
        try store.webhookEndpoints().filter { $0.disabledAt == nil }
    }

    /// Takes up to `limit` due deliveries no other sender holds, held until `leaseUntil` (a
    /// write transaction of its own).
    public func claimDueDeliveries(now: EpochMillis, leaseUntil: EpochMillis, limit: Int) throws -> [WebhookDeliveryRecord] {
        try store.claimDueDeliveries(now: now, leaseUntil: leaseUntil, limit: limit)
    }

    /// Records an attempt: delivered, due again at `nextAttemptAt`, or failed (`nil`).
    public func recordDeliveryAttempt(_ attempt: WebhookAttemptRecord, endpointId: String, delivered: Bool, nextAttemptAt: EpochMillis?) throws {
        try store.recordDeliveryAttempt(attempt, endpointId: endpointId, delivered: delivered, nextAttemptAt: nextAttemptAt)
    }

    /// Records a sender's batch of attempts in one write transaction.
    public func recordDeliveryAttempts(_ attempts: [(attempt: WebhookAttemptRecord, endpointId: String, delivered: Bool, nextAttemptAt: EpochMillis?)]) throws {
        try store.recordDeliveryAttempts(attempts)
    }

    /// The first attempt's moment of a delivery (its creation when none was made).
    public func firstAttemptMoment(of delivery: WebhookDeliveryRecord) throws -> EpochMillis {
        try store.webhookAttempts(deliverySeq: delivery.seq).first?.at ?? delivery.createdAt
    }

    /// The exact bytes a delivery sends: for `access.changed`, `{"type", "version", "sequence",
    /// "timestamp", "data"}` (canonical, the same on every attempt); for `apple.notification`,
    /// the notification's body as Apple POSTed it. `nil` when what it carries is gone.
    public func deliveryBody(_ delivery: WebhookDeliveryRecord) throws -> [UInt8]? {
        switch delivery.type {
        case WebhookMessageType.accessChanged:
            guard let seq = delivery.transitionSeq, let row = try store.accessTransition(seq: seq),
                  let data = try? JSONValue.parse(row.body) else { return nil }
            let message: JSONValue = ["type": .string(WebhookMessageType.accessChanged), "version": 1, "sequence": .int(row.seq),
                                      "timestamp": .timestamp(row.learnedAt), "data": data]
            return Array(message.canonicalData())
        case WebhookMessageType.appleNotification:
            guard let position = delivery.eventPosition, let event = try store.event(at: position) else { return nil }
            return Array(event.raw)
        default:
            return nil
        }
    }

    /// Delivery counts by state and the oldest pending one's creation (for `/metrics`).
    public func deliveryTally() throws -> (byState: [String: Int64], oldestPendingCreatedAt: EpochMillis?, failingEndpoints: Int) {
        try store.read {
            let tally = try store.deliveryTally()
            let failing = try store.webhookEndpoints().filter { $0.disabledAt == nil && $0.failingSince != nil }.count
            return (tally.byState, tally.oldestPendingCreatedAt, failing)
        }
    }
}
