import AppStoreModels
import Foundation

/// Time options (`--as-of`, `--known-at`, `--from`/`--to`, `--since`/`--until`): one parser for all.
///
/// Accepted forms: ISO 8601 (`2026-11-02T10:00:00Z`, `2026-11-02`), epoch milliseconds
/// (`1761998400000`), `now`, and a duration relative to now: `7d`, `-1h`, `90m`, `30s` are that
/// long ago, `+2h` is ahead. A bare 10-digit number is refused: it is almost always epoch
/// seconds, which read as milliseconds would name a moment in January 1970.
struct Clocks {
    let asOf: EpochMillis
    let knownAt: EpochMillis?

    /// Now, or `$SEATLEDGER_NOW` (ISO 8601 or epoch ms) for reproducible reports and golden tests.
    static var now: EpochMillis {
        ProcessInfo.processInfo.environment["SEATLEDGER_NOW"].flatMap(Timestamp.parse) ?? Timestamp.millis(Date())
    }

    init(_ arguments: Arguments) throws {
        let now = Clocks.now
        asOf = try Clocks.parse(arguments.value("as-of"), option: "as-of") ?? now
        knownAt = try Clocks.parse(arguments.value("known-at"), option: "known-at")
    }

    /// `text` as a moment, relative forms counted from ``now``; `nil` when the option was not given.
    static func parse(_ text: String?, option: String) throws -> EpochMillis? {
        guard let text else { return nil }
        return try parse(text, option: option, now: now)
    }

    /// The moments a time option takes: ``Timestamp/printableRange`` (years 0001 to 9999).
    static let range = Timestamp.printableRange

    /// `text` as a moment, relative forms counted from `now`.
    static func parse(_ text: String, option: String, now: EpochMillis) throws -> EpochMillis {
        let moment = try parseUnchecked(text, option: option, now: now)
        guard range.contains(moment) else {
            throw UsageError(message: "--\(option) \(text) is outside the years 0001 to 9999 (epoch milliseconds \(range.lowerBound) to \(range.upperBound))")
        }
        return moment
    }

    private static func parseUnchecked(_ text: String, option: String, now: EpochMillis) throws -> EpochMillis {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "now" { return now }
        if let offset = relativeOffset(trimmed) { return now + offset }
        if trimmed.count == 10, trimmed.allSatisfy(\.isASCIIDigitCharacter), let seconds = Int64(trimmed) {
            throw UsageError(message: "--\(option) \(text) is ambiguous: as epoch seconds it is \(Timestamp.iso8601(seconds * 1000)), "
                             + "as milliseconds \(Timestamp.iso8601(seconds)); give milliseconds (\(trimmed)000) or ISO 8601")
        }
        if trimmed.count == 8, trimmed.allSatisfy(\.isASCIIDigitCharacter) {
            // ISO 8601's basic date (20261102), which as milliseconds would be a moment of 1970.
            throw UsageError(message: "--\(option) \(text) looks like a compact date (YYYYMMDD), which as epoch milliseconds would be "
                             + "\(Timestamp.iso8601(Int64(trimmed) ?? 0)); write it \(trimmed.prefix(4))-\(trimmed.dropFirst(4).prefix(2))-\(trimmed.suffix(2))")
        }
        guard let millis = Timestamp.parse(trimmed) else {
            throw UsageError(message: "--\(option) must be ISO 8601 (2026-11-02T10:00:00Z), epoch milliseconds, now, "
                             + "or a duration like 7d, -1h, +30m, got \(text)")
        }
        return millis
    }

    /// `7d` / `-7d` → minus seven days, `+2h` → plus two hours (units d, h, m, s); else `nil`.
    static func relativeOffset(_ text: String) -> Int64? {
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
        guard !body.isEmpty, body.allSatisfy(\.isASCIIDigitCharacter), let count = Int64(body),
              count <= Int64.max / scale / 2 else { return nil }
        return sign * count * scale
    }

    /// The one help line every time option points to.
    static let forms = "T: ISO 8601, epoch ms, now, or relative (7d and -1h ago, +2h ahead)"

    static let help = """
      --as-of T        what was true at T (Apple's signed time; default: now)
      --known-at T     only events the ledger had recorded by T (default: now)
                       \(forms)
    """
}

extension Character {
    /// `0`…`9` only (not other scripts' digits, which `Int64` would refuse anyway).
    var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
