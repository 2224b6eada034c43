import AppStoreModels
import Foundation
import WebhookDelivery

/// How `serve` derives access transitions and delivers webhooks.
public struct AccessChangeSettings: Sendable {
    /// Whether `serve` derives transitions and sends deliveries at all (`--no-access-changes`
    /// turns both off: the feed then stops where it is, and resumes from its cursor later).
    public var enabled = true
    /// How far behind the clock lapses are derived, so that a commit in flight is seen first.
    public var settleMilliseconds: EpochMillis = 1_000
    /// The longest wait of the derivation and the sender without a signal.
    public var idle: Duration = .seconds(1)
    /// After an append, how long the derivation lets further commits land before it runs (one
    /// derivation, one commit, for several appends; bench step 8).
    public var coalesce: Duration = .milliseconds(50)
    /// Deliveries posted at once, per ledger.
    public var concurrency = 8
    /// A post's timeout.
    public var timeout: Duration = .seconds(10)
    /// How long a claimed delivery is this process's before another may take it.
    public var leaseMilliseconds: EpochMillis = 60_000
    /// The retry schedule (at least three days, jittered).
    public var backoff = DeliveryBackoff()
    /// The sender's clock: the real time, even when `$SEATLEDGER_NOW` pins the ledger's (a
    /// receiver refuses a `webhook-timestamp` more than five minutes off, and retries fall due by it).
    public var wallClock: @Sendable () -> EpochMillis = { Timestamp.millis(Date()) }

    /// The defaults.
    public init() {}
}
