import AppStoreModels
import Foundation
import LedgerStorage
import SeatLedger

/// `seatledger verify`: recompute the hash chain (and, with projections, compare them).
enum VerifyCommand: Command {
    static let name = "verify"
    static let summary = "recompute the hash chain and report the first position where it breaks"
    static let chainOnly = Flag("chain-only", help: "check only the hash chain")
    static let deep = Flag("deep", help: """
        also re-verify every event from its raw bytes: signatures and certificate
        chains against the stored trust roots, bundle id and environment, then the
        caches derived from them (decoded JSON, identifier index, projection facts)
        and the metadata (id, kind, type, dates). Finds an edited decoded cache,
        facts swapped between events, and a changed bundle id or environment (as
        events that no longer verify). Costs about as much as ingesting the log
        """)
    static let expectHead = Option<String?>("expect-head", value: "H", help: """
        also require the head hash to be H (save the head printed by an earlier
        verify somewhere else: this detects events removed from the end of the log)
        """)
    static let anchor = AnchorOption.option.help("""
        a head anchor kept outside the ledger: the heads of the event chain and
        the record chain and a digest of the trust configuration (roots, bundle
        id, environment, app Apple id, API tokens). If FILE exists, the log must
        still hold the anchored position with its hash, the record chain the
        anchored link, and the trust configuration must be the anchored one (a
        truncated tail, a re-hashed chain, a root, token or value changed
        without `config add-root --anchor` / `token … --anchor` is a finding
        naming it); after an intact verify FILE is written with the current
        heads. An anchor of an earlier release (one line) is read and extended.
        Keep it where the ledger's writers cannot change it
        """)
    static let options: [any DeclaredOption] = LedgerLocation.options + [
        Flag.progress, chainOnly, deep, expectHead, anchor,
        PinnedRoots.option.help("""

            pin a trusted root by its SHA-256 fingerprint (repeatable; default
            $SEATLEDGER_TRUSTED_ROOTS, comma-separated): a root of the ledger outside
            the pinned set is a finding naming it (fingerprint and subject)
            """),
        Flag.json,
    ]
    static let exitStatuses: [ExitStatus] = [
        .success, ExitStatus(.findings, "the file is damaged, the chain or the record chain is broken, the head is not --expect-head or the anchor, a projection is stale, events lack cached facts, or (--deep) an event no longer verifies or a cache differs from its raw bytes"), .error,
    ]
    static let examples = ["seatledger verify --db ledger.sqlite", "seatledger verify --deep --anchor /secure/ledger.anchor --db ledger.sqlite",
                           "seatledger verify --db ledger.sqlite --chain-only --expect-head \"$SAVED_HEAD\""]
    static let help = """
    Usage: seatledger verify [--deep] [--chain-only] [--expect-head H] [--anchor FILE] [--trusted-root-sha256 HEX …] [--db PATH] [--json] [--progress]

    Recomputes every event's SHA-256 chain hash from its stored bytes (the raw message and its metadata)
    and checks positions are gap-free. Reports the first position where the chain breaks, e.g. after the
    file was edited with another tool. Then checks the record chain, which covers the configuration, the
    trust roots and the quarantine: a value, root or quarantine item edited, added or deleted outside
    SeatLedger is a finding, as is a deleted arrival record (arrival ids must be gap-free, and every
    event must have its first arrival). Then recomputes every projection from the log and names the
    groups whose stored projection differs, the group index or a group snapshot (a group folded at a
    moment, compared with a fold at it) (skip with --chain-only). First the database file's own
    structure is checked (SQLite `PRAGMA quick_check`): a damaged file is reported as a finding
    (exit 1). Exit 1 also when the chain is broken or a projection is stale
    (`seatledger rebuild --all-snapshots` repairs those), or when events lack cached projection facts (a
    ledger from an older build): the projections are then not checked, since a recomputation without
    those events would name sound groups as stale. Traces of rows removed from the end are findings
    too: an event's cached rows (decoded payload, identifier index, facts) past the last event, and
    on PostgreSQL a position or quarantine id the head row issued whose row is gone; group-index
    rows no event mentions are named. What only an anchor (--anchor) can prove: events, quarantine
    items or other record-chain rows removed from the end together with every trace (on SQLite the
    last quarantine item deleted with its link leaves none), a chain re-hashed after an edit, and a
    root, token or trust value added with a correctly hashed record-chain link (or pin the roots:
    --trusted-root-sha256).

    Options:
    \(OptionHelp.lines(options))
    """

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        // A damaged file is a finding (exit 1), not an error: verify exists to find it.
        let location = try LedgerLocation(arguments)
        do {
            let store = try location.openStore(readOnly: true)
            let problems = try store.integrityProblems()
            guard problems.isEmpty else { return corrupt(problems.joined(separator: "; "), at: location, arguments) }
            return try check(store, arguments)
        } catch where LedgerStoreError.isCorruption(error) {
            return corrupt("\(error)", at: location, arguments)
        }
    }

    /// Reports a damaged database file: exit 1.
    static func corrupt(_ problem: String, at location: LedgerLocation, _ arguments: Arguments) -> Terminal.ExitCode {
        // Writers refuse the file while the marker exists (`LedgerSoundness`).
        let marker = Ledger.recordDamage(problem, at: location.path)
        if arguments[Flag.json] {
            Terminal.json(["intact": false, "corrupt": true, "problem": .string(problem), "damageMarker": .optional(marker)])
        } else {
            Terminal.out("Ledger file CORRUPT: \(problem)")
            Terminal.out("Restore it from a backup (or `seatledger copy` what can still be read) before writing to it again."
                         + (marker.map { " Writers refuse it while \($0) exists; delete that file once the ledger is restored." } ?? ""))
        }
        return .findings
    }

    static func check(_ store: any LedgerStore, _ arguments: Arguments) throws -> Terminal.ExitCode {
        let progress = ProgressReporter(label: "verify", arguments: arguments)
        let total = try store.eventCount()
        let result = try store.verifyChain { count in
            progress.report(count: count, totalCount: total, unit: "events checked")
        }
        progress.report(count: result.eventsChecked, totalCount: total, unit: "events checked", force: true)
        /// A chain that links but ends where it should not: a finding, printed once.
        func brokenTail(_ problem: String) -> Terminal.ExitCode {
            if arguments[Flag.json] {
                Terminal.json(["intact": false, "eventsChecked": .int(result.eventsChecked), "problem": .string(problem),
                               "headHash": .optional(result.headHash)])
            } else {
                Terminal.out("Hash chain BROKEN: \(problem)")
            }
            return .findings
        }
        if let expected = try arguments[expectHead], result.isIntact, result.headHash != expected.lowercased() {
            return brokenTail("head hash is \(result.headHash ?? "none"), expected \(expected): events were removed from (or added to) the end of the log")
        }
        if let anchor = try arguments[Self.anchor], result.isIntact {
            let problems = try HeadAnchor.problems(anchor, against: store)
            if !problems.isEmpty {
                if arguments[Flag.json] {
                    Terminal.json(["intact": false, "eventsChecked": .int(result.eventsChecked), "problem": .string(problems.joined(separator: "; ")),
                                   "anchorProblems": .array(problems.map(JSONValue.string)), "headHash": .optional(result.headHash)])
                } else if problems.count == 1, !problems[0].hasPrefix("trust configuration"), !problems[0].hasPrefix("record-chain"),
                          !problems[0].hasPrefix("the record chain") {
                    Terminal.out("Hash chain BROKEN: \(problems[0])")
                } else {
                    Terminal.out("Anchor \(anchor) FOUND \(problems.count) problem(s) (the anchor is not rewritten):")
                    for problem in problems { Terminal.out("  \(problem)") }
                }
                return .findings
            }
        }
        // The second chain: configuration, trust roots and quarantine rows (`RecordChain`).
        let records = try store.verifyRecordChain()
        // Traces of rows removed from the end: caches past the last event, ids the head row issued (PostgreSQL).
        let remnants = try store.tailRemnants()
        // Roots outside the pinned set (--trusted-root-sha256 / $SEATLEDGER_TRUSTED_ROOTS).
        let pinFindings = try PinnedRoots.findings(arguments, store: store)
        // The arrivals log: ids gap-free, every event's first arrival present.
        let arrivalFindings = try store.arrivalSummary(limit: 5).findings
        var deep: DeepVerification?
        if result.isIntact, arguments[Self.deep] {
            let ledger = try LedgerLocation(arguments).open(readOnly: true)
            progress.phase("re-verifying every event from its raw bytes")
            deep = try ledger.verifyDeeply { count in progress.report(count: count, totalCount: total, unit: "events re-verified") }
        }
        var stale: [String] = []
        // Events whose facts cache is missing (an older build's ledger, a damaged cache): the
        // recomputation would leave them out and name sound groups as stale, so it does not run.
        var withoutFacts = 0
        var projectionsChecked = false
        if result.isIntact, !arguments[chainOnly] {
            let ledger = try LedgerLocation(arguments).open(readOnly: true)
            ledger.warnIfProjectionsOutdated(command: name)
            withoutFacts = try ledger.positionsWithoutFacts().count
            if withoutFacts == 0 {
                stale = try ledger.staleProjections { message in progress.phase(message) }
                projectionsChecked = true
            }
        }
        // Stale groups no event mentions: index rows nothing supports (named apart from a stale fold).
        var unsupported: [String] = []
        if !stale.isEmpty {
            let ledger = try LedgerLocation(arguments).open(readOnly: true)
            unsupported = try stale.filter { try ledger.events(mentioning: $0).isEmpty }
        }
        progress.finish()
        // Written before anything is printed: a failure to write it is then the command's one
        // error (one JSON object with --json), not a second document after the report.
        // Only a ledger whose both chains are intact is anchored: an anchor must not sign off a
        // row the record chain names as changed outside SeatLedger.
        if let anchor = try arguments[Self.anchor], result.isIntact, records?.isIntact ?? true, pinFindings.isEmpty, remnants.isEmpty {
            try HeadAnchor(headOf: store).write(to: anchor)
        }
        if arguments[Flag.json] {
            var report: [String: JSONValue] = [
                "intact": .bool(result.isIntact), "eventsChecked": .int(result.eventsChecked),
                "firstBadPosition": .optional(result.firstBadPosition), "problem": .optional(result.problem),
                "headHash": .optional(result.headHash),
                "projectionsChecked": .bool(projectionsChecked),
                "staleGroups": .array(stale.map(JSONValue.string)),
                "eventsWithoutFacts": .int(Int64(withoutFacts)),
                "arrivals": ["intact": .bool(arrivalFindings.isEmpty), "findings": .array(arrivalFindings.map(JSONValue.string))],
                "records": records.map { records in [
                    "intact": .bool(records.isIntact), "linksChecked": .count(records.linksChecked),
                    "headHash": .optional(records.headHash), "findings": .array(records.findings.map(JSONValue.string)),
                ] } ?? .null,
                "deep": deep.map { deep in [
                    "eventsChecked": .int(deep.eventsChecked), "findingCount": .count(deep.findingCount),
                    "olderDecoderEvents": .count(deep.olderDecoderEvents),
                    "findings": .array(deep.findings.map { ["position": .int($0.position), "problem": .string($0.problem)] }),
                ] } ?? .null,
            ]
            // Present only when found: the report of an intact ledger is what it was.
            if !remnants.isEmpty { report["removed"] = ["intact": false, "findings": .array(remnants.map(JSONValue.string))] }
            if !unsupported.isEmpty { report["unsupportedIndexGroups"] = .array(unsupported.map(JSONValue.string)) }
            // Present only when roots are pinned: the report is otherwise what it was.
            if try PinnedRoots.pinned(arguments) != nil {
                report["pinnedRoots"] = ["intact": .bool(pinFindings.isEmpty), "findings": .array(pinFindings.map(JSONValue.string))]
            }
            Terminal.json(.object(report))
        } else if result.isIntact {
            Terminal.out("Hash chain intact: \(result.eventsChecked) events\(result.headHash.map { ", head \($0)" } ?? "").")
            if withoutFacts > 0 {
                Terminal.out("Projections NOT checked: \(withoutFacts) events have no cached projection facts (a ledger from an "
                             + "older build, or a damaged cache); `seatledger rebuild` derives them from the events.")
            } else if !arguments[chainOnly] {
                Terminal.out(stale.isEmpty ? "Projections match a fresh recomputation."
                             : "STALE projections (run `seatledger rebuild --all-snapshots`): \(stale.joined(separator: ", "))")
            }
            if let deep {
                if deep.isClean {
                    Terminal.out("Deep check: \(deep.eventsChecked) events re-verified from their raw bytes; every cache matches."
                                 + (deep.olderDecoderEvents > 0 ? " (\(deep.olderDecoderEvents) decoded by an older decoder: compared by identifiers and facts.)" : ""))
                } else {
                    Terminal.out("Deep check FOUND \(deep.findingCount) problem(s) in \(deep.eventsChecked) events:")
                    for finding in deep.findings { Terminal.out("  #\(finding.position): \(finding.problem)") }
                    if deep.findingCount > deep.findings.count { Terminal.out("  … and \(deep.findingCount - deep.findings.count) more (--json lists the first \(DeepVerification.findingLimit))") }
                    Terminal.out("A decoded payload, identifier row or facts row that differs was changed after its append "
                                 + "(`rebuild` re-derives only missing facts and the group index): restore the ledger from a backup. "
                                 + "An event that no longer verifies means the configuration or the trust roots changed.")
                }
            }
        } else {
            Terminal.out("Hash chain BROKEN at position \(result.firstBadPosition ?? 0): \(result.problem ?? "")")
            Terminal.out("\(result.eventsChecked) events before it verified.")
        }
        if !arguments[Flag.json] {
            switch records {
            case nil:
                Terminal.out("Record chain: none (a ledger of schema 2; the next writer to open it adds it, on PostgreSQL the tables' owner): "
                             + "configuration, trust roots and quarantine are not covered.")
            case let records? where records.isIntact:
                Terminal.out("Record chain intact: \(records.linksChecked) links over configuration, trust roots and quarantine.")
            case let records?:
                Terminal.out("Record chain FOUND \(records.findings.count) problem(s):")
                for finding in records.findings { Terminal.out("  \(finding)") }
            }
            for finding in arrivalFindings { Terminal.out("Arrivals FOUND: \(finding)") }
            for finding in pinFindings { Terminal.out("Trust roots FOUND: \(finding)") }
            for finding in remnants { Terminal.out("Removed rows FOUND: \(finding)") }
            for key in unsupported {
                Terminal.out("Group index FOUND: rows of group \(key) that no event supports (no event mentions \(key): added outside "
                             + "SeatLedger, or left by deleted events)")
            }
        }
        return result.isIntact && stale.isEmpty && withoutFacts == 0 && (deep?.isClean ?? true) && (records?.isIntact ?? true)
            && arrivalFindings.isEmpty && pinFindings.isEmpty && remnants.isEmpty ? .success : .findings
    }
}
