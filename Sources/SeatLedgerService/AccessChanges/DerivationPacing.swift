/// When `serve`'s access derivation runs next, and on which reader: the follower's policy,
/// written once and pure (the caller says how long it has been behind and what it derived).
///
/// - After news it waits ``coalesce`` for the commits behind it, or ``busyCoalesce`` after a
///   derivation of at least ``busyEvents`` events (notifications arriving by the thousand: fewer
///   derivation commits, each an `fsync` on the writer the intake needs; bench step 8a).
/// - It plans on idle cores only (``LedgerPool/backgroundRead(_:)``) while it has been behind
///   for at most ``yieldsFor``; past that, on a regular reader until it catches up, so load that
///   never lets up cannot hold transitions back for ever (30 s: half the 60 s within which issue
///   #47 wants a lapse derived).
struct DerivationPacing: Sendable, Equatable {
    /// The wait after news.
    var coalesce: Duration
    /// The wait after news that follows a large derivation.
    var busyCoalesce: Duration
    /// The events a derivation must cover for the next wait to be ``busyCoalesce``.
    var busyEvents: Int64
    /// How long derivation may stay behind while it plans on idle cores only.
    var yieldsFor: Duration = .seconds(30)

    /// The wait after news, once a derivation of `events` events has been stored.
    func pause(afterDeriving events: Int64) -> Duration {
        events >= busyEvents ? max(coalesce, busyCoalesce) : coalesce
    }

    /// Whether to plan on idle cores only, the last caught-up derivation having ended `behind` ago.
    func plansOnIdleCores(behindFor behind: Duration) -> Bool {
        behind <= yieldsFor
    }
}
