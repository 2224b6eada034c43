import Synchronization

/// The latest append the store could not write, kept for a while so `/readyz` reports it.
///
/// A store that is nearly full still commits `/readyz`'s one-page probe
/// (``LedgerStorage/TransactionalStore/probeWrite()``) while refusing a 15 KB notification, so
/// the probe alone would call a node ready that answers every notification 503. After such a
/// failure `/readyz` answers 503 for ``holdFor`` (the load balancer sends Apple's retries to
/// another node); after that it trusts the probe again, so a node whose disk was freed comes
/// back without a restart even when no notification reaches it meanwhile. A stored notification
/// does not end the window early: a nearly full store takes small ones while refusing large ones,
/// and clearing on each success would only make `/readyz` flap (and lock on every append).
final class StoreFailureWindow: Sendable {
    /// How long a failed append keeps the node not ready.
    let holdFor: Duration
    private let latest = Mutex<(at: ContinuousClock.Instant, reason: String)?>(nil)

    init(holdFor: Duration) { self.holdFor = holdFor }

    /// Records an append that stored nothing, and why.
    func failed(_ reason: String) {
        latest.withLock { $0 = (ContinuousClock.now, reason) }
    }

    /// The reason of a failure less than ``holdFor`` ago, and how long ago it was, if any.
    func recent() -> (reason: String, ago: Duration)? {
        latest.withLock { latest in
            guard let latest else { return nil }
            let ago = ContinuousClock.now - latest.at
            return ago < holdFor ? (latest.reason, ago) : nil
        }
    }
}
