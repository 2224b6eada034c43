import AppStoreModels
import Foundation
import JWSVerification

/// Fixed identity of the simulated app (what `seatledger init` is configured with for the demo).
public enum SimulatedApp {
    public static let bundleId = "com.example.reps"
    public static let environment = "Sandbox"
    public static let appAppleId: Int64 = 1234
    public static let bundleVersion = "1.0"
    public static let productId = "com.example.reps.team.monthly"
    public static let subscriptionGroupIdentifier = "21482001"
    public static let storefront = "USA"
    public static let storefrontId = "143441"
    public static let currency = "USD"
    /// Default scenario start: 2026-10-01T00:00:00.000Z.
    public static let defaultStart: EpochMillis = 1_790_812_800_000
    /// The sandbox placeholder group and member Apple returns for customers in no group.
    public static let placeholderGroupId = "900000000000000000"
    public static let placeholderMemberAppTransactionId = "700000000000000000"
    /// Product ids on the placeholder group's example roles (Apple's real values are not documented).
    public static let placeholderRoleProducts = ["com.example.placeholder.product1", "com.example.placeholder.product2"]
}

/// A scenario or command-line problem, with a message meant for the user.
public struct SimulatorError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// SplitMix64: small, fast, and fully deterministic across platforms (also used by tests and
/// benchmarks for reproducible random choices).
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator for `seed`, optionally split into independent `stream`s and `index`es.
    public init(seed: UInt64, stream: UInt64 = 0, index: UInt64 = 0) {
        state = seed &* 0x9E37_79B9_7F4A_7C15 ^ (stream &+ 0x632B_E59B_D9B4_E019) &* 0xD1B5_4A32_D192_ED03 ^ index &* 0xBF58_476D_1CE4_E5B9
        _ = next(); _ = next()
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// A version-4 UUID, lowercase like Apple's.
    mutating func uuid() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        let a = next(), b = next()
        for i in 0..<8 { bytes[i] = UInt8(truncatingIfNeeded: a >> (UInt64(i) * 8)) }
        for i in 0..<8 { bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (UInt64(i) * 8)) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Milliseconds in each duration unit. `p` (one billing period) is resolved by the engine.
enum DurationUnit: String, CaseIterable {
    case ms, s, m, h, d, p

    var millis: Int64 {
        switch self {
        case .ms: return 1
        case .s: return 1000
        case .m: return 60_000
        case .h: return 3_600_000
        case .d: return 86_400_000
        case .p: return 0
        }
    }
}

/// A signed span written like `30d`, `1h30m`, `-2d`, `1p` (periods) or `1p-1d`.
public struct SpanExpression: Sendable, Hashable, CustomStringConvertible {
    /// Fixed milliseconds (before any acceleration).
    public var millis: Int64
    /// Whole billing periods.
    public var periods: Int64

    public init(millis: Int64 = 0, periods: Int64 = 0) {
        self.millis = millis
        self.periods = periods
    }

    /// Parses `[+-]?<n><unit>` terms run together; units ms, s, m, h, d, p.
    public static func parse(_ text: String) throws(SimulatorError) -> SpanExpression {
        let chars = Array(text.filter { !$0.isWhitespace })
        guard !chars.isEmpty else { throw SimulatorError("empty duration") }
        var i = 0
        var result = SpanExpression()
        while i < chars.count {
            var sign: Int64 = 1
            if chars[i] == "+" || chars[i] == "-" {
                sign = chars[i] == "-" ? -1 : 1
                i += 1
            }
            var digits = ""
            while i < chars.count, chars[i].isASCII, chars[i].isNumber { digits.append(chars[i]); i += 1 }
            var unit = ""
            while i < chars.count, chars[i].isLetter { unit.append(chars[i]); i += 1 }
            guard let value = Int64(digits), let u = DurationUnit(rawValue: unit) else {
                throw SimulatorError("bad duration '\(text)': expected terms like 30d, 12h, 5m, 10s, 250ms or 1p (billing periods)")
            }
            if u == .p { result.periods += sign * value } else { result.millis += sign * value * u.millis }
        }
        return result
    }

    /// Canonical text, e.g. `1p-1d2h`.
    public var description: String {
        var out = ""
        if periods != 0 { out += "\(periods)p" }
        if millis != 0 {
            var rest = abs(millis)
            for u in [DurationUnit.d, .h, .m, .s, .ms] where rest >= u.millis {
                let sign = millis < 0 ? "-" : (out.isEmpty ? "" : "+")
                out += "\(sign)\(rest / u.millis)\(u.rawValue)"
                rest %= u.millis
            }
        }
        return out.isEmpty ? "0s" : out
    }
}

/// When a step happens: an anchor plus a span.
///
/// Text forms: `2d` (from the scenario start), `+1h` (after the previous step), `periodEnd`,
/// `periodEnd-3d`, `graceEnd`, `start+1p`, `prev+10m`.
public struct TimeExpression: Sendable, Hashable, CustomStringConvertible {
    public enum Anchor: String, Sendable, CaseIterable {
        /// The scenario start.
        case start
        /// The previous step.
        case prev
        /// The end of the purchaser's current billing period.
        case periodEnd
        /// The end of the purchaser's billing grace period.
        case graceEnd
    }

    public var anchor: Anchor
    public var offset: SpanExpression

    public init(anchor: Anchor, offset: SpanExpression = SpanExpression()) {
        self.anchor = anchor
        self.offset = offset
    }

    public static func parse(_ text: String) throws(SimulatorError) -> TimeExpression {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for anchor in Anchor.allCases where trimmed.hasPrefix(anchor.rawValue) {
            let rest = String(trimmed.dropFirst(anchor.rawValue.count))
            if rest.isEmpty { return TimeExpression(anchor: anchor) }
            guard rest.hasPrefix("+") || rest.hasPrefix("-") else { break }
            return TimeExpression(anchor: anchor, offset: try SpanExpression.parse(rest))
        }
        if trimmed.hasPrefix("+") {
            return TimeExpression(anchor: .prev, offset: try SpanExpression.parse(trimmed))
        }
        do {
            return TimeExpression(anchor: .start, offset: try SpanExpression.parse(trimmed))
        } catch {
            throw SimulatorError("bad time '\(text)': use e.g. 2d, +1h, periodEnd, periodEnd-3d, graceEnd, start+1p")
        }
    }

    public var description: String {
        let span = offset.description
        let isZero = offset.millis == 0 && offset.periods == 0
        switch anchor {
        case .start: return span
        case .prev: return isZero ? "+0s" : (span.hasPrefix("-") ? "prev" + span : "+" + span)
        case .periodEnd, .graceEnd:
            return isZero ? anchor.rawValue : anchor.rawValue + (span.hasPrefix("-") ? span : "+" + span)
        }
    }
}

/// Internals exposed for tests.
public enum SimulatorInternals {
    /// Lowercase hex SHA-256 (the id of an API-response event is this over its canonical line).
    public static func sha256Hex(_ data: Data) -> String { SHA256Digest.hex(data) }
}
