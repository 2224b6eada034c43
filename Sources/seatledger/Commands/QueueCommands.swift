import AppStoreModels
import Foundation
import LedgerIntake
import RedisStreams
import SeatLedger
import SeatLedgerRedis

/// `seatledger ingest --from redis://…`: the Redis Streams consumer.
enum QueueIngestCommand {
    static func run(from: String, maxMessageBytes: Int, _ arguments: Arguments) throws -> Terminal.ExitCode {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "give either --from or INPUT files, not both") }
        var url: RedisStreamURL
        do { url = try RedisStreamURL(from) } catch { throw UsageError(message: error.message) }
        url = try RedisPasswordSource.apply(to: url, arguments)
        let ledger = try LedgerLocation(arguments).open()
        try PinnedRoots.require(arguments, ledger: ledger, doing: "ingest")
        let stop = StopSignal()
        let anchor = try AnchorOption.checked(arguments, ledger: ledger, stop: stop)
        var options = QueueIngestOptions(group: try arguments[IngestCommand.consumerGroup] ?? "seatledger",
                                         consumer: try arguments[IngestCommand.consumer] ?? "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)")
        options.batchSize = try arguments[IngestCommand.batchSize] ?? options.batchSize
        options.blockMilliseconds = try arguments[IngestCommand.blockMilliseconds]
        options.minIdleMilliseconds = try arguments[IngestCommand.minIdleMilliseconds]
        options.untilEmpty = arguments[IngestCommand.untilEmpty]
        options.acceptsAPIResponses = arguments[IngestCommand.apiResponses]
        options.maxMessageBytes = maxMessageBytes
        // A one-shot drain gives up on an unreachable Redis; a long-running consumer keeps retrying.
        if options.untilEmpty { options.maxConnectionAttempts = untilEmptyConnectionAttempts }
        let showProgress = (arguments[Flag.progress] || Terminal.stderrIsTTY) && !Terminal.isQuiet
        var lastPrint = Date.distantPast
        let shown = url.description  // credentials show as ***
        let status = try ServiceStatus(source: shown, arguments: arguments)
        if status.isEnabled { status.noteHead(try ledger.headPosition()) }
        let ingestor = QueueIngestor(ledger: ledger, url: url, options: options)
        let maxAttempts = options.maxConnectionAttempts
        ingestor.onConnectionFailure = { error, attempt in
            let limit = maxAttempts.map { " of \($0)" } ?? ""
            let next = maxAttempts.map { attempt >= $0 ? "giving up" : "retrying" } ?? "retrying"
            let message = "cannot reach Redis (attempt \(attempt)\(limit)): \(scrub(error.message, from: from))"
            status.recordError(message)
            Terminal.note("ingest \(shown): \(message); \(next)")   // progress: --quiet silences it
        }
        let stats: QueueIngestStats
        do {
            stats = try ingestor.run(shouldStop: { status.tick(); return stop.isStopped }) { stats in
                anchor?.advance(ledger)
                if status.isEnabled { status.record(stats, head: try? ledger.headPosition()) }
                guard showProgress, !Terminal.stopping.load(ordering: .relaxed), Date().timeIntervalSince(lastPrint) >= 0.5 else { return }
                lastPrint = Date()
                Terminal.progress("ingest \(shown): \(stats.summary.appended) appended, \(stats.summary.duplicates) duplicates, \(stats.summary.quarantined) quarantined, \(stats.acknowledged) acked, last id \(stats.lastId ?? "-")")
            }
        } catch let failure as QueueUnreachable {
            // Thrown, not printed here: with --json it is then the one error object on stdout.
            throw QueueGaveUp(message: "cannot reach \(shown) after \(failure.attempts) attempts (--until-empty): "
                              + scrub(failure.lastError.message, from: from))
        }
        Terminal.endProgressLine()
        // Committed batches are acknowledged and kept; the run fails instead of moving the anchor past the change.
        if let failure = anchor?.failure { throw failure }
        status.record(stats, head: nil)
        status.write()
        if arguments[Flag.json] {
            var json: [String: JSONValue] = [
                "appended": .count(stats.summary.appended), "duplicates": .count(stats.summary.duplicates),
                "quarantined": .count(stats.summary.quarantined), "acknowledged": .count(stats.acknowledged),
                "recovered": .count(stats.recovered), "batches": .count(stats.batches), "reconnects": .count(stats.reconnects),
                "pending": .int(stats.pending), "lag": .optional(stats.lag), "lastId": .optional(stats.lastId),
            ]
            // As for a file ingest: present only when some refused inputs were already in quarantine.
            if stats.summary.alreadyQuarantined > 0 { json["alreadyQuarantined"] = .count(stats.summary.alreadyQuarantined) }
            Terminal.json(.object(json))
        } else {
            Terminal.out("\(stats.summary.appended) appended, \(stats.summary.duplicates) duplicates, \(stats.summary.quarantined) quarantined\(IngestCommand.alreadyQuarantinedNote(stats.summary)); \(stats.acknowledged) acknowledged, \(stats.pending) pending, lag \(stats.lag.map(String.init) ?? "?")")
        }
        return stats.summary.quarantined > 0 ? .quarantined : .success
    }
}

extension QueueIngestCommand {
    /// With `--until-empty`, consecutive failed connection attempts before giving up (exit 2).
    static let untilEmptyConnectionAttempts = 5

    /// `message` with the URL's credentials, if any, replaced by `***`.
    static func scrub(_ message: String, from text: String) -> String {
        guard let credentials = credentials(in: text) else { return message }
        return message.replacingOccurrences(of: credentials, with: "***")
    }

    /// The user-info part of `redis://user-info@host…`, if any, by the URL parser's own rule.
    private static func credentials(in text: String) -> String? {
        guard let scheme = text.range(of: "://"), let userInfo = RedisStreamURL.userInformation(in: text[scheme.upperBound...]) else { return nil }
        return userInfo.isEmpty ? nil : String(userInfo)
    }
}

/// `seatledger enqueue`: push message bodies onto a Redis stream.
enum EnqueueCommand: Command {
    static let name = "enqueue"
    static let summary = "push notification bodies / API envelopes onto a Redis stream"
    static let to = Option<String?>("to", value: "URL", help: "the stream (redis://[user]:password@host:port/key to AUTH)")
    static let field = Option<String?>("field", value: "F", help: "the entry field (default body, what `ingest --from` reads)")
    static let options: [any DeclaredOption] = [
        to,
        RedisPasswordSource.option.help("""

            AUTH with the password in FILE (first line) instead of one in the URL,
            which `ps` would show; $SEATLEDGER_REDIS_PASSWORD does the same
            """),
        field, Flag.json,
    ]
    static let examples = ["seatledger enqueue --to redis://127.0.0.1:6379/appstore-notifications notifications.ndjson"]
    static let help = """
    Usage: seatledger enqueue --to redis://host:port/stream-key [FILE|-] [--field body] [--json]

    Adds one stream entry per non-blank NDJSON line (XADD key * body <line>), the line exactly as
    given: `{"signedPayload": "…"}` as Apple posted it, or an `{"apiResponse": …}` envelope. For
    tests, demos and replaying dead letters (e.g. `seatledger quarantine show ID --raw`).

    Options:
    \(OptionHelp.lines(options))
    """

    static func maxPositionals(_ positionals: [String]) -> Int? { 1 }

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        var url: RedisStreamURL
        do { url = try RedisStreamURL(try arguments.required(to)) } catch let error as RedisError { throw UsageError(message: error.message) }
        url = try RedisPasswordSource.apply(to: url, arguments)
        guard arguments.positionals.count <= 1 else { throw UsageError(message: "enqueue takes one FILE (or - for stdin)") }
        let input = arguments.positionals.first ?? "-"
        let handle: FileHandle
        if input == "-" { handle = .standardInput } else {
            try FileChecks.requireReadable(input)
            guard let opened = FileHandle(forReadingAtPath: input) else {
                throw InputError(message: "cannot read \(input): \(FileChecks.reason(errno: errno))")
            }
            handle = opened
        }
        let client = try RedisStreamClient(url: url)
        let reader = LineReader(handle: handle, maxLineLength: Int.max)
        let field = try arguments[Self.field] ?? QueueIngestor.bodyField
        var count = 0
        var lastId = ""
        while let line = try reader.nextLine() {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            lastId = try client.add(field: field, value: line)
            count += 1
        }
        if arguments[Flag.json] { Terminal.json(["enqueued": .count(count), "lastId": .string(lastId)]) } else {
            Terminal.out("Enqueued \(count) message(s) onto \(url) (last id \(lastId.isEmpty ? "-" : lastId)).")
        }
        return .success
    }
}

/// Where a Redis password comes from when it should not be on the command line: the first line
/// of `--redis-password-file FILE`, else `$SEATLEDGER_REDIS_PASSWORD`, else the URL's own.
enum RedisPasswordSource {
    /// `--redis-password-file FILE`.
    static let option = Option<String?>("redis-password-file", value: "FILE", help: """

        AUTH with the password in FILE (its first line) rather than in the
        URL, where `ps` shows it; $SEATLEDGER_REDIS_PASSWORD does the same
        """)

    /// `url` with the password from the file or the environment, when one is given.
    static func apply(to url: RedisStreamURL, _ arguments: Arguments,
                      environment: [String: String] = ProcessInfo.processInfo.environment) throws -> RedisStreamURL {
        if let file = try arguments[option] {
            try FileChecks.requireReadable(file)
            guard let data = FileManager.default.contents(atPath: file) else {
                throw InputError(message: "cannot read --redis-password-file \(file): \(FileChecks.reason(errno: errno))")
            }
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first
                .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) } ?? ""
            guard !line.isEmpty else { throw InputError(message: "--redis-password-file \(file) is empty") }
            return url.withPassword(line)
        }
        if let password = environment["SEATLEDGER_REDIS_PASSWORD"], !password.isEmpty, url.password == nil {
            return url.withPassword(password)
        }
        return url
    }
}

/// `ingest --from redis://… --until-empty` gave up reaching Redis: exit 2, the reason named (the
/// URL without its password).
struct QueueGaveUp: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
