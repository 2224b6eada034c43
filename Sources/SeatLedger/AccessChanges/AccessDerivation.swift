import AppStoreModels
import LedgerStorage

/// What one ``Ledger/deriveAccessChanges(through:cache:maxEvents:maxDueScopes:)`` did.
public struct AccessDerivation: Sendable {
    /// The transitions it stored, in feed order.
    public var stored: [StoredAccessTransition]
    /// Where derivation stands now.
    public var cursor: AccessCursor
    /// The ledger's head when it ran.
    public var head: Int64
    /// Deliveries it queued.
    public var queuedDeliveries: Int
    /// The deliveries it queued held by the caller (`holdingDeliveriesUntil`): the caller's to post.
    public var heldDeliveries: [WebhookDeliveryRecord]
    /// Whether everything recorded and everything due through the horizon is derived; `false`:
    /// call again at once.
    public var caughtUp: Bool
    /// The soonest moment a scope's answer may change by time (when to run again without news:
    /// each scope's next candidate, ``AccessTransitionDeriver/candidateChange()``); `nil`: none.
    public var nextChange: EpochMillis?
    /// Scopes replayed from the store (not in the cache).
    public var replayedScopes: Int
    /// The feed's last position when it committed: past ``stored`` when another process (a second
    /// `serve` on the same PostgreSQL ledger) stored transitions since this one last looked.
    public var lastSeq: Int64
    /// Whether another process held the derivation's lock, so this one derived nothing (ask
    /// again after a moment).
    public var busy: Bool

    /// Creates a result (`lastSeq` defaults to the last of `stored`, 0 when none).
    public init(stored: [StoredAccessTransition], cursor: AccessCursor, head: Int64, queuedDeliveries: Int,
                heldDeliveries: [WebhookDeliveryRecord] = [], caughtUp: Bool,
                nextChange: EpochMillis?, replayedScopes: Int, lastSeq: Int64? = nil, busy: Bool = false) {
        self.stored = stored
        self.cursor = cursor
        self.head = head
        self.queuedDeliveries = queuedDeliveries
        self.heldDeliveries = heldDeliveries
        self.caughtUp = caughtUp
        self.nextChange = nextChange
        self.replayedScopes = replayedScopes
        self.lastSeq = lastSeq ?? stored.last?.seq ?? 0
        self.busy = busy
    }
}
