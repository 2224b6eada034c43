import Foundation
import LedgerStorage
import SeatLedger

/// `--trusted-root-sha256 HEX` (repeatable) and `$SEATLEDGER_TRUSTED_ROOTS` (comma-separated):
/// the root certificates this process trusts, pinned in its own configuration rather than read
/// from the ledger, so a root that exists only in the database (inserted around SeatLedger,
/// with a correctly hashed record-chain link) is refused by every command that verifies
/// signatures: ingest, serve, check, quarantine retry and verify.
enum PinnedRoots {
    /// `--trusted-root-sha256 HEX` (repeatable): the fingerprints as given; ``pinned(_:)`` checks them.
    static let option = Option<[String]>(repeating: "trusted-root-sha256", value: "HEX", help: """

        pin a trusted root by its SHA-256 fingerprint (repeatable; default
        $SEATLEDGER_TRUSTED_ROOTS, comma-separated): a ledger holding any other
        root is refused, naming it (fingerprint and subject)
        """)
    /// The environment variable read when the option is not given.
    static let environmentVariable = "SEATLEDGER_TRUSTED_ROOTS"

    /// The pinned fingerprints (lowercase hex), or `nil` when none are configured.
    static func pinned(_ arguments: Arguments) throws -> Set<String>? {
        var given = try arguments[option]
        var source = option.declaration.spelled
        if given.isEmpty, let text = ProcessInfo.processInfo.environment[environmentVariable],
           !text.trimmingCharacters(in: .whitespaces).isEmpty {
            given = text.split(separator: ",").map(String.init)
            source = "$\(environmentVariable)"
        }
        guard !given.isEmpty else { return nil }
        var pinned = Set<String>()
        for value in given {
            let hex = value.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: ":", with: "")
            guard hex.count == 64, hex.allSatisfy(\.isHexDigit) else {
                throw UsageError(message: "\(source): \(value.debugDescription) is not a SHA-256 fingerprint (64 hex digits; "
                                 + "`seatledger config show` prints each root's)")
            }
            pinned.insert(hex)
        }
        return pinned
    }

    /// Each root of `store` outside the pinned set, in words; empty when none are pinned or all are.
    static func findings(_ arguments: Arguments, store: any LedgerStore) throws -> [String] {
        try findings(arguments) { try TrustConfiguration(readingFrom: store) }
    }

    /// Each root of `ledger` outside the pinned set, in words; empty when none are pinned or all are.
    static func findings(_ arguments: Arguments, ledger: Ledger) throws -> [String] {
        try findings(arguments, trust: ledger.trustConfiguration)
    }

    private static func findings(_ arguments: Arguments, trust: () throws -> TrustConfiguration) throws -> [String] {
        guard let pinned = try pinned(arguments) else { return [] }
        return try trust().roots(outside: pinned).map {
            "the ledger trusts root \($0.described), which is not a pinned root (\(option.declaration.spelled) / $\(environmentVariable))"
        }
    }

    /// Throws naming every root of `store` outside the pinned set (`doing`: "ingest", "serve", …).
    static func require(_ arguments: Arguments, store: any LedgerStore, doing: String) throws {
        try refuse(try findings(arguments, store: store), doing: doing)
    }

    /// Throws naming every root of `ledger` outside the pinned set (`doing`: "ingest", "serve", …).
    static func require(_ arguments: Arguments, ledger: Ledger, doing: String) throws {
        try refuse(try findings(arguments, ledger: ledger), doing: doing)
    }

    private static func refuse(_ findings: [String], doing: String) throws {
        guard !findings.isEmpty else { return }
        throw InputError(message: "refusing to \(doing): \(findings.joined(separator: "; ")). A root that exists only in the "
                         + "ledger was added around the pinned configuration: remove it or restore the ledger; pin it only if you added it")
    }
}
