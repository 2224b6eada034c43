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
    /// After a derivation of at least ``busyEvents`` events (the log is growing fast), how long
    /// the next one waits instead of ``coalesce``: fewer derivation commits, each with its own
    /// `fsync` on the writer the appends need (bench step 8a), at the cost of a later webhook
    /// only when notifications arrive that fast.
    public var busyCoalesce: Duration = .milliseconds(250)
    /// How many events one derivation must cover for the next to wait ``busyCoalesce``
    /// (at 50 ms, about 2,000 notifications a second).
    public var busyEvents: Int64 = 100
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
