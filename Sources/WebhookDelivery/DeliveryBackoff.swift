/// When to try a failed webhook delivery again, and when to give up: pure, no clock, the
/// randomness injected.
///
/// The schedule, counted from the first attempt (which is made at once):
///
/// | after attempt | base delay | | after attempt | base delay |
/// |---|---|---|---|---|
/// | 1 | 5 s | | 6 | 1 h |
/// | 2 | 30 s | | 7 | 3 h |
/// | 3 | 2 min | | 8 | 6 h |
/// | 4 | 10 min | | 9 | 12 h |
/// | 5 | 30 min | | 10 and later | 12 h |
///
/// Each delay is jittered by a factor drawn uniformly from `1 - jitter ..< 1 + jitter` (±20 % by
/// default), so endpoints that failed together are not retried together. The attempts go on while
/// the first attempt is younger than ``maximumSpan`` (default 73 h: three days and an hour); an
/// attempt that would fall later is moved to the moment the span ends, so the last attempt is
/// made exactly ``maximumSpan`` after the first. After a failed attempt made at or past that
/// moment, ``nextAttempt(firstAttemptAt:lastAttemptAt:attempts:using:)`` returns `nil`: give up,
/// the delivery fails and its endpoint is marked failing. Without jitter a full schedule has 15
/// attempts: at 0, 5 s, 35 s, 2 min 35 s, 12 min 35 s, 42 min 35 s, 1 h 42 min 35 s,
/// 4 h 42 min 35 s, 10 h 42 min 35 s, 22 h 42 min 35 s, 34 h 42 min 35 s, 46 h 42 min 35 s,
/// 58 h 42 min 35 s, 70 h 42 min 35 s and 73 h.
///
/// Moments are Unix epoch milliseconds, the ledger's unit. Tests pass a short ``maximumSpan``
/// (and short ``delays``) and a seeded generator.
///
/// ```swift
/// var random = SystemRandomNumberGenerator()
/// if let next = DeliveryBackoff().nextAttempt(firstAttemptAt: first, lastAttemptAt: now, attempts: 3, using: &random) {
///     // schedule attempt 4 at `next`
/// } else {
///     // give up
/// }
/// ```
public struct DeliveryBackoff: Sendable, Equatable {
    /// The base delays after attempts 1, 2, 3 …; the last repeats for every later attempt.
    public static let standardDelays: [Duration] = [
        .seconds(5), .seconds(30), .seconds(2 * 60), .seconds(10 * 60), .seconds(30 * 60),
        .seconds(3600), .seconds(3 * 3600), .seconds(6 * 3600), .seconds(12 * 3600),
    ]
    /// Three days and an hour: the attempts go on until the first is at least this old.
    public static let standardMaximumSpan: Duration = .seconds(73 * 3600)
    /// ±20 %.
    public static let standardJitter = 0.2

    /// The base delays after attempts 1, 2, 3 …; the last repeats. Not empty, each positive.
    public let delays: [Duration]
    /// The jitter's half-width as a fraction of a delay, `0 ..< 1` (0.2: ±20 %).
    public let jitter: Double
    /// How long after the first attempt the last is made; after it, give up.
    public let maximumSpan: Duration

    /// A schedule; the defaults are the production one.
    public init(delays: [Duration] = DeliveryBackoff.standardDelays, jitter: Double = DeliveryBackoff.standardJitter,
                maximumSpan: Duration = DeliveryBackoff.standardMaximumSpan) {
        precondition(!delays.isEmpty && delays.allSatisfy { $0 > .zero }, "backoff delays are positive and not empty")
        precondition(jitter >= 0 && jitter < 1, "jitter is a fraction in 0..<1")
        precondition(maximumSpan > .zero, "the maximum span is positive")
        self.delays = delays
        self.jitter = jitter
        self.maximumSpan = maximumSpan
    }

    /// The base delay (before jitter) after attempt `attempt` (1 is the first attempt).
    public func baseDelay(afterAttempt attempt: Int) -> Duration {
        precondition(attempt >= 1, "attempts count from 1")
        return delays[min(attempt - 1, delays.count - 1)]
    }

    /// The jittered delay after attempt `attempt`, for `unit`, a number in `0 ..< 1` (0 gives the
    /// shortest delay, `1 - jitter` times the base; 0.5 the base; near 1 the longest), in whole
    /// milliseconds.
    public func delay(afterAttempt attempt: Int, unit: Double) -> Duration {
        precondition(unit >= 0 && unit < 1, "a unit random number is in 0..<1")
        let factor = 1 + jitter * (2 * unit - 1)
        let milliseconds = (Double(Self.milliseconds(baseDelay(afterAttempt: attempt))) * factor).rounded()
        return .milliseconds(max(1, Int64(milliseconds)))
    }

    /// The jittered delay after attempt `attempt`, its factor drawn from `generator`.
    public func delay(afterAttempt attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        delay(afterAttempt: attempt, unit: Double.random(in: 0..<1, using: &generator))
    }

    /// When to make the next attempt, in epoch milliseconds, after `attempts` attempts have failed,
    /// the first made at `firstAttemptAt` and the last at `lastAttemptAt`; `nil` to give up (the
    /// last attempt was made ``maximumSpan`` or more after the first).
    ///
    /// The moment is `lastAttemptAt` plus the jittered delay after attempt `attempts`, but never
    /// later than `firstAttemptAt + maximumSpan`; it is always after `lastAttemptAt`.
    public func nextAttempt(firstAttemptAt: Int64, lastAttemptAt: Int64, attempts: Int,
                            using generator: inout some RandomNumberGenerator) -> Int64? {
        nextAttempt(firstAttemptAt: firstAttemptAt, lastAttemptAt: lastAttemptAt, attempts: attempts,
                    unit: Double.random(in: 0..<1, using: &generator))
    }

    /// ``nextAttempt(firstAttemptAt:lastAttemptAt:attempts:using:)`` with the jitter's unit random
    /// number given (`0 ..< 1`).
    public func nextAttempt(firstAttemptAt: Int64, lastAttemptAt: Int64, attempts: Int, unit: Double) -> Int64? {
        precondition(attempts >= 1, "at least one attempt was made")
        let deadline = firstAttemptAt + Self.milliseconds(maximumSpan)
        guard lastAttemptAt < deadline else { return nil }
        return min(lastAttemptAt + Self.milliseconds(delay(afterAttempt: attempts, unit: unit)), deadline)
    }

    /// Every attempt's moment (epoch milliseconds) when each fails at once, from `firstAttemptAt`
    /// until the schedule gives up: the whole schedule, for tests and documentation.
    public func schedule(firstAttemptAt: Int64, using generator: inout some RandomNumberGenerator) -> [Int64] {
        var moments = [firstAttemptAt]
        while let next = nextAttempt(firstAttemptAt: firstAttemptAt, lastAttemptAt: moments[moments.count - 1],
                                     attempts: moments.count, using: &generator) {
            moments.append(next)
        }
        return moments
    }

    /// `duration` in whole milliseconds (rounded down).
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
