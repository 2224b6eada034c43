import AppStoreModels
import Foundation
import JWSVerification
import LedgerStorage
import SeatLedger

/// `seatledger config [show|add-root FILE]`: the trust configuration recorded in the ledger.
enum ConfigCommand: Command {
    static let name = "config"
    static let summary = "show the ledger's trust configuration, or add a root certificate"
    static let options: [any DeclaredOption] = LedgerLocation.options + [
        AnchorOption.option.help("""
            (add-root) the head anchor of `verify`, `ingest` and `serve --anchor`:
            checked first (a ledger that does not continue it is refused), then
            rewritten with the new root, so the commands that check it accept the
            root. A root added without it makes them refuse the ledger
            """),
        Flag.json,
    ]
    static let actions = ["show", "add-root"]
    static let examples = ["seatledger config show --db ledger.sqlite",
                           "seatledger config add-root Tools/pki/root.pem --db ledger.sqlite && seatledger quarantine retry --db ledger.sqlite"]
    static let help = """
    Usage: seatledger config [show] [--db PATH] [--json]
           seatledger config add-root FILE [--anchor FILE] [--db PATH] [--json]

    `show` (the default) prints the bundle id, environment, app Apple id and each root
    certificate with its SHA-256 fingerprint. `add-root` adds a root certificate (DER or PEM);
    run `seatledger quarantine retry` afterwards to re-check inputs it would now accept.

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? {
        switch positionals.first {
        case "add-root": return 2
        case "show": return 1
        // `config ledger.sqlite` is a forgotten --db, not an unknown action.
        case let first? where Arguments.looksLikeLedger(first): return 0
        default: return 1
        }
    }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let action = arguments.positionals.first ?? "show"
        switch action {
        case "show":
            guard !arguments.contains(AnchorOption.option) else { throw UsageError(message: "--anchor applies to `config add-root` only") }
            let ledger = try LedgerLocation(arguments).open(readOnly: true)
            if arguments[Flag.json] { Terminal.json(try describe(ledger)) } else { Terminal.out(try text(ledger)) }
            return .success
        case "add-root":
            guard arguments.positionals.count == 2 else { throw UsageError(message: "add-root needs exactly one FILE") }
            let path = arguments.positionals[1]
            let anchors = try InitCommand.loadRoot(path)
            let store = try LedgerLocation(arguments).openStore()
            let anchorFile = try AnchorOption.checkedBeforeTrustChange(arguments, store: store)
            let now = Timestamp.millis(Date())
            let added = try store.addRoots(anchors.map {
                StoredTrustRoot(fingerprint: $0.sha256Fingerprint, der: [UInt8]($0.der), subject: $0.subject, addedAt: now)
            })
            if let anchorFile { try AnchorOption.record(anchorFile, store: store) }
            if arguments[Flag.json] {
                Terminal.json(["added": .count(added), "fingerprints": .array(anchors.map { .string($0.sha256Fingerprint) })])
            } else {
                Terminal.out("Added \(added) root certificate(s) (\(anchors.count - added) already present).")
            }
            return .success
        default:
            throw UsageError(message: "unknown config action '\(action)' (expected show or add-root)")
        }
    }

    static func describe(_ ledger: Ledger) throws -> JSONValue {
        let roots = try ledger.trustRoots()
        return [
            "path": .string(ledger.location),
            "bundleId": .string(ledger.configuration.bundleId),
            "environment": .string(ledger.configuration.environment.rawValue),
            "appAppleId": .optional(ledger.configuration.appAppleId),
            "rootCertificates": .array(roots.map {
                ["subject": .string($0.subject), "sha256": .string($0.fingerprint), "addedAt": .timestamp($0.addedAt)]
            }),
        ]
    }

    static func text(_ ledger: Ledger) throws -> String {
        var lines = [
            "Bundle id:    \(ledger.configuration.bundleId)",
            "Environment:  \(ledger.configuration.environment.rawValue)",
            "App Apple id: \(ledger.configuration.appAppleId.map(String.init) ?? "(not set)")",
            "Root certificates:",
        ]
        for root in try ledger.trustRoots() {
            lines.append("  \(root.subject)")
            lines.append("    sha256 \(root.fingerprint)")
        }
        return lines.joined(separator: "\n")
    }
}
