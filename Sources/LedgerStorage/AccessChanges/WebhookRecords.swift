import AppStoreModels
import Foundation

/// One outgoing webhook endpoint of a ledger (`webhook_endpoints`), added by the operator
/// (`seatledger webhook add`) and linked into the record chain, so that a writer of the database
/// cannot redirect or re-key it unseen (`verify`). `secret` is the `whsec_` signing secret: never
/// print it; ``description`` redacts it.
public struct WebhookEndpointRecord: Sendable, Hashable, CustomStringConvertible {
    /// `wh_` and 16 hex digits; the same on every ledger the endpoint was added to at once.
    public var id: String
    /// Where deliveries are POSTed (checked at `webhook add`).
    public var url: String
    /// The message types it receives (``WebhookMessageType``).
    public var types: [String]
    /// The signing secret (`whsec_…`).
    public var secret: String
    /// The secret before the last rotation, which still signs until ``previousSecretUntil``.
    public var previousSecret: String?
    /// When the previous secret stops signing (epoch ms).
    public var previousSecretUntil: EpochMillis?
    /// When it was added.
    public var createdAt: EpochMillis
    /// When it was disabled (no new deliveries, none sent); `nil` while enabled.
    public var disabledAt: EpochMillis?
    /// Since when a delivery to it has given up and none has succeeded since; `nil`: healthy.
    public var failingSince: EpochMillis?

    /// Creates a record.
    public init(id: String, url: String, types: [String], secret: String, previousSecret: String? = nil,
                previousSecretUntil: EpochMillis? = nil, createdAt: EpochMillis, disabledAt: EpochMillis? = nil,
                failingSince: EpochMillis? = nil) {
        self.id = id
        self.url = url
        self.types = types
        self.secret = secret
        self.previousSecret = previousSecret
        self.previousSecretUntil = previousSecretUntil
        self.createdAt = createdAt
        self.disabledAt = disabledAt
        self.failingSince = failingSince
    }

    /// The secrets that sign a message sent at `now`: the current one, and the previous one during
    /// its grace period.
    public func signingSecrets(at now: EpochMillis) -> [String] {
        if let previousSecret, let until = previousSecretUntil, now < until { return [secret, previousSecret] }
        return [secret]
    }

    /// Whether it receives messages of `type`.
    public func receives(_ type: String) -> Bool { disabledAt == nil && types.contains(type) }

    /// The id, URL and types; never the secret.
    public var description: String { "webhook endpoint \(id) (\(url); \(types.joined(separator: ",")))" }
}

/// The kinds of message a webhook endpoint can receive.
public enum WebhookMessageType {
    /// An access transition (body: `{type, version, sequence, timestamp, data: transition}`).
    public static let accessChanged = "access.changed"
    /// Apple's notification body forwarded verbatim, as it was POSTed to the ledger.
    public static let appleNotification = "apple.notification"
    /// Every type this version sends.
    public static let all = [accessChanged, appleNotification]
}

/// A delivery's state.
public enum WebhookDeliveryState {
    /// Waiting for its next attempt.
    public static let pending = "pending"
    /// A 2xx answered it.
    public static let delivered = "delivered"
    /// Its retries are used up (three days or more); the endpoint is marked failing. `redeliver` queues it again.
    public static let failed = "failed"
}

/// One message to one endpoint (`webhook_deliveries`): written in the transaction that derives
/// what it carries, sent at least once.
public struct WebhookDeliveryRecord: Sendable, Hashable {
    /// Its number, from 1.
    public var seq: Int64
    /// The endpoint.
    public var endpointId: String
    /// The `webhook-id`: the transition id, or `ev_<eventId>` for a forwarded notification.
    public var messageId: String
    /// ``WebhookMessageType``.
    public var type: String
    /// The transition's feed position, for `access.changed`.
    public var transitionSeq: Int64?
    /// The event's position, for `apple.notification`.
    public var eventPosition: Int64?
    /// ``WebhookDeliveryState``.
    public var state: String
    /// Attempts made.
    public var attempts: Int
    /// When it was queued.
    public var createdAt: EpochMillis
    /// When it is next due (pending).
    public var nextAttemptAt: EpochMillis
    /// While a sender holds it: until when (another process takes it after).
    public var leaseUntil: EpochMillis?
    /// The last attempt's HTTP status (`nil`: none, or no response).
    public var lastStatus: Int?
    /// The last attempt's moment.
    public var lastAttemptAt: EpochMillis?
    /// When a 2xx answered it.
    public var deliveredAt: EpochMillis?
    /// The last attempt's error, when it got no 2xx (bounded).
    public var lastError: String?

    /// Creates a record.
    public init(seq: Int64, endpointId: String, messageId: String, type: String, transitionSeq: Int64?, eventPosition: Int64?,
                state: String, attempts: Int, createdAt: EpochMillis, nextAttemptAt: EpochMillis, leaseUntil: EpochMillis? = nil,
                lastStatus: Int? = nil, lastAttemptAt: EpochMillis? = nil, deliveredAt: EpochMillis? = nil, lastError: String? = nil) {
        self.seq = seq
        self.endpointId = endpointId
        self.messageId = messageId
        self.type = type
        self.transitionSeq = transitionSeq
        self.eventPosition = eventPosition
        self.state = state
        self.attempts = attempts
        self.createdAt = createdAt
        self.nextAttemptAt = nextAttemptAt
        self.leaseUntil = leaseUntil
        self.lastStatus = lastStatus
        self.lastAttemptAt = lastAttemptAt
        self.deliveredAt = deliveredAt
        self.lastError = lastError
    }
}

/// One attempt at a delivery (`webhook_attempts`): when, what came back, how long it took.
public struct WebhookAttemptRecord: Sendable, Hashable {
    /// The delivery.
    public var deliverySeq: Int64
    /// 1 for the first attempt.
    public var attempt: Int
    /// When it was sent (epoch ms).
    public var at: EpochMillis
    /// The HTTP status; `nil` when no response came.
    public var status: Int?
    /// From sending to the answer (or the failure).
    public var latencyMilliseconds: Int64
    /// Why it failed without a status (timeout, refused connection), or a non-2xx in words.
    public var error: String?
    /// The start of the answer's body (at most 512 bytes).
    public var snippet: String?

    /// Creates a record.
    public init(deliverySeq: Int64, attempt: Int, at: EpochMillis, status: Int?, latencyMilliseconds: Int64, error: String?, snippet: String?) {
        self.deliverySeq = deliverySeq
        self.attempt = attempt
        self.at = at
        self.status = status
        self.latencyMilliseconds = latencyMilliseconds
        self.error = error
        self.snippet = snippet
    }
}
