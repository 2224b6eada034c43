import AppStoreModels

/// Tick marks for a time axis: round steps (minutes … years) chosen so a span shows 3 to 8 labels.
public enum TimeAxis {
    /// One tick: where, and its label.
    public struct Tick: Sendable, Hashable {
        /// The tick's moment: a round multiple of the step when one fits, else evenly spaced between the ends.
        public var at: EpochMillis
        /// "2026-10-06" for steps of a day or more, "10-06 06:00" for shorter steps, "06:00:30.250" below a minute.
        public var label: String
    }

    static let minute: Double = 60_000, hour: Double = 3_600_000, day: Double = 86_400_000
    /// Round steps, each at most 2.5 times the one before (so some step gives 3 to 8 ticks).
    static let steps: [Double] = [
        1_000, 2_000, 5_000, 10_000, 30_000,
        minute, 2 * minute, 5 * minute, 10 * minute, 15 * minute, 30 * minute,
        hour, 2 * hour, 3 * hour, 6 * hour, 12 * hour,
        day, 2 * day, 4 * day, 7 * day, 14 * day, 30 * day, 60 * day, 120 * day, 240 * day, 365 * day, 730 * day, 1_826 * day,
        3_652 * day, 7_305 * day, 18_262 * day, 36_525 * day,
    ]

    /// The ticks inside `[start, end]`: the smallest round step giving at most `maxTicks`, aligned
    /// to multiples of the step from the epoch (midnight UTC for days). Spans beyond the table
    /// (Apple's numbers can be any Int64) get `maxTicks` evenly spaced ticks.
    public static func ticks(from start: EpochMillis, to end: EpochMillis, maxTicks: Int = 8) -> [Tick] {
        // In Double: the difference of two Int64 times can overflow Int64.
        let lo = Double(min(start, end)), hi = Double(max(start, end))
        let span = hi - lo
        guard span > 0 else { return [Tick(at: start, label: label(start, step: day))] }
        let limit = Double(max(maxTicks, 3))
        var positions: [Double] = []
        if let step = steps.first(where: { (span / $0).rounded(.down) + 1 <= limit }), span / step >= 2 {
            var t = (lo / step).rounded(.up) * step
            while t <= hi, positions.count < Int(limit) + 1 {
                positions.append(t)
                t += step
            }
            if positions.count < 3 { positions = even(lo, hi, count: 4) }
            return positions.map { Tick(at: clamp($0), label: label(clamp($0), step: step)) }
        }
        positions = even(lo, hi, count: Int(limit) - 2)
        let step = span / Double(max(positions.count - 1, 1))
        return positions.map { Tick(at: clamp($0), label: label(clamp($0), step: step)) }
    }

    private static func even(_ lo: Double, _ hi: Double, count: Int) -> [Double] {
        (0..<count).map { lo + (hi - lo) * Double($0) / Double(count - 1) }
    }

    private static func clamp(_ value: Double) -> EpochMillis {
        if value >= 9.2e18 { return .max }
        if value <= -9.2e18 { return .min }
        return EpochMillis(value)
    }

    /// The part of the ISO 8601 time that the step makes informative.
    static func label(_ t: EpochMillis, step: Double) -> String {
        let iso = Timestamp.iso8601(t)
        // "2026-10-06T06:00:30.250Z" is 24 characters; years beyond 9999 or before 0 are written in full.
        guard iso.count == 24 else { return iso }
        let characters = Array(iso)
        if step >= day { return String(characters[0..<10]) }
        if step >= minute { return String(characters[5..<10]) + " " + String(characters[11..<16]) }
        return String(characters[11..<23])
    }
}
