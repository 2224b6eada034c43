import AppStoreModels
import Foundation
import LedgerStorage
import Projections
import Reports
import SeatLedger

/// `seatledger access-changes`: the ledger's stored access transitions (the feed webhooks carry),
/// read once or followed.
enum AccessChangesCommand: Command {
    static let name = "access-changes"
    static let summary = "the stored access transitions (the feed webhooks carry), in feed order; --follow keeps reading"
    static let after = Option<Int64>("after", value: "SEQ", help: "only transitions after feed position SEQ (default 0: from the start)",
                                     default: 0, parse: OptionParser { text in
        guard let seq = Int64(text), seq >= 0 else { throw OptionValueError("must be a feed position (an integer, 0 or more), got \(text)") }
        return seq
    })
    static let limit = Option<Int?>("limit", value: "N", help: "at most N transitions (default: all; with --follow, stop after N)", parse: .positiveInteger)
    static let product = Option<String?>("product", value: "P", help: "only transitions of product P", completion: .none)
    static let kinds = AccessTransitionKind.knownValues.sorted()
    static let kind = Option<[String]>(repeating: "kind", value: "K", help: "only transitions of kind K; repeatable, or comma-separated:\n\(kinds.joined(separator: ", "))",
                                       completion: .words(kinds), parse: .text)
    static let follow = Flag("follow", help: "keep polling the ledger for new transitions until SIGINT/SIGTERM")
    static let pollInterval = IngestCommand.pollInterval.help("seconds between polls of the ledger with --follow (default 1)")
    static let options: [any DeclaredOption] = LedgerLocation.options + [after, limit, product, kind, follow, pollInterval, Flag.json]
    static let examples = [
        "seatledger access-changes --db ledger.sqlite --kind GAINED,LOST",
        "seatledger access-changes --db ledger.sqlite --after 120 --follow --json",
    ]
    static let help = """
    Usage: seatledger access-changes [--after SEQ] [--limit N] [--product P] [--kind K] [--db PATH] [--json]
           seatledger access-changes --follow [--poll-interval S] [--after SEQ] … [--json]

    Prints the access transitions the ledger has stored (derived by `seatledger serve` from the
    events it records, and from subscriptions lapsing), in feed order: each has a feed position
    (seq), gap-free and in commit order, so `--after` the last one printed resumes exactly where a
    reader stopped. One line each: seq, when the ledger learned it, kind, subject, product and
    scope. With --json, one canonical JSON object per line, {"seq": N, "transition": {…}}, the
    transition as the access.changed webhook carries it. --follow keeps polling the ledger for
    new transitions until SIGINT or SIGTERM (exit 0); progress notes go to stderr, never with --json.

    Options:
    \(OptionHelp.lines(options))
    """

    /// The kinds of `--kind` (repeatable or comma-separated, any case), refused naming an unknown one.
    static func kindFilter(_ values: [String]) throws -> Set<String> {
        let given = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
        for value in given where !AccessTransitionKind.knownValues.contains(value) {
            throw UsageError(message: "--kind must be one of \(kinds.joined(separator: ", ")), got \(value)")
        }
        return Set(given)
    }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let json = arguments[Flag.json]
        let following = arguments[follow]
        if arguments.contains(pollInterval), !following { throw UsageError(message: "--poll-interval applies with --follow") }
        let filter = AccessTransitionFilter(productId: try arguments[product], kinds: try kindFilter(try arguments[kind]))
        var position = try arguments[after]
        let limit = try arguments[Self.limit] ?? Int.max
        let interval = try arguments[pollInterval]
        let ledger = try LedgerLocation(arguments).open(readOnly: true)
        var printed = 0
        let width = Terminal.width

        /// Prints every transition after `position` (pages of 1,000) until none is left or the limit is reached.
        func drain() throws {
            while printed < limit {
                let page = try ledger.accessTransitions(after: position, limit: min(1_000, limit - printed), filter: filter)
                for row in page {
                    if json {
                        let transition = (try? JSONValue.parse(row.body)) ?? .string(row.body)
                        Terminal.out(JSONValue.object(["seq": .int(row.seq), "transition": transition]).canonicalString())
                    } else {
                        Terminal.out(TextTable.fields([
                            "#\(row.seq)", Timestamp.iso8601(row.learnedAt), row.kind, DisplayText.visible(row.subjectKey),
                            row.productId.map { "product \(DisplayText.visible($0))" } ?? "no product", DisplayText.visible(row.scope),
                        ], maxWidth: width))
                    }
                    position = row.seq
                }
                printed += page.count
                if page.count < 1_000 { return }
            }
        }

        try drain()
        guard following else {
            if printed == 0, !json {
                let status = try ledger.accessDerivationStatus()
                Terminal.out("No access changes" + (position > 0 ? " after #\(position)." : "."))
                if status.cursor.position < status.head {
                    Terminal.note("note: access changes are derived through event \(status.cursor.position) of \(status.head) "
                                  + "(`seatledger serve` derives them)")
                }
            }
            return .success
        }
        let stop = StopSignal(stopping: "no more polls")
        if !json { Terminal.note("following the access-change feed after #\(position), every \(interval)s (Ctrl-C stops)") }
        while printed < limit, !stop.isStopped {
            let wake = Date().addingTimeInterval(interval)
            while !stop.isStopped, Date() < wake { Thread.sleep(forTimeInterval: min(0.05, max(0, wake.timeIntervalSinceNow))) }
            if stop.isStopped { break }
            try drain()
        }
        if !json { Terminal.note("stopped after #\(position); resume with --after \(position)") }
        return .success
    }
}
