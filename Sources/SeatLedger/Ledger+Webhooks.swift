import AppStoreModels
import LedgerStorage

extension Ledger {
    /// The ledger's outgoing webhook endpoints, by id (disabled ones included). Each record holds
    /// its signing secret: show a person its fingerprint, never the secret.
    public func webhookEndpoints() throws -> [WebhookEndpointRecord] {
        try store.webhookEndpoints()
    }

    /// The endpoint `id`, or `nil` when the ledger has none of that id.
    public func webhookEndpoint(id: String) throws -> WebhookEndpointRecord? {
        try store.webhookEndpoints().first { $0.id == id }
    }

    /// Adds an endpoint (its URL checked by the caller) and links it into the record chain, in a
    /// write transaction of its own, so `verify` finds it edited, added or deleted outside
    /// SeatLedger. An id already used is refused (``LedgerStoreError/badConfiguration(_:)``).
    public func addWebhookEndpoint(_ endpoint: WebhookEndpointRecord) throws {
        try store.addWebhookEndpoint(endpoint)
    }

    /// Disables the endpoint `id` at `now`: no new deliveries are queued for it and pending ones
    /// are not sent. Linked into the record chain. `false` when no enabled endpoint has that id.
    public func disableWebhookEndpoint(id: String, now: EpochMillis) throws -> Bool {
        try store.disableWebhookEndpoint(id: id, now: now)
    }

    /// Replaces the signing secret of endpoint `id` by `newSecret` (`whsec_…`); the old secret
    /// keeps signing (a second signature) until `previousUntil`. Linked into the record chain.
    /// `false` when the ledger has no endpoint of that id.
    public func rotateWebhookSecret(id: String, newSecret: String, previousUntil: EpochMillis) throws -> Bool {
        try store.rotateWebhookSecret(id: id, newSecret: newSecret, previousUntil: previousUntil)
    }

    /// Webhook deliveries, newest first: to the endpoint `endpointId` (or every one), in `state`
    /// (``WebhookDeliveryState``; `nil`: any), queued at or after `since`, at most `limit`.
    public func webhookDeliveries(endpointId: String? = nil, state: String? = nil, since: EpochMillis? = nil, limit: Int) throws
        -> [WebhookDeliveryRecord] {
        try store.webhookDeliveries(endpointId: endpointId, state: state, since: since, limit: limit)
    }

    /// Every attempt at the delivery numbered `deliverySeq`, first attempt first.
    public func webhookAttempts(deliverySeq: Int64) throws -> [WebhookAttemptRecord] {
        try store.webhookAttempts(deliverySeq: deliverySeq)
    }

    /// Queues webhook deliveries again, due at `now`: the one numbered `seq`, or every delivery
    /// queued at or after `since` that is not pending. How many were queued (0 for a `seq` that
    /// does not exist).
    public func redeliverWebhooks(seq: Int64? = nil, since: EpochMillis? = nil, now: EpochMillis) throws -> Int {
        try store.redeliver(seq: seq, since: since, now: now)
    }
}
