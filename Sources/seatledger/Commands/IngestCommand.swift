import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerIntake
import SeatLedger

/// `seatledger ingest`: verify, decode and append messages from files, stdin or a spool directory.
enum IngestCommand: Command {
    static let name = "ingest"
    static let summary = "verify and append notifications / API responses from files, stdin or a spool directory"
    static let from = Option<String?>("from", value: "URL", help: """
        redis://host:port/stream-key instead of files (redis://:password@… or
        redis://user:password@… to AUTH; shown as redis://***@…)
        """)
    static let consumerGroup = Option<String?>("consumer-group", value: "G", help: "consumer group (default seatledger)")
    static let consumer = Option<String?>("consumer", value: "C", help: "consumer name (default: host name and process id)")
    static let blockMilliseconds = Option<Int>("block-ms", value: "N", help: "how long one read waits for new entries (default 1000)",
                                               default: 1000, parse: .positiveInteger)
    static let minIdleMilliseconds = Option<Int>("min-idle-ms", value: "N", help: "claim other consumers' entries idle this long (default 30000)",
                                                 default: 30_000, parse: .positiveInteger)
    static let untilEmpty = Flag("until-empty", help: """
        stop when the stream has nothing new and nothing pending (one-shot
        drain; entries a dead consumer left pending are claimed once idle
        for --min-idle-ms); give up with exit 2 after 5 consecutive failed
        attempts to reach Redis
        """)
    static let batchSize = Option<Int?>("batch-size", value: "N", help: """
        messages per transaction (default 1024; 256 for stdin, pipes and
        spool directories, whose batches wait to fill: a Redis read returns
        what is there, up to N, without waiting)
        """, parse: .positiveInteger)
    static let maxMessageBytes = Option<Int?>("max-message-bytes", value: "N", help: """
        a longer line (or spool file, or Redis entry) is quarantined as
        line_too_long (message_too_large) with its size, its SHA-256 and its
        first 64 KiB, read in bounded memory; ingest goes on (default 4194304, several
        times Apple's largest response; --max-line-length N is the old name)
        """, parse: .positiveInteger)
    /// The old name of ``maxMessageBytes`` (documented under it).
    static let maxLineLength = Option<Int?>("max-line-length", value: "N", help: "the old name of --max-message-bytes", parse: .positiveInteger)
    static let apiResponses = Flag("api-responses", help: "apply apiResponse envelopes from these inputs (see Trust above)")
    static let spool = Flag("spool", help: "take directory INPUTs as spool directories (creates done/ and rejected/)")
    static let follow = Flag("follow", help: "keep watching the spool directory (one per process)")
    static let pollInterval = Option<Double>("poll-interval", value: "S", help: "seconds between spool scans with --follow (default 1)",
                                             default: 1, parse: OptionParser { text in
        guard let seconds = Double(text), seconds.isFinite, seconds > 0 else { throw OptionValueError("must be a positive number of seconds, got \(text)") }
        return seconds
    })
    /// The options in the order `--help` lists them.
    static let listed: [any DeclaredOption] = LedgerLocation.options + [
        from, RedisPasswordSource.option, consumerGroup, consumer, blockMilliseconds, minIdleMilliseconds, untilEmpty, batchSize,
        maxMessageBytes, apiResponses, spool, follow, pollInterval,
        AnchorOption.option.help("""
            a head anchor (see `seatledger verify --anchor`): checked before the
            first append (a ledger that no longer holds the anchored heads, or
            whose trust configuration changed without `--anchor`, is refused,
            exit 2) and rewritten after every committed batch, so a truncated or
            re-hashed tail is caught without anyone keeping a head; a trust change
            underneath it stops the ingest (exit 2) instead of being written
            """),
        PinnedRoots.option.help("""
            pin a trusted root by its SHA-256 fingerprint (repeatable; default
            $SEATLEDGER_TRUSTED_ROOTS, comma-separated): a ledger holding any
            other root is refused (exit 2), naming it
            """),
        Flag.progress, ServiceStatus.interval,
        Flag.json.help("machine-readable output on stdout   {\"appended\": N, \"duplicates\": N, \"quarantined\": N}"),
    ]
    static let options: [any DeclaredOption] = listed + [maxLineLength]
    static let exitStatuses: [ExitStatus] = [
        .success, .error, .quarantined,
        ExitStatus(.interrupted, "a file or stdin ingest was stopped by SIGINT/SIGTERM before reading all its input (re-run to continue); --follow and --from stop with 0 or 3"),
    ]
    static let examples = [
        "seatledger ingest --db ledger.sqlite notifications.ndjson",
        "seatledger ingest --db ledger.sqlite - < notifications.ndjson",
        "seatledger ingest --db ledger.sqlite --follow /var/spool/seatledger",
        "seatledger ingest --db ledger.sqlite --from redis://127.0.0.1:6379/appstore-notifications --consumer worker-1",
    ]
    static let help = """
    Usage: seatledger ingest [INPUT …] [--db PATH] [--json] [--progress] [--follow]

    Each INPUT is an NDJSON file, `-` for stdin (the default), or a spool directory. A line (or a
    spool file) is one message: `{"signedPayload":"<JWS>"}` exactly as Apple posts it, a bare JWS,
    an `{"apiResponse": {…}}` envelope, or a StoreKit input as your app server received it from the
    app: `{"storeKit": {"userId": "u-42", "signedTransaction": "<JWS>"}}` (a transaction's
    jwsRepresentation) or the same with "signedAppTransaction" (a signed AppTransaction); userId
    is optional, and a bare JWS whose payload is a transaction or an AppTransaction is the same
    input without one. Every message is verified (x5c chain to a configured root at its
    signedDate, an AppTransaction's receiptCreationDate; Apple OIDs, ES256 signature, bundle id
    and environment) and appended; a notification already in the ledger (same notificationUUID)
    or an identical API response or StoreKit input appends nothing and counts as a duplicate.
    Anything refused is quarantined with its raw bytes and a reason
    (see `seatledger quarantine list`); nothing is dropped.

    Trust: an `apiResponse` envelope carries no Apple signature, so anyone who can write to a
    file, spool directory or queue could forge one (say, a ClaimSeat giving someone a seat). Only
    Apple-signed notifications are applied unless you pass --api-responses, which says the
    envelopes of this run's inputs are responses you received from Apple yourself; without it an
    envelope is quarantined as untrusted_api_response (`seatledger record FILE` imports one).
    A StoreKit input is applied from a file or stdin (your own import) but never from a spool
    directory or a queue, which carry Apple's notifications: there it is quarantined as
    storekit_not_accepted_here (the app server posts it to `serve`'s POST /v1/storekit).
    Every event records its path as its origin: file, stdin, spool or queue.

    Messages are committed in atomic batches; killing the process loses no committed batch and
    re-running the same input appends nothing twice.

    Spool directories: one message per file. A file is first claimed (renamed into `processing/`) and
    read through the descriptor opened there, so a producer replacing a name by rename while a batch
    runs loses nothing; it moves to `done/` after its event commits and to `rejected/` after it is
    quarantined. Symbolic links are never followed: a symlinked `done/`, `rejected/` or `processing/`
    refuses the spool (exit 2), and entries that are links, FIFOs, sockets, devices or unreadable are
    reported on stderr (names escaped), moved to `rejected/` unread and counted ("refusedUnread" in
    --json; exit 2). Files whose names start with `.` or end in `.tmp` are skipped (write then rename).
    Because files are moved, a directory is taken as a spool only when it already has a `done/` or
    `rejected/` folder, or with --spool or --follow (which create them): a directory named by mistake
    (say /tmp) is refused and nothing in it is touched. With --follow, keep watching until
    SIGINT/SIGTERM, which finish the current batch and exit normally (0, or 3 if anything was
    quarantined).

    From a Redis stream (consumer groups; at-least-once in, exactly-once in the ledger):
      seatledger ingest --from redis://127.0.0.1:6379/appstore-notifications --consumer-group seatledger --consumer worker-1
    Each stream entry carries one message in its `body` field. Entries are read with XREADGROUP in
    batches, appended in one transaction, and acknowledged (XACK) only after it commits. On start the
    consumer re-reads its own pending entries and claims entries idle longer than --min-idle-ms from
    dead consumers (XAUTOCLAIM). The group is created (from the stream's start) if missing. Redis
    restarts are survived by reconnecting with backoff; each failed attempt is reported on stderr (URL
    credentials redacted). SIGTERM/SIGINT finish the current batch, acknowledge it and exit normally (0,
    or 3 if anything was quarantined). Progress and lag (pending, last id) go to stderr; --json prints
    the final stats.

    Options:
    \(OptionHelp.lines(listed, column: 24))
                     (plus "alreadyQuarantined": N when some refused inputs were already in
                     quarantine, and "interrupted": true when a signal stopped it early)

    Every INPUT is checked (exists, readable) before anything is appended. SIGINT/SIGTERM during a
    file or stdin ingest (or a spool directory without --follow) finish the current batch, print
    the summary with "interrupted: input not fully read; re-run to continue" and exit 4: the
    committed batches are kept and re-running the same command skips them as duplicates.
    (--follow and --from consumers stopped by a signal exit 0 or 3 as described above.)
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { nil }

    /// Options that only mean something when reading a Redis stream (`--from`).
    static let streamOnly: [any DeclaredOption] = [consumerGroup, consumer, blockMilliseconds, minIdleMilliseconds, untilEmpty,
                                                   RedisPasswordSource.option]
    /// Options that only mean something when reading files and spool directories.
    static let filesOnly: [any DeclaredOption] = [follow, spool, pollInterval]

    /// Refuses options that do not apply to the chosen mode instead of silently ignoring them.
    static func checkMode(_ arguments: Arguments) throws {
        if arguments.contains(from) {
            if let option = filesOnly.first(where: { arguments.contains($0) }) {
                throw UsageError(message: "\(option.declaration.spelled) applies to files and spool directories, not --from")
            }
        } else if let option = streamOnly.first(where: { arguments.contains($0) }) {
            throw UsageError(message: "\(option.declaration.spelled) applies to a Redis stream: give it with --from URL")
        }
        if arguments.contains(ServiceStatus.interval), !arguments[follow], !arguments.contains(from) {
            throw UsageError(message: "--status-interval applies to long-running consumers: --follow or --from")
        }
        if arguments.contains(pollInterval), !arguments[follow] {
            throw UsageError(message: "--poll-interval applies with --follow")
        }
    }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        try checkMode(arguments)
        if arguments.contains(maxLineLength), arguments.contains(maxMessageBytes) {
            throw UsageError(message: "--max-line-length is the old name of --max-message-bytes: give one of them")
        }
        let maxLine = try arguments[maxLineLength] ?? arguments[maxMessageBytes] ?? Self.defaultMaxMessageBytes
        if let from = try arguments[Self.from] { return try QueueIngestCommand.run(from: from, maxMessageBytes: maxLine, arguments) }
        // A regular file is a bulk load: bigger transactions mean fewer WAL fsyncs (a full bench
        // ingest: 24.6 s at 256, 21.2–21.7 s at 1,024). A stream keeps small batches, which commit
        // without waiting for many more messages to arrive.
        let explicitBatchSize = try arguments[batchSize]
        let interval = try arguments[pollInterval]
        let inputs = arguments.positionals.isEmpty ? ["-"] : arguments.positionals
        if inputs.contains("-"), isatty(STDIN_FILENO) == 1 {
            // Waiting silently on a terminal looks like a hang.
            Terminal.note("seatledger ingest: reading messages from stdin (a terminal), one per line: {\"signedPayload\":\"<JWS>\"}, "
                          + "a bare JWS or an {\"apiResponse\": …} envelope; end with Ctrl-D. Give a FILE or a spool directory instead (see --help).")
        }
        // Every input must be there before anything is appended: a typo in the last name must not
        // leave the earlier inputs committed and no summary printed.
        for input in inputs where input != "-" {
            try FileChecks.requireReadable(input, allowDirectory: true)
            try requireSpoolIfDirectory(input, explicit: arguments[Self.spool] || arguments[Self.follow])
        }
        if arguments[Self.follow] {
            // One watcher watches one directory: the follow loop never returns to reach a second,
            // whose files would wait forever. Run one `ingest --follow` per spool.
            guard inputs.count == 1 else {
                throw UsageError(message: "--follow watches one spool directory, got \(inputs.count) (\(inputs.joined(separator: ", "))): "
                                 + "run one `seatledger ingest --follow DIR` for each")
            }
            // --follow watches spool directories; a file or stdin would be read once and the flag ignored.
            for input in inputs {
                var isDirectory: ObjCBool = false
                guard input != "-", FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory), isDirectory.boolValue else {
                    throw UsageError(message: "--follow watches spool directories; \(input == "-" ? "stdin" : input) is not one")
                }
            }
        }
        let ledger = try LedgerLocation(arguments).open()
        try PinnedRoots.require(arguments, ledger: ledger, doing: "ingest")
        ledger.warnIfProjectionsOutdated(command: name)
        let stop = StopSignal()
        let anchor = try AnchorOption.checked(arguments, ledger: ledger, stop: stop)
        let progress = ProgressReporter(label: "ingest", arguments: arguments)
        let follow = arguments[Self.follow]
        // Percent and ETA when every input is a regular file (stdin included, when redirected from one).
        let sizes = inputs.map(Self.regularFileSize)
        let totalBytes: Int64? = sizes.contains(nil) ? nil : sizes.reduce(0) { $0 + $1! }
        var bytesRead: Int64 = 0
        let status = follow ? try ServiceStatus(source: inputs.joined(separator: " "), arguments: arguments) : nil
        if let status, status.isEnabled { status.noteHead(try ledger.headPosition()) }
        var summary = IngestSummary()
        var interrupted = false
        var spoolProblems = 0
        for (index, input) in inputs.enumerated() {
            var isDirectory: ObjCBool = false
            if input != "-", FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory), isDirectory.boolValue {
                let spool = SpoolDirectory(url: URL(fileURLWithPath: input), maxMessageBytes: maxLine,
                                           acceptsAPIResponses: arguments[apiResponses])
                do {
                    try spool.ingest(into: ledger, batchSize: explicitBatchSize ?? Self.defaultBatchSize(for: input), follow: follow,
                                     pollInterval: interval, shouldStop: { status?.tick(); return stop.isStopped }, onProblem: { problem in
                        spoolProblems += 1
                        Terminal.err("seatledger ingest: spool \(SpoolDirectory.printable(input)): \(problem)")
                    }) { batch in
                        summary.add(batch)
                        anchor?.advance(ledger)
                        progress.report(summary)
                        if let status, status.isEnabled { status.record(batch, head: try? ledger.headPosition()) }
                    }
                } catch let error as SpoolError {
                    throw InputError(message: error.message)
                }
                // With --follow a signal is the normal way to stop; without it, files left in the
                // spool were not read.
                if stop.isStopped, !follow, !(try spool.pendingFiles()).isEmpty { interrupted = true }
            } else {
                let handle: FileHandle
                let label: String
                if input == "-" {
                    handle = FileHandle.standardInput
                    label = "stdin"
                } else {
                    guard let opened = FileHandle(forReadingAtPath: input) else {
                        throw InputError(message: "cannot read \(input): \(FileChecks.reason(errno: errno))")
                    }
                    handle = opened
                    label = input
                }
                let reader = LineReader(handle: handle, maxLineLength: maxLine)
                // A signal ends the input where it is, even while stdin (or a FIFO) stays open and quiet.
                stop.onStop(reader.interrupter)
                let bytesBefore = bytesRead
                let batchSize = explicitBatchSize ?? Self.defaultBatchSize(for: input)
                let readAll = try ingestLines(reader, label: label, origin: input == "-" ? .stdin : .file,
                                              acceptsAPIResponses: arguments[apiResponses],
                                              into: ledger, batchSize: batchSize, stop: stop,
                                              bytesRead: { bytesRead = bytesBefore + $0 }) { batch in
                    summary.add(batch)
                    anchor?.advance(ledger)
                    progress.report(summary, bytesRead: bytesRead, totalBytes: totalBytes)
                }
                if !readAll { interrupted = true }
            }
            if stop.isStopped {
                if index < inputs.count - 1, !follow { interrupted = true }
                break
            }
        }
        // The trust configuration changed underneath the anchor: what was committed is kept, and
        // the command fails rather than carry the change into the anchor.
        if let failure = anchor?.failure { progress.finish(); throw failure }
        progress.report(summary, bytesRead: totalBytes == nil ? nil : bytesRead, totalBytes: totalBytes, force: true)
        progress.finish()
        status?.write()
        if arguments[Flag.json] {
            var json: [String: JSONValue] = ["appended": .count(summary.appended), "duplicates": .count(summary.duplicates),
                                             "quarantined": .count(summary.quarantined)]
            if summary.alreadyQuarantined > 0 { json["alreadyQuarantined"] = .count(summary.alreadyQuarantined) }
            if interrupted { json["interrupted"] = true }
            if spoolProblems > 0 { json["refusedUnread"] = .count(spoolProblems) }
            Terminal.json(.object(json))
        } else {
            Terminal.out("\(summary.appended) appended, \(summary.duplicates) duplicates, \(summary.quarantined) quarantined"
                         + Self.alreadyQuarantinedNote(summary))
            if summary.quarantined > 0 { Terminal.out("See `seatledger quarantine list` for what was refused and why.") }
            if interrupted { Terminal.out(interruptedNote) }
            if spoolProblems > 0 {
                Terminal.out("\(spoolProblems) spool entries refused unread (symbolic links, FIFOs, unreadable files: see stderr), moved to rejected/")
            }
        }
        if interrupted { return .interrupted }
        if spoolProblems > 0 { return .failure }
        return summary.quarantined > 0 ? .quarantined : .success
    }

    /// The size of `input` (`-`: stdin) when it is a regular file, else `nil` (a pipe, a terminal, a directory).
    static func regularFileSize(_ input: String) -> Int64? {
        var info = stat()
        let result = input == "-" ? fstat(STDIN_FILENO, &info) : stat(input, &info)
        guard result == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// " (N of them already in quarantine …)" when refused inputs repeated open quarantine items, else "".
    static func alreadyQuarantinedNote(_ summary: IngestSummary) -> String {
        guard summary.alreadyQuarantined > 0 else { return "" }
        let count = summary.alreadyQuarantined == summary.quarantined ? "all \(summary.quarantined)" : "\(summary.alreadyQuarantined)"
        return " (\(count) already in quarantine from an earlier run: the same bytes refused for the same reason are kept once)"
    }

    /// The line printed when a signal stopped a file ingest before it read all its input.
    static let interruptedNote = "interrupted: input not fully read; re-run to continue — already-committed batches are kept "
        + "and re-running skips them as duplicates"

    /// Reads lines in batches (blank lines skipped, over-long lines quarantined); verification of
    /// the next batch overlaps the commit of the current one. `bytesRead` gets the bytes of the
    /// input read up to the end of each batch once that batch has committed.
    ///
    /// Returns whether the input was read to its end (`false` when a signal stopped it first).
    @discardableResult
    static func ingestLines(_ reader: LineReader, label: String, origin: EventOrigin, acceptsAPIResponses: Bool,
                            into ledger: Ledger, batchSize: Int, stop: StopSignal,
                            bytesRead: (Int64) -> Void = { _ in }, onBatch: (IngestSummary) -> Void) throws -> Bool {
        var reachedEnd = false
        // Bytes read up to the end of each batch handed to the pipeline, reported when that batch
        // commits (the pipeline reads ahead of the commits).
        var consumed: Int64 = 0
        var batchEnds: [Int64] = []
        try ledger.ingestPipelined(next: {
            guard !stop.isStopped, !reachedEnd else { return nil }
            var batch: [InboundMessage] = []
            while batch.count < batchSize {
                guard let line = try reader.nextLine() else {
                    reachedEnd = !reader.wasInterrupted
                    break
                }
                let oversize = reader.lastLineOversize
                consumed += Int64(oversize?.length ?? line.count) + 1
                if oversize == nil, line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                let source = "\(label):\(reader.lineNumber)"
                // A CRLF line end's '\r' is not content: one trailing '\r' does not count toward the limit.
                let length = oversize?.length ?? (line.last == 0x0D ? line.count - 1 : line.count)
                var raw = line
                var rejection: IngestRejection?
                if length > reader.maxLineLength {
                    // Quarantined as its size, digest and first 64 KiB (the reader never held more of it).
                    raw = line.prefix(LineReader.keptPrefixBytes)
                    rejection = .tooLarge(line: true, length: length, limit: reader.maxLineLength,
                                          sha256: oversize?.sha256 ?? SHA256Digest.hex(line), kept: raw.count)
                }
                batch.append(InboundMessage(raw: raw, source: source, origin: origin, preRejection: rejection,
                                            acceptsAPIResponses: acceptsAPIResponses))
            }
            guard !batch.isEmpty else { return nil }
            batchEnds.append(consumed)
            return batch
        }, onBatch: { summary, _, _ in
            let end = batchEnds.isEmpty ? consumed : batchEnds.removeFirst()
            bytesRead(end)
            onBatch(summary)
        })
        return reachedEnd
    }

    /// Refuses a directory INPUT that is not marked as a spool (files in it would be moved): it must
    /// already have `done/` or `rejected/`, or the user must say `--spool`.
    static func requireSpoolIfDirectory(_ input: String, explicit: Bool) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory), isDirectory.boolValue, !explicit else { return }
        let spool = SpoolDirectory(url: URL(fileURLWithPath: input))
        let marked = [spool.doneURL, spool.rejectedURL, spool.processingURL].contains { FileManager.default.fileExists(atPath: $0.path) }
        guard marked else {
            throw UsageError(message: "\(input) is a directory without done/ or rejected/: ingesting it as a spool directory would "
                + "move every file in it (each taken as one message); pass --spool (or --follow) if that is what you want")
        }
    }

    /// The default `--max-message-bytes`: 4 MiB, several times the largest response Apple sends
    /// (a Get Notification History page or an all-statuses response is a few hundred KB).
    static let defaultMaxMessageBytes = 4 << 20

    /// The default batch of a regular file (a bulk load). A Redis stream's is
    /// `QueueIngestOptions.batchSize`, the same size.
    static let fileBatchSize = 1_024
    /// The default batch of stdin, a pipe or a spool directory, whose batches wait to fill.
    static let streamBatchSize = 256

    /// The batch size for `input` when `--batch-size` is not given: ``fileBatchSize`` for a
    /// regular file, ``streamBatchSize`` for `-` (stdin), a pipe, a device or a spool directory.
    static func defaultBatchSize(for input: String) -> Int {
        guard input != "-" else { return streamBatchSize }
        let type = (try? FileManager.default.attributesOfItem(atPath: input))?[.type] as? FileAttributeType
        return type == .typeRegular ? fileBatchSize : streamBatchSize
    }
}
