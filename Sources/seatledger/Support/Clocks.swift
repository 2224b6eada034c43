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

    /// `--as-of` (default: now) and `--known-at` (default: none) of `arguments`.
    init(_ arguments: Arguments) throws {
        let now = Clocks.now
        asOf = try arguments[Self.asOf] ?? now
        knownAt = try arguments[Self.knownAt]
    }

    /// A moment (``MomentText``'s forms, relative ones counted from ``now``), refused naming the option.
    static var moment: OptionParser<EpochMillis> {
        OptionParser { text in
            do {
                return try MomentText.parse(text, now: now)
            } catch let error as MomentTextError {
                throw OptionValueError(String(error.message(option: "").drop { $0 == " " }))
            }
        }
    }

    /// `--as-of T`: the moment asked about.
    static let asOf = Option<EpochMillis?>("as-of", value: "T", help: "what was true at T (Apple's signed time; default: now)",
                                           parse: moment)
    /// `--known-at T`: only events recorded by T.
    static let knownAt = Option<EpochMillis?>("known-at", value: "T", help: "only events the ledger had recorded by T (default: now)\n\(forms)",
                                              parse: moment)
    /// The two, with their usual help (the forms of T under the second).
    static let options: [any DeclaredOption] = [asOf, knownAt]

    /// The one help line every time option points to.
    static let forms = "T: " + MomentText.forms
}
