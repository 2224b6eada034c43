import AppStoreModels
import Foundation

/// The one rule for a moment a person writes: the CLI's time options (`--as-of`, `--known-at`,
/// `--from`/`--to`, `--since`/`--until`) and the service's clock parameters (`asOf`, `knownAt`,
/// `from`, `to`, on the read API and the support desk) all read their text here.
///
/// Accepted: ISO 8601 (`2026-11-02T10:00:00Z`, `2026-11-02`), epoch milliseconds
/// (`1761998400000`), `now`, and a duration relative to now (`7d`, `-1h`, `90m`, `30s` are that
/// long ago, `+2h` is ahead), in the years 0001 to 9999. Refused, naming the ISO form probably
/// meant: a bare 10-digit number (almost always epoch seconds, which as milliseconds would be a
/// moment of January 1970) and an 8-digit one (a compact date, `20261102`, which would be too).
///
/// ```swift
/// try MomentText.parse("2026-11-02", now: now)   // 1793577600000
/// try MomentText.parse("1730000000", now: now)   // throws .epochSeconds: meant 2024-10-27T03:33:20.000Z
/// ```
public enum MomentText {
    /// The moments a person may ask about: ``Timestamp/printableRange`` (years 0001 to 9999), so
    /// that the moment printed back (or carried in a link) is the one asked about.
    public static let range = Timestamp.printableRange

    /// The accepted forms, in a few words (for help texts).
    public static let forms = "ISO 8601, epoch ms, now, or relative (7d and -1h ago, +2h ahead)"

    /// `text` as a moment; relative forms (`now`, `7d`, `+2h`) counted from `now`.
    ///
    /// - Throws: ``MomentTextError`` naming why, and the ISO form probably meant where there is one.
    public static func parse(_ text: String, now: EpochMillis) throws(MomentTextError) -> EpochMillis {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let moment: EpochMillis
        if trimmed == "now" {
            moment = now
        } else if let offset = relativeOffset(trimmed) {
            moment = now + offset
        } else if trimmed.utf8.count == 10, trimmed.utf8.allSatisfy(isASCIIDigit) {
            throw MomentTextError(text: text, reason: .epochSeconds(trimmed))
        } else if trimmed.utf8.count == 8, trimmed.utf8.allSatisfy(isASCIIDigit) {
            // ISO 8601's basic date (20261102), which as milliseconds would be a moment of 1970.
            throw MomentTextError(text: text, reason: .compactDate(trimmed))
        } else if let millis = Timestamp.parse(trimmed) {
            moment = millis
        } else {
            throw MomentTextError(text: text, reason: .unreadable)
        }
        guard range.contains(moment) else { throw MomentTextError(text: text, reason: .outOfRange) }
        return moment
    }

    /// `7d` / `-7d` → minus seven days, `+2h` → plus two hours (units d, h, m, s); else `nil`.
    public static func relativeOffset(_ text: String) -> Int64? {
        let scale: Int64
        switch text.last {
        case "d": scale = 86_400_000
        case "h": scale = 3_600_000
        case "m": scale = 60_000
        case "s": scale = 1000
        default: return nil
        }
        var body = Substring(text.dropLast())
        var sign: Int64 = -1
        if body.first == "+" { sign = 1; body = body.dropFirst() } else if body.first == "-" { body = body.dropFirst() }
        guard !body.isEmpty, body.utf8.allSatisfy(isASCIIDigit), let count = Int64(body),
              count <= Int64.max / scale / 2 else { return nil }
        return sign * count * scale
    }

    private static func isASCIIDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}

/// A moment's text that ``MomentText/parse(_:now:)`` refuses: the text, why, and the ISO 8601
/// form the writer probably meant (``meant``), rendered for an option or a query parameter.
public struct MomentTextError: Error, Sendable, Equatable {
    /// Why a text is refused.
    public enum Reason: Sendable, Equatable {
        /// A bare 10-digit number (these digits): epoch seconds, as milliseconds January 1970.
        case epochSeconds(String)
        /// An 8-digit number: this compact date (YYYYMMDD, digits only).
        case compactDate(String)
        /// A moment before year 0001 or after year 9999.
        case outOfRange
        /// None of the accepted forms.
        case unreadable
    }

    /// The text as given.
    public let text: String
    /// Why it is refused.
    public let reason: Reason

    /// Creates an error.
    public init(text: String, reason: Reason) {
        self.text = text
        self.reason = reason
    }

    /// The ISO 8601 form the writer probably meant: the epoch seconds' moment, or the compact
    /// date written `YYYY-MM-DD` (when it is a day the calendar has); `nil` otherwise.
    public var meant: String? {
        switch reason {
        case .epochSeconds(let digits): return Timestamp.iso8601((Int64(digits) ?? 0) * 1000)
        case .compactDate(let digits):
            let iso = Self.isoDate(digits)
            return Timestamp.parse(iso) == nil ? nil : iso
        case .outOfRange, .unreadable: return nil
        }
    }

    /// The message for a CLI option, e.g. `option` `--as-of`: "--as-of 1730000000 is ambiguous: …".
    public func message(option: String) -> String {
        if reason == .unreadable {
            return "\(option) must be ISO 8601 (2026-11-02T10:00:00Z), epoch milliseconds, now, "
                + "or a duration like 7d, -1h, +30m, got \(text)"
        }
        return message(subject: "\(option) \(text)")
    }

    /// The message for a query parameter, e.g. `name` `asOf`: "query parameter asOf=1730000000 is ambiguous: …".
    public func message(queryParameter name: String) -> String {
        let subject = "query parameter \(name)=\(text)"
        switch reason {
        case .unreadable:
            return "\(subject) is not ISO 8601 (2026-11-02T10:00:00Z), epoch milliseconds, now, or a duration like 7d, -1h, +30m"
        case .outOfRange:
            return "\(subject) is not in the years 0001 to 9999 (epoch milliseconds \(MomentText.range.lowerBound) to \(MomentText.range.upperBound))"
        case .epochSeconds, .compactDate:
            return message(subject: subject)
        }
    }

    private func message(subject: String) -> String {
        switch reason {
        case .epochSeconds(let digits):
            let seconds = Int64(digits) ?? 0
            return "\(subject) is ambiguous: as epoch seconds it is \(Timestamp.iso8601(seconds * 1000)), "
                + "as milliseconds \(Timestamp.iso8601(seconds)); give milliseconds (\(digits)000) or ISO 8601"
        case .compactDate(let digits):
            return "\(subject) looks like a compact date (YYYYMMDD), which as epoch milliseconds would be "
                + "\(Timestamp.iso8601(Int64(digits) ?? 0)); write it \(Self.isoDate(digits))"
        case .outOfRange:
            return "\(subject) is outside the years 0001 to 9999 (epoch milliseconds \(MomentText.range.lowerBound) to \(MomentText.range.upperBound))"
        case .unreadable:
            return "\(subject) is not ISO 8601 (2026-11-02T10:00:00Z), epoch milliseconds, now, or a duration like 7d, -1h, +30m"
        }
    }

    /// `20261102` → `2026-11-02`.
    private static func isoDate(_ digits: String) -> String {
        "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.suffix(2))"
    }
}
