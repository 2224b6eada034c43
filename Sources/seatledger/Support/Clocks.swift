import AppStoreModels
import Foundation
import SeatLedger

/// Time options (`--as-of`, `--known-at`, `--from`/`--to`, `--since`/`--until`): one parser for all.
///
/// The forms and refusals are ``MomentText``'s (in the `SeatLedger` library, which the service's
/// clock parameters read with too): ISO 8601, epoch milliseconds, `now`, `7d`, `-1h`, `+2h`; a
/// bare 10-digit number (epoch seconds) or 8-digit one (a compact date) is refused.
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

    /// `text` as a moment, relative forms counted from `now`: ``MomentText``'s rule (the one the
    /// service's clock parameters follow too), its refusal as a usage error naming the option.
    static func parse(_ text: String, option: String, now: EpochMillis) throws -> EpochMillis {
        do {
            return try MomentText.parse(text, now: now)
        } catch {
            throw UsageError(message: error.message(option: "--\(option)"))
        }
    }

    /// The one help line every time option points to.
    static let forms = "T: " + MomentText.forms

    static let help = """
      --as-of T        what was true at T (Apple's signed time; default: now)
      --known-at T     only events the ledger had recorded by T (default: now)
                       \(forms)
    """
}
