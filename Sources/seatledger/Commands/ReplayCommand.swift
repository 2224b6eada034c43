import AppStoreModels
import Foundation
import LedgerIntake
import Reports
import SeatLedger

/// `seatledger replay REF`.
enum ReplayCommand: Command {
    static let name = "replay"
    static let summary = "replay a group's history: every event in effective order and the change it caused"
    static let from = Option<EpochMillis?>("from", value: "T", help: "first effective time to show", parse: Clocks.moment)
    static let to = Option<EpochMillis?>("to", value: "T", help: "last effective time to show (default: now)", parse: Clocks.moment)
    static let knownAt = Clocks.knownAt.help("replay only what the ledger had recorded by T\n\(Clocks.forms)")
    static let options: [any DeclaredOption] = LedgerLocation.options + [from, to, knownAt, Flag.json]
    static let examples = ["seatledger replay 2000010000000001 --db ledger.sqlite",
                           "seatledger replay 2000010000000001 --db ledger.sqlite --from 2026-10-20 --to 2026-11-01"]
    static let help = """
    Usage: seatledger replay REF [--from T] [--to T] [--known-at T] [--db PATH] [--json]

    Every event that touches the group, in effective order (Apple's signed time): when it took effect,
    what arrived (notification type/subtype or API endpoint and status), when we recorded it — flagged
    `late` when recorded more than an hour after it occurred — the path it came by (`via webhook`,
    `via file`, `via stdin`, `via spool`, `via queue`, `via api-client`, `via backfill` for Get
    Notification History, `via recorded` for `seatledger record`; `via live` for events stored before
    the path was recorded), how many duplicate arrivals it had, and the state change it caused in plain
    words ("seats 10 → 6 at next renewal", "member app-user-42 (claim 7a1e…) lost access: unclaimed by
    the App Store"). Periods that end with no event appear as "time passed (no event)". --json gives
    structured entries with event ids and before/after.

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 1 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.count == 1 else { throw UsageError(message: "replay needs exactly one REF") }
        let reference = arguments.positionals[0]
        let from = try arguments[Self.from]
        let to = try arguments[Self.to]
        if let from, let to, from > to {
            throw UsageError(message: "--from (\(Timestamp.iso8601(from))) is after --to (\(Timestamp.iso8601(to)))")
        }
        let ledger = try LedgerLocation(arguments).open(readOnly: true)
        let entries = try ledger.replay(reference, from: from, to: to,
                                        knownAt: try arguments[knownAt], now: Clocks.now)
        if arguments[Flag.json] {
            Terminal.json(["reference": .string(reference), "entries": .array(entries.map(\.json))])
            return .success
        }
        Terminal.out("Replay of \(reference): \(entries.count) entries")
        let width = Terminal.width
        for entry in entries {
            var flags: [String] = []
            if entry.isLate, let recorded = entry.recordedAt { flags.append("LATE: recorded \(Timestamp.iso8601(recorded))") }
            // Provenance: the path the event came by (webhook, file, spool, queue, api-client, backfill, …).
            if let origin = entry.origin { flags.append("via \(SpoolDirectory.printable(origin))") }
            if entry.duplicateArrivals > 0 { flags.append("\(entry.duplicateArrivals) duplicate arrival(s)") }
            let id = entry.position.map { "#\($0) " } ?? ""
            Terminal.out(TextTable.fields([Timestamp.iso8601(entry.effectiveAt), "\(id)\(entry.what)",
                                           flags.isEmpty ? "" : "[\(flags.joined(separator: ", "))]"], maxWidth: width))
            if entry.changes.isEmpty { Terminal.out("    (no change)") }
            for change in entry.changes { Terminal.out(TextTable.words("    • \(change.text)", maxWidth: width, indent: 6)) }
        }
        return .success
    }
}

/// `seatledger diff REF`.
enum DiffCommand: Command {
    static let name = "diff"
    static let summary = "compare a group between two knowledge times, two moments, or against Apple"
    static let knownAt = Option<[EpochMillis]>(repeating: "known-at", value: "T", help: "a knowledge time (give twice to compare two)",
                                               parse: Clocks.moment)
    static let asOf = Option<[EpochMillis]>(repeating: "as-of", value: "T", help: "a moment (give twice to compare two)\n\(Clocks.forms)",
                                            parse: Clocks.moment)
    static let againstApple = Flag("against-apple", help: "compare with Apple's latest recorded view")
    static let options: [any DeclaredOption] = LedgerLocation.options + [knownAt, asOf, againstApple, Flag.json]
    static let exitStatuses: [ExitStatus] = [.success, ExitStatus(.findings, "the two states differ"), .error]
    static let examples = ["seatledger diff 2000010000000001 --db ledger.sqlite --as-of 2026-10-20 --as-of 2026-11-16",
                           "seatledger diff 2000010000000001 --db ledger.sqlite --against-apple"]
    static let help = """
    Usage: seatledger diff REF --known-at A --known-at B [--as-of T] [--db PATH] [--json]
           seatledger diff REF --as-of A --as-of B [--known-at K] [--db PATH] [--json]
           seatledger diff REF --against-apple [--as-of T] [--db PATH] [--json]

    --known-at A --known-at B: what did late events or a backfill change? The group as of T (default
    now) as the ledger knew it at A versus at B, with the events recorded in between.
    --as-of A --as-of B: how did the group change between two moments, with the events effective
    in between. --against-apple: our projection versus Apple's latest recorded Get Seat Info
    (total, available, claim ids) and Get Group Members (appTransactionIds), saying which side is
    older; with --as-of T, as of T (Apple's answers effective by then). Reports added/removed
    members, access changes, seat count and status changes.
    Exit status like diff(1): 0 no difference, 1 differences, 2 error.

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 1 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.count == 1 else { throw UsageError(message: "diff needs exactly one REF") }
        let reference = arguments.positionals[0]
        let knownAt = try arguments[Self.knownAt]
        let asOf = try arguments[Self.asOf]
        let ledger = try LedgerLocation(arguments).open(readOnly: true)
        let now = Clocks.now
        if arguments[againstApple] {
            // Apple's view is compared as of one moment, at whatever the ledger knows now.
            guard knownAt.isEmpty else { throw UsageError(message: "--against-apple takes no --known-at") }
            guard asOf.count <= 1 else { throw UsageError(message: "give --as-of at most once with --against-apple") }
            let comparison = try ledger.compareWithApple(reference, asOf: asOf.first ?? now)
            if arguments[Flag.json] { Terminal.json(comparison.json) } else { Terminal.out(comparison.text) }
            return comparison.differences.isEmpty ? .success : .findings
        }
        let diff: GroupDiff
        if knownAt.count == 2 {
            guard asOf.count <= 1 else { throw UsageError(message: "give --as-of at most once with two --known-at") }
            diff = try ledger.diff(reference, knownAt: knownAt[0], knownAt[1], asOf: asOf.first ?? now)
        } else if asOf.count == 2 {
            guard knownAt.count <= 1 else { throw UsageError(message: "give --known-at at most once with two --as-of") }
            diff = try ledger.diff(reference, asOf: asOf[0], asOf[1], knownAt: knownAt.first)
        } else {
            throw UsageError(message: "give --known-at twice, --as-of twice, or --against-apple")
        }
        if arguments[Flag.json] { Terminal.json(diff.json) } else { Terminal.out(diff.text) }
        return diff.hasDifferences ? .findings : .success
    }
}

/// `seatledger audit member|group`.
enum AuditCommand: Command {
    static let name = "audit"
    static let summary = "support-ready reports: why does a member (not) have access; a group's full story"
    static let format = Option<ReportFormat?>(
        "format", value: "F", help: "text (default), markdown, html or json", completion: .words(["text", "markdown", "html", "json"]),
        parse: OptionParser { text in
            guard let format = ReportFormat(rawValue: text) else { throw OptionValueError("must be text, markdown, html or json, got \(text)") }
            return format
        })
    static let out = Option<String?>("out", value: "FILE",
                                     help: "write the report to FILE instead of stdout (not over a SQLite database or log)")
    static let asOf = Clocks.asOf.help("report the state at T (default: now)\n\(Clocks.forms)")
    static let options: [any DeclaredOption] = LedgerLocation.options + [format, Flag.json.help("the same as --format json"), out, asOf]
    static let actions = ["group", "member"]
    static let examples = ["seatledger audit group 2000010000000001 --db ledger.sqlite --format markdown",
                           "seatledger audit member m1 --db ledger.sqlite --format html --out report.html"]
    static let help = """
    Usage: seatledger audit member ID [--format text|markdown|html|json | --json] [--out FILE] [--as-of T] [--db PATH]
           seatledger audit group REF [--format text|markdown|html|json | --json] [--out FILE] [--as-of T] [--db PATH]

    `audit member`: does this person have access now, since when, from which evidence; if not,
    the reason and the chain of events that led there, in every group they belong or belonged to.
    `audit group`: summary (product, invitation model, status, seats), members table, timeline,
    anomalies (suspected missed notifications, claims without an active subscription, claims
    beyond capacity, UNCLAIM_SEATS for claims never seen, late access-changing events, unusual
    signing chains, drift from Apple, seat refunds without a member change) and recommended
    actions. `markdown` pastes into a ticket; `html` is one self-contained file with an inline
    SVG chart of seats over time; `text` uses colour only on a terminal. Personal data is limited
    to identifiers already in the log plus memberRef.

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 2 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.count == 2, ["member", "group"].contains(arguments.positionals[0]) else {
            throw UsageError(message: "expected `audit member ID` or `audit group REF`")
        }
        let given = try arguments[Self.format]
        if arguments[Flag.json], let other = given, other != .json {
            throw UsageError(message: "--json means --format json; it conflicts with --format \(other.rawValue)")
        }
        let format = given ?? (arguments[Flag.json] ? .json : .text)
        let ledger = try LedgerLocation(arguments).open(readOnly: true)
        let now = Clocks.now
        let asOf = try arguments[Self.asOf] ?? now
        let color = format == .text && !arguments.contains(out) && Terminal.colorOnStdout
        // A text report written to a file is not for this terminal: whole lines.
        let width = !arguments.contains(out) ? Terminal.width : nil
        let report: String
        if arguments.positionals[0] == "member" {
            report = try ledger.auditMember(arguments.positionals[1], asOf: asOf, now: now).render(format, color: color, width: width)
        } else {
            report = try ledger.auditGroup(arguments.positionals[1], asOf: asOf, now: now).render(format, color: color, width: width)
        }
        if let out = try arguments[Self.out] {
            try FileChecks.write(Data((report + "\n").utf8), to: out)
            Terminal.note("Wrote \(format.rawValue) report to \(out)")
        } else {
            Terminal.out(report)
        }
        return .success
    }
}
