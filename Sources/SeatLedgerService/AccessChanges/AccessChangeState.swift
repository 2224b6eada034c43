import LedgerConcurrency
import LedgerStorage
import SeatLedger
import Synchronization

/// What the service keeps per ledger for its access changes: the derivers the last derivation
/// left, the feed's and the delivery queue's signals, and the counters `/metrics` shows.
final class AccessChangeState: Sendable {
    /// The derivers, by scope (``AccessDeriverCache``).
    let derivers = AccessDeriverCache()
    /// The feed's last position as this process's follower last saw it, whoever derived it (long
    /// polls of `/v1/access-changes` wait on it).
    let feed = ProgressSignal()
    /// Bumped when deliveries were queued (the sender waits on it).
    let queue = ProgressSignal()
    /// Deliveries this process's derivations queued held by it, for its sender to post without a
    /// claim of its own (the lease covers them should the process die).
    let handedOff = Mutex<[WebhookDeliveryRecord]>([])
    /// Transitions this process stored.
    let transitionsEmitted = Atomic<Int64>(0)
    /// Attempts answered 2xx.
    let delivered = Atomic<Int64>(0)
    /// Attempts that failed and will be retried.
    let retried = Atomic<Int64>(0)
    /// Deliveries whose retries ran out (the endpoint marked failing).
    let failed = Atomic<Int64>(0)
    /// Derivations that failed (the store refused or was unreachable); retried.
    let derivationFailures = Atomic<Int64>(0)

    /// Closes both signals (the service is stopping): every wait returns at once.
    func close() {
        feed.close()
        queue.close()
    }
}
