import AppStoreModels
import EventStore
import Foundation
import SeatLedger

/// `seatledger verify`: recompute the hash chain (and, with projections, compare them).
enum VerifyCommand: Command {
    static let name = "verify"
    static let summary = "recompute the hash chain and report the first position where it breaks"
    static let options: Set<String> = ["db", "expect-head"]
    static let flags: Set<String> = ["json", "progress", "chain-only"]
    static let help = """
    Usage: seatledger verify [--chain-only] [--expect-head H] [--db PATH] [--json] [--progress]

    Recomputes every event's SHA-256 chain hash from its stored bytes (the raw message and its
    metadata) and checks positions are gap-free. Reports the first position where the chain
    breaks, e.g. after the file was edited with another tool. Then recomputes every projection
    from the log and names the groups whose stored projection differs (skip with --chain-only).
    First the database file's own structure is checked (SQLite `PRAGMA quick_check`): a damaged
    file is reported as a finding (exit 1). Exit 1 also when the chain is broken or a projection is stale (`seatledger rebuild` repairs those),
    or when events lack cached projection facts (a ledger from an older build): the projections are
    then not checked, since a recomputation without those events would name sound groups as stale.

    Options:
    \(HelpText.db)
      --progress       progress on stderr even when it is not a terminal
      --chain-only     check only the hash chain
      --expect-head H  also require the head hash to be H (save the head printed by an earlier
                       verify somewhere else: this detects events removed from the end of the log)
    \(HelpText.json)

    \(HelpText.exitCodes)
    """

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        // A damaged file is a finding (exit 1), not an error: verify exists to find it.
        do {
            let store = try StoreLocation(arguments.databasePath).open(readOnly: true)
            let problems = try store.integrityProblems()
            guard problems.isEmpty else { return corrupt(problems.joined(separator: "; "), arguments) }
            return try check(store, arguments)
        } catch where EventStoreError.isCorruption(error) {
            return corrupt("\(error)", arguments)
        }
    }

    /// Reports a damaged database file: exit 1.
    static func corrupt(_ problem: String, _ arguments: Arguments) -> Terminal.ExitCode {
        if arguments.flag("json") {
            Terminal.json(["intact": false, "corrupt": true, "problem": .string(problem)])
        } else {
            Terminal.out("Ledger file CORRUPT: \(problem)")
            Terminal.out("Restore it from a backup (or `seatledger copy` what can still be read) before writing to it again.")
        }
        return .findings
    }

    static func check(_ store: any LedgerStore, _ arguments: Arguments) throws -> Terminal.ExitCode {
        let showProgress = arguments.flag("progress") || Terminal.stderrIsTTY
        let result = try store.verifyChain { count in
            if showProgress { Terminal.err("verify: \(count) events checked") }
        }
        if let expected = arguments.value("expect-head"), result.isIntact, result.headHash != expected.lowercased() {
            let problem = "head hash is \(result.headHash ?? "none"), expected \(expected): events were removed from (or added to) the end of the log"
            if arguments.flag("json") {
                Terminal.json(["intact": false, "eventsChecked": .int(result.eventsChecked), "problem": .string(problem),
                               "headHash": .optional(result.headHash)])
            } else {
                Terminal.out("Hash chain BROKEN: \(problem)")
            }
            return .findings
        }
        var stale: [String] = []
        // Events whose facts cache is missing (an older build's ledger, a damaged cache): the
        // recomputation would leave them out and name sound groups as stale, so it does not run.
        var withoutFacts = 0
        var projectionsChecked = false
        if result.isIntact, !arguments.flag("chain-only") {
            let ledger = try Ledger.open(path: arguments.databasePath, readOnly: true)
            ledger.warnIfProjectionsOutdated(command: name)
            withoutFacts = try ledger.store.positionsWithoutFacts().count
            if withoutFacts == 0 {
                stale = try ledger.staleProjections { message in
                    if showProgress { Terminal.err("verify: \(message)") }
                }
                projectionsChecked = true
            }
        }
        if arguments.flag("json") {
            Terminal.json([
                "intact": .bool(result.isIntact), "eventsChecked": .int(result.eventsChecked),
                "firstBadPosition": .optional(result.firstBadPosition), "problem": .optional(result.problem),
                "headHash": .optional(result.headHash),
                "projectionsChecked": .bool(projectionsChecked),
                "staleGroups": .array(stale.map(JSONValue.string)),
                "eventsWithoutFacts": .int(Int64(withoutFacts)),
            ])
        } else if result.isIntact {
            Terminal.out("Hash chain intact: \(result.eventsChecked) events\(result.headHash.map { ", head \($0)" } ?? "").")
            if withoutFacts > 0 {
                Terminal.out("Projections NOT checked: \(withoutFacts) events have no cached projection facts (a ledger from an "
                             + "older build, or a damaged cache); `seatledger rebuild` derives them from the events.")
            } else if !arguments.flag("chain-only") {
                Terminal.out(stale.isEmpty ? "Projections match a fresh recomputation."
                             : "STALE projections (run `seatledger rebuild`): \(stale.joined(separator: ", "))")
            }
        } else {
            Terminal.out("Hash chain BROKEN at position \(result.firstBadPosition ?? 0): \(result.problem ?? "")")
            Terminal.out("\(result.eventsChecked) events before it verified.")
        }
        return result.isIntact && stale.isEmpty && withoutFacts == 0 ? .success : .findings
    }
}
