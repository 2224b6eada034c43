import AppStoreModels
import Foundation

/// `--as-of` / `--known-at` parsing: ISO 8601 or epoch milliseconds; defaults to now.
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

    static func parse(_ text: String?, option: String) throws -> EpochMillis? {
        guard let text else { return nil }
        guard let millis = Timestamp.parse(text) else {
            throw UsageError(message: "--\(option) must be ISO 8601 (2026-11-02T10:00:00Z) or epoch milliseconds, got \(text)")
        }
        return millis
    }

    static let help = """
      --as-of T        what was true at T (Apple's signed time); ISO 8601 or epoch ms (default: now)
      --known-at T     only events the ledger had recorded by T (default: now)
    """
}
