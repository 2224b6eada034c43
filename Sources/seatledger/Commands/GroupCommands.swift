import AppStoreModels
import Foundation
import Projections
import Reports
import SeatLedger

/// `seatledger groups`: every group with key, product, seats and members with access.
enum GroupsCommand: Command {
    static let name = "groups"
    static let summary = "list every group: key, product, status, seats, members with access"
    static let options: [any DeclaredOption] = LedgerLocation.options + Clocks.options + [Flag.json]
    static let examples = ["seatledger groups --db ledger.sqlite", "seatledger groups --db ledger.sqlite --as-of 2026-11-01T00:00:00Z --json"]
    static let help = """
    Usage: seatledger groups [--as-of T] [--known-at T] [--db PATH] [--json]

    One line per group: group key (the purchaser's originalTransactionId, else a groupId, else
    unlinked:<originalTransactionId> for an assigned seat holder nothing links), product, status, seats
    (total / claimed+assigned / available) and how many members have access. --json prints an array of
    `group show --json` objects.

    Options:
    \(OptionHelp.lines(options))
    """

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let clocks = try Clocks(arguments)
        let ledger = try LedgerLocation(arguments).open(readOnly: true)
        ledger.warnIfProjectionsOutdated(command: name)
        if arguments[Flag.json] {
            // Printed a group at a time: the same bytes as the whole array's pretty form, without
            // holding every group in memory (from the group's stored snapshot where it holds).
            var printed = 0
            try ledger.forEachGroupJSON(asOf: clocks.asOf, knownAt: clocks.knownAt, levels: 1) { text in
                Terminal.out((printed == 0 ? "[\n  " : ",\n  ") + text, terminator: "")
                printed += 1
            }
            Terminal.out(printed == 0 ? "[]" : "\n]")
            return .success
        }
        let groups = try ledger.groups(asOf: clocks.asOf, knownAt: clocks.knownAt)
        if groups.isEmpty { Terminal.out("No groups."); return .success }
        Terminal.out(GroupText.table(groups, width: Terminal.width))
        return .success
    }
}

/// `seatledger group show REF`.
enum GroupCommand: Command {
    static let name = "group"
    static let summary = "show one group's state (seats, members, access, drift from Apple)"
    static let options: [any DeclaredOption] = LedgerLocation.options + Clocks.options + [Flag.json]
    static let actions = ["show"]
    static let examples = ["seatledger group show 2000010000000001 --db ledger.sqlite",
                           "seatledger group show 2000010000000001 --db ledger.sqlite --as-of 2026-10-25 --known-at 7d"]
    static let help = """
    Usage: seatledger group show REF [--as-of T] [--known-at T] [--db PATH] [--json]

    REF is any identifier that resolves to a group: the purchaser's originalTransactionId, a
    groupId, or a member's appTransactionId, originalTransactionId, transaction id or seatClaimId.
    Prints status, seats (total, renewal size, refunded, claimed, assigned, available, over
    capacity now and at renewal), every member with access since/until and the revocation reason
    and event, Apple's latest Get Seat Info and any drift. The --json contract is documented in
    Events/projections.md.

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 2 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let reference = try arguments.showTarget(command: "group", noun: "REF")
        let clocks = try Clocks(arguments)
        let ledger = try LedgerLocation(arguments).open(readOnly: true)
        ledger.warnIfProjectionsOutdated(command: name)
        let state = try ledger.groupState(reference, asOf: clocks.asOf, knownAt: clocks.knownAt)
        if arguments[Flag.json] { Terminal.json(state.json) } else { Terminal.out(GroupText.detail(state, width: Terminal.width)) }
        return .success
    }
}

/// `seatledger member show ID`.
enum MemberCommand: Command {
    static let name = "member"
    static let summary = "show one person's access across groups"
    static let options: [any DeclaredOption] = LedgerLocation.options + Clocks.options
        + [Flag.json.help("machine-readable output on stdout   [{\"groupKey\": …, \"member\": {…member object of group show…}}]")]
    static let actions = ["show"]
    static let exitStatuses: [ExitStatus] = [.success, ExitStatus(.failure, "error, or the identifier names no member at that moment")]
    static let examples = ["seatledger member show m1 --db ledger.sqlite"]
    static let help = """
    Usage: seatledger member show ID [--as-of T] [--known-at T] [--db PATH] [--json]

    ID is any member identifier: appTransactionId, originalTransactionId, seatClaimId or a
    memberRef recorded with a claim. Prints the verdict first: in how many groups the person has
    access, then one block per group, the groups that give access first and then the rest, the
    most recent loss first. Each block says in one sentence whether they have access and until
    when, or when and why they lost it (and when the ledger learned of it), with a next step where
    there is one; then the member's line (role, identifiers, dates, the reason code and its
    event). --json keeps its contract (reason codes and event ids, groups by key).

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 2 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let identifier = try arguments.showTarget(command: "member", noun: "ID")
        let clocks = try Clocks(arguments)
        let ledger = try LedgerLocation(arguments).open(readOnly: true)
        ledger.warnIfProjectionsOutdated(command: name)
        if arguments[Flag.json] {
            let entries = try ledger.memberAccessJSON(identifier, asOf: clocks.asOf, knownAt: clocks.knownAt)
            // None: the documented JSON error on stdout (`not_found`, exit 2), not `[]` and a line on stderr.
            guard entries.arrayValue?.isEmpty == false else { throw NoMemberAtMoment(identifier: identifier, clocks: clocks) }
            Terminal.json(entries)
            return .success
        }
        let audit = try ledger.auditMember(identifier, asOf: clocks.asOf, knownAt: clocks.knownAt, now: Clocks.now)
        guard !audit.groups.isEmpty else { return noMember(identifier, clocks) }
        Terminal.out(GroupText.memberVerdicts(audit, width: Terminal.width))
        return .success
    }

    /// The identifier is in the ledger, but names no member at that moment (e.g. before any of its evidence).
    private static func noMember(_ identifier: String, _ clocks: Clocks) -> Terminal.ExitCode {
        Terminal.err("seatledger member show: \(NoMemberAtMoment(identifier: identifier, clocks: clocks))")
        return .failure
    }
}

/// `member show`'s identifier names no member of any group at the clocks asked about (a group
/// id, or a member before any of its evidence): under `--json` the `not_found` error.
struct NoMemberAtMoment: Error, CustomStringConvertible {
    let identifier: String
    let clocks: Clocks
    var description: String {
        "\(identifier) names no member of any group as of \(Timestamp.iso8601(clocks.asOf))"
            + (clocks.knownAt.map { ", known at \(Timestamp.iso8601($0))" } ?? "")
    }
}

/// `seatledger rebuild`.
enum RebuildCommand: Command {
    static let name = "rebuild"
    static let summary = "recompute every projection from the event log"
    static let allSnapshots = Flag("all-snapshots", help: "fold every group snapshot again (after `verify` found one that differs)")
    static let options: [any DeclaredOption] = LedgerLocation.options + [allSnapshots, Flag.progress, Flag.json]
    static let examples = ["seatledger rebuild --db ledger.sqlite", "seatledger rebuild --db ledger.sqlite --all-snapshots"]
    static let help = """
    Usage: seatledger rebuild [--db PATH] [--all-snapshots] [--json] [--progress]

    Derives the facts of events that lack them, resolves every group from the facts again
    (streaming: memory grows with the number of identifiers, not events) and, in one
    transaction, rewrites the groups whose stored index rows differ from that result: none on an
    intact ledger. An empty index, or one that differs by half, is emptied and written whole.
    Then it folds the group snapshots (each group's state at a moment, which `groups --json`
    prints while it holds) of the rewritten groups and of those missing or no longer holding.
    Events are never modified. --json: {"events", "groups", "groupsRewritten", "groupsRemoved"
    (null when written whole), "indexWrittenWhole", "snapshotsWritten", "seconds", "steps"}, where
    "steps" lists each step that ran, in order, as {"step", "seconds"}: "deriving facts",
    "resolving identities", "comparing the group index", "writing the group index", "folding
    group snapshots", "committing".

    Options:
    \(OptionHelp.lines(options))
    """

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let ledger = try LedgerLocation(arguments).open()
        let progress = ProgressReporter(label: "rebuild", arguments: arguments)
        let started = Date()
        let report = try ledger.rebuild(allSnapshots: arguments[allSnapshots], progress: { message in progress.phase(message) }, counted: { count in
            progress.report(step: count.step, done: Int64(count.done), total: Int64(count.total), unit: count.unit)
        })
        progress.finish()
        let events = try ledger.eventCount()
        let seconds = Date().timeIntervalSince(started)
        if arguments[Flag.json] {
            Terminal.json(["groups": .count(report.groups), "events": .int(events), "groupsRewritten": .count(report.groupsRewritten),
                           "groupsRemoved": report.groupsRemoved.map { .count($0) } ?? .null,
                           "indexWrittenWhole": .bool(report.indexWrittenWhole), "snapshotsWritten": .count(report.snapshotsWritten),
                           "seconds": .double((seconds * 1000).rounded() / 1000),
                           "steps": .array(report.steps.map { step in
                               ["step": .string(step.step), "seconds": .double((step.seconds * 1000).rounded() / 1000)]
                           })])
        } else {
            let written = report.indexWrittenWhole ? "index written whole"
                : report.groupsRewritten == 0 && report.groupsRemoved == 0 ? "index already matched the log"
                : "\(report.groupsRewritten) groups rewritten, \(report.groupsRemoved ?? 0) removed"
            Terminal.out("Rebuilt \(report.groups) groups from \(events) events in \(String(format: "%.2f", seconds)) s (\(written); \(report.snapshotsWritten) group snapshot\(report.snapshotsWritten == 1 ? "" : "s") folded).")
        }
        return .success
    }
}
