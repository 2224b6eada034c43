import Foundation
import JWSVerification
import LedgerEvents
import LedgerIntake
import RedisStreams
import SeatLedger

/// Options of a Redis Streams consumer.
public struct QueueIngestOptions: Sendable {
    /// Consumer group (one per ledger).
    public var group: String
    /// This consumer's name within the group.
    public var consumer: String
    /// Entries per `XREADGROUP` and per ledger transaction (at most: a read returns what is there).
    public var batchSize = 1_024
    /// How long a read blocks waiting for new entries.
    public var blockMilliseconds = 1000
    /// Entries idle longer than this in another consumer's pending list are claimed (`XAUTOCLAIM`).
    public var minIdleMilliseconds = 30_000
    /// Stop when a read finds nothing new (tests, one-shot drains).
    public var untilEmpty = false
    /// The stream field holding the message body.
    public var field = QueueIngestor.bodyField
    /// A longer entry value is never read whole: a body is quarantined as `message_too_large` with
    /// its size, SHA-256 (read from the server in 1 MiB pieces) and first 64 KiB, as a file ingest
    /// quarantines a long line, and the consumer goes on. `nil`: no limit.
    public var maxMessageBytes: Int? = 4 << 20
    /// Longest wait between reconnection attempts.
    public var maxBackoffSeconds = 5.0
    /// Give up (throw ``QueueUnreachable``) after this many consecutive failed attempts to reach
    /// Redis; `nil` retries forever (a long-running consumer rides out Redis restarts).
    public var maxConnectionAttempts: Int?
    /// Whether `apiResponse` envelopes from the queue are applied (the operator allowing them for
    /// this source, `ingest --api-responses`); by default only signed notifications are, and an
    /// envelope is quarantined as `untrusted_api_response`.
    public var acceptsAPIResponses = false

    /// Options for `group` / `consumer`.
    public init(group: String, consumer: String) {
        self.group = group
        self.consumer = consumer
    }
}

/// Running totals of a consumer, for progress lines and `--json`.
public struct QueueIngestStats: Sendable {
    /// Ledger outcomes of every committed batch: appended, duplicates, quarantined.
    public var summary = IngestSummary()
    /// Entries acknowledged.
    public var acknowledged = 0
    /// Entries recovered from this consumer's pending list or claimed from dead consumers.
    public var recovered = 0
    /// Non-empty batches committed and acknowledged.
    public var batches = 0
    /// Times a lost database or Redis connection sent the consumer into reconnecting (each failed Redis attempt counts).
    public var reconnects = 0
    /// The group's pending count at the last check.
    public var pending: Int64 = 0
    /// Entries not yet delivered to the group (Redis 7), at the last check.
    public var lag: Int64?
    /// The last stream id processed.
    public var lastId: String?
}

/// Redis could not be reached in ``QueueIngestOptions/maxConnectionAttempts`` consecutive attempts.
public struct QueueUnreachable: Error, Sendable, CustomStringConvertible {
    /// The stream that could not be reached.
    public let url: RedisStreamURL
    /// How many consecutive attempts failed.
    public let attempts: Int
    /// The last attempt's error.
    public let lastError: RedisError

    /// `cannot reach <url> after <n> attempts: <last error message>`.
    public var description: String { "cannot reach \(url) after \(attempts) attempts: \(lastError.message)" }
}

/// Consumes a Redis stream into the ledger: at-least-once from the queue, exactly-once in the ledger.
///
/// `XACK` happens only after the batch's transaction commits; a crash between the two redelivers
/// the batch, which the ledger recognises as duplicates. On start (and after a reconnect) the
/// consumer re-reads its own pending entries and claims entries idle too long in dead consumers.
/// A message that fails verification or parsing is quarantined with its stream id, then acknowledged.
public final class QueueIngestor {
    /// The documented stream field that carries a message body (`{"signedPayload": …}` or an `apiResponse` envelope).
    public static let bodyField = "body"

    private let ledger: Ledger
    private let url: RedisStreamURL
    private let options: QueueIngestOptions
    private var client: RedisStreamClient?
    private(set) var stats = QueueIngestStats()
    /// Called after each failed attempt to reach Redis with the error and the number of
    /// consecutive failures so far (e.g. to say so on stderr instead of retrying silently).
    public var onConnectionFailure: ((RedisError, Int) -> Void)?

    /// A consumer of `url` into `ledger`.
    public init(ledger: Ledger, url: RedisStreamURL, options: QueueIngestOptions) {
        self.ledger = ledger
        self.url = url
        self.options = options
    }

    /// Runs until `shouldStop()` (checked between batches) or, with `untilEmpty`, until nothing is left.
    public func run(shouldStop: () -> Bool = { false }, onBatch: (QueueIngestStats) -> Void = { _ in }) throws -> QueueIngestStats {
        var backoff = 0.1
        var failures = 0
        var recovered = false
        var lastClaim = Date()
        while !shouldStop() {
            do {
                let client = try connectedClient()
                if !recovered {
                    try recover(client, shouldStop: shouldStop, onBatch: onBatch)
                    recovered = true
                    lastClaim = Date()
                }
                // Steady state, pipelined: the next batches are read and verified while the current
                // one commits; each batch is acknowledged only after its own commit.
                var batchIds: [[String]] = []
                var drained = false
                try ledger.ingestPipelined(next: {
                    while !shouldStop() {
                        // While a batch waits for its commit, never block: an idle stream must not hold
                        // an already-read batch back (it commits as soon as this returns). Several
                        // batches can be read ahead, so any of them may be the one waiting.
                        let awaitingCommit = batchIds.contains { !$0.isEmpty }
                        // Entries a dead consumer left pending are claimed on a timer, also while traffic
                        // keeps every read busy (not only when a read comes back empty).
                        if Date().timeIntervalSince(lastClaim) * 1000 > Double(options.minIdleMilliseconds) {
                            // Not the entries this consumer read ahead and has yet to commit: they are
                            // pending too, and idle while they wait, but they are in flight here.
                            try claimIdle(client, excluding: Set(batchIds.joined()), shouldStop: shouldStop, onBatch: onBatch)
                            lastClaim = Date()
                        }
                        let entries = try client.read(group: options.group, consumer: options.consumer, count: options.batchSize,
                                                      blockMilliseconds: awaitingCommit ? nil : options.blockMilliseconds,
                                                      shouldStop: shouldStop)
                        backoff = 0.1
                        failures = 0
                        if entries.isEmpty, awaitingCommit {
                            batchIds.append([])
                            return []
                        }
                        if entries.isEmpty {
                            stats.pending = try client.pendingCount(group: options.group)
                            stats.lag = try client.lag(group: options.group)
                            // Drained means nothing new and nothing pending: entries another (maybe dead)
                            // consumer holds are waited for, and claimed once idle for --min-idle-ms.
                            if options.untilEmpty, stats.pending == 0 { drained = true; return nil }
                            if options.untilEmpty { Thread.sleep(forTimeInterval: min(0.2, Double(options.minIdleMilliseconds) / 1000)) }
                            continue
                        }
                        batchIds.append(entries.map(\.id))
                        stats.lastId = entries.last?.id
                        return try entries.map { try message(for: $0, client: client) }
                    }
                    return nil
                }, onBatch: { summary, batch, _ in
                    let ids = batchIds.removeFirst()
                    guard !batch.isEmpty else { return }
                    stats.summary.add(summary)
                    stats.acknowledged += Int(try client.ack(group: options.group, ids: ids))
                    stats.batches += 1
                    onBatch(stats)
                })
                if drained { break }
            } catch where ledger.isConnectionLoss(error) {
                // The database restarted or is unreachable: the batch in flight was not committed
                // and not acknowledged. Reconnect with backoff, then re-read our pending entries
                // (the ledger's idempotency makes any re-run safe).
                recovered = false
                stats.reconnects += 1
                while !shouldStop() {
                    let jitter = Double.random(in: 0...(backoff / 2))
                    Thread.sleep(forTimeInterval: backoff + jitter)
                    backoff = min(backoff * 2, options.maxBackoffSeconds)
                    if (try? ledger.reconnect()) != nil { break }
                }
            } catch let error as RedisError where error.isConnectionError || error.isNoGroup || error.isTransient {
                // Redis restarted or unreachable (or the group vanished with the data, or the server is
                // still loading its dataset): reconnect with backoff.
                client = nil
                recovered = false
                stats.reconnects += 1
                failures += 1
                onConnectionFailure?(error, failures)
                if let limit = options.maxConnectionAttempts, failures >= limit {
                    throw QueueUnreachable(url: url, attempts: failures, lastError: error)
                }
                let jitter = Double.random(in: 0...(backoff / 2))
                Thread.sleep(forTimeInterval: backoff + jitter)
                backoff = min(backoff * 2, options.maxBackoffSeconds)
            }
        }
        if let client {
            stats.pending = (try? client.pendingCount(group: options.group)) ?? stats.pending
            stats.lag = (try? client.lag(group: options.group)) ?? stats.lag
        }
        return stats
    }

    private func connectedClient() throws -> RedisStreamClient {
        if let client { return client }
        let fresh = try RedisStreamClient(url: url, longestBlockMilliseconds: options.blockMilliseconds)
        fresh.valueLimit = options.maxMessageBytes
        try fresh.ensureGroup(options.group)
        client = fresh
        return fresh
    }

    /// Re-reads this consumer's own pending entries, then claims idle ones from dead consumers.
    private func recover(_ client: RedisStreamClient, shouldStop: () -> Bool, onBatch: (QueueIngestStats) -> Void) throws {
        while !shouldStop() {
            let pending = try client.read(group: options.group, consumer: options.consumer, count: options.batchSize,
                                          blockMilliseconds: nil, from: "0")
            if pending.isEmpty { break }
            stats.recovered += pending.count
            try process(pending, client: client, onBatch: onBatch)
        }
        try claimIdle(client, shouldStop: shouldStop, onBatch: onBatch)
    }

    /// Claims and processes entries idle for `--min-idle-ms` (left by a consumer that died), but
    /// those in `excluding`: this consumer's own read-ahead entries awaiting their commit, which
    /// processing here would commit twice (counted as duplicates and as recovered).
    private func claimIdle(_ client: RedisStreamClient, excluding inFlight: Set<String> = [], shouldStop: () -> Bool,
                           onBatch: (QueueIngestStats) -> Void) throws {
        var start = "0-0"
        repeat {
            let (next, claimed) = try client.autoclaim(group: options.group, consumer: options.consumer,
                                                       minIdleMilliseconds: options.minIdleMilliseconds, start: start,
                                                       count: options.batchSize)
            let entries = inFlight.isEmpty ? claimed : claimed.filter { !inFlight.contains($0.id) }
            if !entries.isEmpty {
                stats.recovered += entries.count
                try process(entries, client: client, onBatch: onBatch)
            }
            start = next
        } while start != "0-0" && !shouldStop()
    }

    /// The inbound message of a stream entry (quarantined as `missing_body_field` without a body,
    /// as `message_too_large` with a body over the limit).
    private func message(for entry: StreamEntry, client: RedisStreamClient) throws -> InboundMessage {
        let source = "redis:\(url.key):\(entry.id)"
        if let oversize = entry.oversized[options.field] {
            // Hashed from the server's staged copy, a piece at a time: never the whole value in memory.
            let hasher = SHA256Hasher()
            var offset = 0
            while offset < oversize.length {
                let piece = try client.stagedRange(oversize.stagedKey, from: offset, count: 1 << 20)
                guard !piece.isEmpty else {
                    // The staged copy expired or was deleted: reconnect and re-read the entry (staged again).
                    throw RedisError(isConnectionError: true, message: "the staged copy of entry \(entry.id) ended at \(offset) of \(oversize.length) bytes",
                                     command: "GETRANGE")
                }
                hasher.update(piece)
                offset += piece.count
            }
            try client.deleteStaged(oversize.stagedKey)
            return InboundMessage(raw: oversize.prefix, source: source, origin: .queue, preRejection: .tooLarge(
                line: false, length: oversize.length, limit: options.maxMessageBytes ?? oversize.length, sha256: SHA256Digest.lowercaseHex(hasher.finalize()),
                kept: oversize.prefix.count))
        }
        guard let body = entry.fields[options.field] else {
            let fields = (Array(entry.fields.keys) + Array(entry.oversized.keys)).sorted().joined(separator: ", ")
            // The entry as it was, bytes exact (values are binary), under its stream id: two such
            // entries are two quarantine items, never one (the quarantine dedups on the raw bytes).
            var raw = Data("redis entry \(entry.id)\n".utf8)
            for (name, value) in entry.fields.sorted(by: { $0.key < $1.key }) {
                raw.append(contentsOf: Array("\(name)=".utf8))
                raw.append(value)
                raw.append(0x0A)
            }
            for (name, value) in entry.oversized.sorted(by: { $0.key < $1.key }) {
                raw.append(contentsOf: Array("\(name)=(\(value.length) bytes, not read)\n".utf8))
                try? client.deleteStaged(value.stagedKey)
            }
            return InboundMessage(raw: raw, source: source, origin: .queue, preRejection: IngestRejection(
                code: "missing_body_field", reason: "stream entry has no \"\(options.field)\" field (fields: \(fields.isEmpty ? "none" : fields))"))
        }
        return InboundMessage(raw: body, source: source, origin: .queue, acceptsAPIResponses: options.acceptsAPIResponses)
    }

    /// Appends a batch, then acknowledges it.
    private func process(_ entries: [StreamEntry], client: RedisStreamClient, onBatch: (QueueIngestStats) -> Void) throws {
        let messages = try entries.map { try message(for: $0, client: client) }
        let (summary, _) = try ledger.ingestBatch(messages)
        stats.summary.add(summary)
        stats.acknowledged += Int(try client.ack(group: options.group, ids: entries.map(\.id)))
        stats.batches += 1
        stats.lastId = entries.last?.id
        onBatch(stats)
    }
}
