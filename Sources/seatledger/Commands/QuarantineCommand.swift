import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import Reports
import SeatLedger

/// `seatledger quarantine list|show|retry|dismiss`.
enum QuarantineCommand: Command {
    static let name = "quarantine"
    static let summary = "list, show, retry or dismiss inputs that were refused"
    static let state = Option<String?>("state", value: "S", help: "list only items in state S", parse: .oneOf(states))
    static let raw = Flag("raw", help: "show: print the raw bytes only (not with --json)")
    static let out = Option<String?>("out", value: "FILE", help: "show: write the raw bytes to FILE (not over a SQLite database or log)")
    static let apiResponses = IngestCommand.apiResponses.help("retry: also apply apiResponse envelopes (see above)")
    static let storeKit = Flag("storekit", help: "retry: also apply StoreKit inputs (see above)")
    static let reason = RetractCommand.reason.help("dismiss: why (required); recorded in the log")
    static let by = RetractCommand.by.help("dismiss: who decided (default: $USER)")
    static let options: [any DeclaredOption] = LedgerLocation.options + [
        state, raw, out, apiResponses, storeKit, reason, by,
        PinnedRoots.option.help("""

            retry: pin a trusted root by its SHA-256 fingerprint (repeatable;
            default $SEATLEDGER_TRUSTED_ROOTS, comma-separated): a ledger holding
            any other root is refused (exit 2), naming it
            """),
        Flag.json,
    ]
    static let actions = ["list", "show", "retry", "dismiss"]
    static let exitStatuses: [ExitStatus] = [.success, .error, ExitStatus(.quarantined, "retry: some items are still refused (they stay open)")]
    static let examples = ["seatledger quarantine list --db ledger.sqlite", "seatledger quarantine show 1 --raw --db ledger.sqlite",
                           "seatledger quarantine retry --db ledger.sqlite",
                           "seatledger quarantine dismiss 3 --reason \"test message from our staging producer\" --db ledger.sqlite"]
    static let help = """
    Usage: seatledger quarantine list [--state open|released|duplicate|dismissed] [--db PATH] [--json]
           seatledger quarantine show ID [--raw] [--out FILE] [--db PATH] [--json]
           seatledger quarantine retry [ID …] [--api-responses] [--storekit] [--trusted-root-sha256 HEX …] [--db PATH] [--json]
           seatledger quarantine dismiss ID --reason TEXT [--by NAME] [--db PATH] [--json]

    Every refused input is kept with its raw bytes, its source (file and line, spool name), an
    error code and a human reason. `show --raw` prints the raw bytes exactly (or writes them to
    --out FILE). `retry` re-verifies open items (all, or the given ids), e.g. after
    `seatledger config add-root`; released items are appended (origin quarantine-retry) and
    marked resolved. An item kept only as its first 64 KiB (line_too_long, message_too_large,
    store_refused) is not the input itself and is never released. `dismiss` records a decision
    instead: a `decision` event in the log (who, why, the item and the SHA-256 of its bytes;
    hash-chained) and the item becomes `dismissed`; its raw bytes stay. An `apiResponse` envelope
    is unsigned and the quarantine cannot prove which path it came by, so retry applies one only
    with --api-responses (you vouch that it is a response you received from Apple); without it,
    it stays refused as untrusted_api_response. A StoreKit input ({"storeKit": …}) is Apple-signed
    but its user id is the sender's word: retry applies one only with --storekit (you vouch that
    your app server sent it; name its ids), else it stays refused as storekit_not_accepted_here.

    \(TextTable.words("Error codes: " + RejectionCode.catalogue.map(\.code.rawValue).joined(separator: ", ")
        + " (each explained in Events/README.md).", maxWidth: 96, indent: 0))

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? {
        switch positionals.first {
        case "show": return 2
        case "retry": return nil
        case "dismiss": return 2
        default: return 1
        }
    }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard let action = arguments.positionals.first else { throw UsageError(message: "expected list, show, retry or dismiss") }
        switch action {
        case "list":
            let state = try arguments[Self.state]
            let store = try LedgerLocation(arguments).openStore(readOnly: true)
            let records = try store.quarantine(state: state)
            if arguments[Flag.json] {
                Terminal.json(.array(records.map { describe($0, includeRaw: false) }))
            } else if records.isEmpty {
                Terminal.out(state.map { "No \($0) quarantine items." } ?? "Quarantine is empty.")
            } else {
                let width = Terminal.width
                for record in records {
                    Terminal.out(TextTable.fields(["#\(record.id)", Timestamp.iso8601(record.recordedAt), record.state, record.errorCode.rawValue, record.source],
                                                  maxWidth: width))
                    Terminal.out(TextTable.words("    \(record.reason)  (\(record.raw.count) bytes kept)", maxWidth: width))
                }
            }
            return .success
        case "show":
            guard arguments.positionals.count == 2, let id = Int64(arguments.positionals[1]) else {
                throw UsageError(message: "show needs one numeric ID")
            }
            let store = try LedgerLocation(arguments).openStore(readOnly: true)
            guard let record = try store.quarantineRecord(id: id) else {
                throw InputError(message: "no quarantined item #\(id)")
            }
            if arguments[raw], arguments[Flag.json] {
                throw UsageError(message: "show: --raw prints the raw bytes and --json a JSON object: give one of them")
            }
            if let out = try arguments[Self.out] {
                try FileChecks.write(record.raw, to: out)
                Terminal.note("Wrote the \(record.raw.count) raw bytes of #\(record.id) to \(out)")
            }
            if arguments[raw] {
                // With --out the bytes went to the file (stdout stays empty).
                if !arguments.contains(out) { FileHandle.standardOutput.write(record.raw) }
            } else if arguments[Flag.json] {
                Terminal.json(describe(record, includeRaw: true))
            } else {
                Terminal.out("""
                Quarantined #\(record.id) (\(record.state))
                Recorded:  \(Timestamp.iso8601(record.recordedAt))
                Source:    \(record.source)
                Code:      \(record.errorCode)
                Reason:    \(record.reason)
                Resolved:  \(record.resolution ?? "-")
                Raw bytes (\(record.raw.count)):
                \(String(decoding: record.raw.prefix(4096), as: UTF8.self))\(record.raw.count > 4096 ? "\n… (use --raw or --out for all bytes)" : "")
                """)
            }
            return .success
        case "retry":
            let ids = try arguments.positionals.dropFirst().map { text in
                guard let id = Int64(text) else { throw UsageError(message: "quarantine id must be numeric, got \(text)") }
                return id
            }
            let ledger = try LedgerLocation(arguments).open()
            try PinnedRoots.require(arguments, ledger: ledger, doing: "retry the quarantine")
            // Named ids must be open items: a typo (or an item released already) is an error, not "0 released".
            for id in ids {
                guard let record = try ledger.quarantineRecord(id: id) else {
                    throw InputError(message: "no quarantine item #\(id) (see `seatledger quarantine list`)")
                }
                guard record.state == "open" else {
                    throw UsageError(message: "quarantine item #\(id) is \(record.state), not open: nothing to retry")
                }
            }
            let summary = try ledger.retryQuarantine(ids: ids.isEmpty ? nil : ids, acceptAPIResponses: arguments[apiResponses],
                                                     acceptStoreKit: arguments[storeKit])
            if arguments[Flag.json] {
                Terminal.json([
                    "released": .count(summary.released), "duplicates": .count(summary.duplicates),
                    "stillRejected": .count(summary.stillRejected),
                    "reasons": .object(Dictionary(uniqueKeysWithValues: summary.reasons.map { (String($0.key), JSONValue.string($0.value)) })),
                ])
            } else {
                Terminal.out("\(summary.released) released, \(summary.duplicates) already in the ledger, \(summary.stillRejected) still refused")
                for (id, reason) in summary.reasons.sorted(by: { $0.key < $1.key }) { Terminal.out("  #\(id): \(reason)") }
            }
            return summary.stillRejected > 0 ? .quarantined : .success
        case "dismiss":
            guard arguments.positionals.count == 2, let id = Int64(arguments.positionals[1]) else {
                throw UsageError(message: "quarantine dismiss needs one numeric ID")
            }
            guard let reason = try arguments[Self.reason], !reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw UsageError(message: "quarantine dismiss needs --reason TEXT (recorded in the log)")
            }
            let actor = try arguments[by] ?? ProcessInfo.processInfo.environment["USER"] ?? "uid \(getuid())"
            let ledger = try LedgerLocation(arguments).open()
            guard let record = try ledger.quarantineRecord(id: id) else {
                throw InputError(message: "no quarantine item #\(id) (see `seatledger quarantine list`)")
            }
            guard record.state == "open" else {
                throw UsageError(message: "quarantine item #\(id) is \(record.state), not open: nothing to dismiss")
            }
            let position = try ledger.dismissQuarantine(id: id, reason: reason, by: actor)
            if arguments[Flag.json] {
                Terminal.json(["dismissed": .int(id), "decisionPosition": .int(position)])
            } else {
                Terminal.out("#\(id) dismissed; the decision is event #\(position) (by \(actor))")
            }
            return .success
        default:
            throw UsageError(message: "unknown quarantine action '\(action)' (expected list, show, retry or dismiss)")
        }
    }

    /// The states a quarantined item can be in (`list --state`).
    static let states = ["open", "released", "duplicate", "dismissed"]

    static func describe(_ record: QuarantineRecord, includeRaw: Bool) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .int(record.id), "recordedAt": .timestamp(record.recordedAt), "source": .string(record.source),
            "errorCode": .string(record.errorCode.rawValue), "reason": .string(record.reason), "state": .string(record.state),
            "rawBytes": .count(record.raw.count), "resolvedAt": .timestamp(record.resolvedAt),
            "resolution": .optional(record.resolution),
        ]
        if includeRaw {
            if let text = String(data: record.raw, encoding: .utf8) { object["raw"] = .string(text) }
            object["rawBase64"] = .string(record.raw.base64EncodedString())
        }
        return .object(object)
    }
}
