import Testing
import WebhookDelivery

/// A seeded generator (SplitMix64): the same seed, the same numbers.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("DeliveryBackoff: 5 s, 30 s, 2 min … 12 h, ±20 % jitter, for three days, then give up")
struct DeliveryBackoffTests {
    static let hour: Int64 = 3_600_000
    static let first: Int64 = 1_800_000_000_000

    @Test("without jitter (unit 0.5) the attempts fall at the documented moments, the last at 73 h")
    func documentedSchedule() {
        let backoff = DeliveryBackoff()
        var moments = [Self.first]
        while let next = backoff.nextAttempt(firstAttemptAt: Self.first, lastAttemptAt: moments.last!, attempts: moments.count, unit: 0.5) {
            moments.append(next)
        }
        let seconds = moments.map { ($0 - Self.first) / 1000 }
        #expect(seconds == [0, 5, 35, 155, 755, 2555, 6155, 16955, 38555, 81755, 124955, 168155, 211355, 254555, 73 * 3600])
    }

    @Test("base delays: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h, then 12 h")
    func baseDelays() {
        let backoff = DeliveryBackoff()
        let expected: [Duration] = [.seconds(5), .seconds(30), .seconds(120), .seconds(600), .seconds(1800), .seconds(3600),
                                    .seconds(10800), .seconds(21600), .seconds(43200), .seconds(43200), .seconds(43200), .seconds(43200)]
        #expect((1...12).map { backoff.baseDelay(afterAttempt: $0) } == expected)
    }

    @Test("a full schedule spans at least 72 h and gives up afterwards", arguments: [1, 2, 3, 42, 1_000_003] as [UInt64])
    func fullSpan(seed: UInt64) throws {
        let backoff = DeliveryBackoff()
        #expect(backoff.maximumSpan >= .seconds(72 * 3600))
        var random = SeededGenerator(seed: seed)
        let moments = backoff.schedule(firstAttemptAt: Self.first, using: &random)
        let last = try #require(moments.last)
        #expect(last - Self.first >= 72 * Self.hour)
        #expect(last - Self.first == 73 * Self.hour)
        // The last gap is at most one jittered 12 h delay: the schedule did not stop early.
        #expect(last - moments[moments.count - 2] <= 12 * Self.hour * 12 / 10)
        #expect(moments.count >= 12 && moments.count <= 18, "\(moments.count) attempts")
        // After the last attempt, and any later one, the answer is: give up.
        #expect(backoff.nextAttempt(firstAttemptAt: Self.first, lastAttemptAt: last, attempts: moments.count, using: &random) == nil)
        #expect(backoff.nextAttempt(firstAttemptAt: Self.first, lastAttemptAt: last + 1, attempts: moments.count + 1, unit: 0.5) == nil)
        #expect(backoff.nextAttempt(firstAttemptAt: Self.first, lastAttemptAt: last - 1, attempts: moments.count, unit: 0.5) == last)
    }

    @Test("attempt moments strictly increase", arguments: [7, 8, 9, 1234] as [UInt64])
    func monotonic(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let moments = DeliveryBackoff().schedule(firstAttemptAt: Self.first, using: &random)
        #expect(zip(moments, moments.dropFirst()).allSatisfy { $0 < $1 }, "\(moments)")
    }

    @Test("each jittered delay stays within ±20 % of its base, and the jitter spreads over that range", arguments: Array(1...11))
    func jitterBounds(attempt: Int) {
        let backoff = DeliveryBackoff()
        let base = Double(Self.milliseconds(backoff.baseDelay(afterAttempt: attempt)))
        #expect(Self.milliseconds(backoff.delay(afterAttempt: attempt, unit: 0)) == Int64((base * 0.8).rounded()))
        #expect(Self.milliseconds(backoff.delay(afterAttempt: attempt, unit: 0.5)) == Int64(base))
        var random = SeededGenerator(seed: UInt64(attempt))
        var factors: [Double] = []
        for _ in 0..<2000 {
            factors.append(Double(Self.milliseconds(backoff.delay(afterAttempt: attempt, using: &random))) / base)
        }
        #expect(factors.allSatisfy { $0 >= 0.8 - 1e-9 && $0 <= 1.2 + 1e-9 }, "out of ±20 %: \(factors.filter { $0 < 0.8 || $0 > 1.2 })")
        #expect(factors.min()! < 0.82 && factors.max()! > 1.18, "jitter spread \(factors.min()!)…\(factors.max()!)")
    }

    @Test("the same seed gives the same schedule; another seed another one")
    func deterministic() {
        var a = SeededGenerator(seed: 99), b = SeededGenerator(seed: 99), c = SeededGenerator(seed: 100)
        let backoff = DeliveryBackoff()
        let one = backoff.schedule(firstAttemptAt: Self.first, using: &a)
        #expect(one == backoff.schedule(firstAttemptAt: Self.first, using: &b))
        #expect(one != backoff.schedule(firstAttemptAt: Self.first, using: &c))
    }

    @Test("a short maximum span (for tests): attempts every ~100 ms for one second, then give up")
    func shortSpan() throws {
        let backoff = DeliveryBackoff(delays: [.milliseconds(100)], jitter: 0.2, maximumSpan: .seconds(1))
        var random = SeededGenerator(seed: 5)
        let moments = backoff.schedule(firstAttemptAt: 0, using: &random)
        #expect(moments.first == 0)
        #expect(moments.last == 1000)
        #expect(moments.count >= 9 && moments.count <= 14, "\(moments)")
        for (earlier, later) in zip(moments, moments.dropFirst()).dropLast() {
            #expect(later - earlier >= 80 && later - earlier <= 120, "\(moments)")
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
