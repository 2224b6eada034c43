import AppStoreModels
import Foundation
import LedgerStorage
import SeatLedger

/// `seatledger copy`: copy a ledger to another store with its hash chain intact.
enum CopyCommand: Command {
    static let name = "copy"
    static let summary = "copy a ledger to another store (e.g. SQLite to PostgreSQL), chain preserved; resumable"
    static let from = Option<String?>("from", value: "SOURCE", help: "the ledger to copy (file or postgresql:// URL)")
    static let to = Option<String?>("to", value: "DEST", help: "where to copy it (created if missing)")
    static let batch = Option<Int?>("batch", value: "N", help: "events per transaction (default 2000)", parse: OptionParser { text in
        guard let size = Int(text), size > 0 else { throw OptionValueError("must be a positive number, got \(text)") }
        return size
    })
    static let options: [any DeclaredOption] = [from, to, batch, Flag.progress, Flag.json]
    static let exitStatuses: [ExitStatus] = [
        .success, ExitStatus(.findings, "the copy was refused (the destination is not a prefix of the source, or a verify failed)"), .error,
        ExitStatus(.interrupted, "stopped by SIGINT/SIGTERM between batches (re-run to resume)"),
    ]
    static let examples = ["seatledger copy --from ledger.sqlite --to postgresql://seatledger@db.internal/ledger"]
    static let help = """
    Usage: seatledger copy --from SOURCE --to DEST [--batch N] [--json] [--progress]

    Copies every event of SOURCE to DEST with the same positions, recording times and hashes,
    so the hash chain (and `verify --expect-head`) carries over. SOURCE and DEST are ledger
    files or postgresql:// URLs.

    1. Verifies SOURCE's hash chain; a broken source is not copied (exit 1).
    2. Creates DEST with SOURCE's configuration and trust roots, or opens it if it exists
       (it must be a ledger for the same bundle id and environment).
    3. Resumes after the events DEST already holds, once DEST's head is confirmed to be
       SOURCE's event at that position (a DEST that diverges is refused, exit 1).
    4. Appends the rest in batches of N (default 2000), each one transaction: every event must
       continue DEST's chain and hash to its own contents.
    5. Rebuilds DEST's projections and verifies DEST's chain ends at SOURCE's head hash.

    Interrupted (Ctrl-C, crash, lost connection), run the same command again: it continues; until
    then the destination refuses writes (an append would make it diverge from the source).
    Quarantined inputs and claim-request bookkeeping are not copied; they stay in SOURCE.

    Options:
    \(OptionHelp.lines(options))
    """

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "copy takes no positional arguments; use --from and --to") }
        guard let from = try arguments[Self.from], let to = try arguments[Self.to] else {
            throw UsageError(message: "copy needs --from SOURCE and --to DEST")
        }
        let source = StoreLocation(from)
        let destination = StoreLocation(to)
        guard source != destination, !sameFile(source, destination) else {
            throw UsageError(message: "--from and --to name the same ledger (\(source)); a ledger cannot be copied onto itself")
        }
        let opened: any LedgerStore
        do {
            opened = try source.open(readOnly: true)
        } catch let error where errorCode(of: error) != "no_ledger" {
            // Name the side: with two PostgreSQL URLs a bare connection error does not say which failed.
            throw SideFailure(option: "--from", location: source.description, underlying: error)
        }
        var copy = LedgerCopy(source: opened)
        if let size = try arguments[batch] { copy.batchSize = size }
        let progress = ProgressReporter(label: "copy", arguments: arguments)
        defer { progress.finish() }
        let stop = StopSignal(stopping: "finishing the batch in hand; re-run the same copy to resume")
        let report: LedgerCopy.Report
        do {
            report = try copy.run(to: destination, progress: { message in progress.phase(message) },
                                  copied: { done, total in progress.report(count: done, totalCount: total, unit: "events") },
                                  shouldStop: { stop.isStopped }, beforeFinishing: { stop.restoreDefault() })
        } catch let failure as LedgerCopy.Failure {
            if case .configurationMismatch = failure { throw failure }
            if arguments[Flag.json] {
                Terminal.json(["copied": false, "problem": .string(failure.description)])
            } else {
                Terminal.out("Copy refused: \(failure.description)")
            }
            return .findings
        }
        if report.interrupted {
            if arguments[Flag.json] {
                Terminal.json(report.json)
            } else {
                Terminal.out("Interrupted after copying \(report.copied) events to \(destination) (\(report.alreadyPresent + report.copied) there now); "
                             + "run the same copy again to resume. Until it completes, reads of the destination warn that its projections are not built, and writes to it are refused.")
            }
            return .interrupted
        }
        if arguments[Flag.json] {
            Terminal.json(report.json)
        } else {
            let resumed = report.alreadyPresent > 0 ? " (\(report.alreadyPresent) were already there)" : ""
            Terminal.out("Copied \(report.copied) events to \(destination)\(resumed)\(report.createdDestination ? ", a new ledger" : "").")
            Terminal.out("Both ledgers end at head \(report.headHash ?? "none"); \(report.groups) groups rebuilt.")
        }
        return .success
    }

    /// Whether two SQLite locations are the same file once each path is made absolute,
    /// standardized (`.`/`..` removed) and its symbolic links resolved.
    static func sameFile(_ first: StoreLocation, _ second: StoreLocation) -> Bool {
        guard case .sqlite(let a) = first, case .sqlite(let b) = second else { return false }
        return resolvedPath(a) == resolvedPath(b)
    }

    /// `path` absolute, standardized and with symbolic links resolved; for a file that does not
    /// exist yet, its directory is resolved and the name appended.
    static func resolvedPath(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        if FileManager.default.fileExists(atPath: url.path) { return url.resolvingSymlinksInPath().path }
        let directory = url.deletingLastPathComponent().resolvingSymlinksInPath()
        return directory.appendingPathComponent(url.lastPathComponent).standardizedFileURL.path
    }
}

/// A failure at one end of `copy`, named: "--from LOCATION: reason" (the URL without its password).
struct SideFailure: Error, CustomStringConvertible {
    let option: String
    let location: String
    let underlying: any Error
    var description: String { "\(option) \(location): \(underlying)" }
}
