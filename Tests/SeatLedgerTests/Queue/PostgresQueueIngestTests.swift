import AppStoreModels
import Foundation
import GroupSimulator
import PostgresClient
import PostgresTestSupport
import PostgresStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue #9's multi-node ingest: several `seatledger ingest --from redis://…` processes, one Redis
/// stream, one PostgreSQL ledger. Everything goes through the built binary, a real redis-server and
/// a throwaway PostgreSQL cluster; the outcome is compared with a single-process SQLite run of the
/// same stream.
@Suite("PostgreSQL ledger fed by Redis Streams consumers", .serialized)
struct PostgresQueueIngestTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    /// Far enough ahead that every simulated event is in the past and recorded.
    static let horizon = "2030-01-01T00:00:00Z"

    /// The stream every test enqueues, and what one SQLite `seatledger ingest` made of it. Only
    /// values: the SQLite ledger's directory is gone once this is built.
    struct Reference: Sendable {
        /// Stream entries in order: every lifecycle's groups, then some lines again (queue-level duplicates).
        let lines: [String]
        /// That ingest's `appended` (= distinct events) and `duplicates`.
        let appended: Int64
        let duplicates: Int64
        /// `groups --json` of the SQLite ledger at ``horizon``.
        let groups: String
        /// `group show KEY --json` at ``horizon`` for a few keys of different lifecycles.
        let groupShows: [String: String]

        init() throws {
            // Every built-in lifecycle (purchases, renewals, Apple-hosted members, developer claims,
            // refunds, grace, billing retry, organisations…), several groups each, own identifiers.
            let simulator = try GroupSimulator(pkiDirectory: TestPaths.pki)
            var generated: [String] = []
            for scenario in BuiltInLifecycles.all {
                _ = try simulator.stream(scenario, options: BuiltInLifecycles.options(for: scenario, seed: 19), groups: 8) {
                    generated.append($0)
                }
            }
            // Apple retries: every 6th line delivered again, at the end of the stream.
            lines = generated + generated.enumerated().filter { $0.offset % 6 == 0 }.map(\.element)

            let directory = try TemporaryDirectory(label: "pgqueue-ref")
            let file = try directory.writeLines(lines, to: "stream.ndjson")
            let sqlite = directory.path("reference.sqlite")
            try CLI.initLedger(db: sqlite)
            let ingest = try CLI.run(["ingest", "--api-responses", "--db", sqlite, file.path, "--json"])
            guard ingest.exitCode == 0 else { throw TestSupportError("reference ingest failed: \(ingest)") }
            let stats = try ingest.json()
            appended = stats["appended"]?.int64Value ?? -1
            duplicates = stats["duplicates"]?.int64Value ?? -1
            let groupsRun = try CLI.run(["groups", "--db", sqlite, "--json"] + PostgresQueueIngestTests.atHorizon)
            guard groupsRun.exitCode == 0 else { throw TestSupportError("reference groups failed: \(groupsRun)") }
            groups = groupsRun.stdout
            let keys = try groupsRun.json().arrayValue?.compactMap { $0["groupKey"]?.stringValue } ?? []
            guard keys.count > 100 else { throw TestSupportError("expected a few hundred groups, got \(keys.count)") }
            var shows: [String: String] = [:]
            for key in (0..<5).map({ keys[$0 * keys.count / 5] }) {
                let show = try CLI.run(["group", "show", key, "--json", "--db", sqlite] + PostgresQueueIngestTests.atHorizon)
                guard show.exitCode == 0 else { throw TestSupportError("reference group show \(key) failed: \(show)") }
                shows[key] = show.stdout
            }
            groupShows = shows
        }
    }

    /// `--as-of` and `--known-at` at ``horizon``.
    static let atHorizon = ["--as-of", horizon, "--known-at", horizon]

    /// Built once per test process (the first test that needs it pays ~2 s).
    private static let shared: Result<Reference, any Error> = Result { try Reference() }
    static func reference() throws -> Reference { try shared.get() }

    // MARK: Helpers

    /// A throwaway cluster with a ledger created by `seatledger init --db <url>`.
    static func postgresLedger() throws -> (cluster: PostgresTestCluster, url: String) {
        let cluster = try PostgresTestCluster()
        try CLI.initLedger(db: cluster.url())
        return (cluster, cluster.url())
    }

    /// `seatledger enqueue` of the lines (one XADD per line); returns the last entry's stream id.
    @discardableResult
    static func enqueue(_ lines: [String], to url: String, in directory: TemporaryDirectory) throws -> String {
        let file = try directory.writeLines(lines, to: "enqueue-\(UUID().uuidString).ndjson")
        let result = try CLI.run(["enqueue", "--to", url, file.path, "--json"])
        guard result.exitCode == 0, try result.json()["enqueued"]?.int64Value == Int64(lines.count),
              let lastId = try result.json()["lastId"]?.stringValue else {
            throw TestSupportError("enqueue failed: \(result)")
        }
        return lastId
    }

    /// Events, lowest and highest position and distinct event ids in the PostgreSQL ledger; `nil` while unreachable.
    static func positions(_ url: String) -> (count: Int64, min: Int64, max: Int64, distinctIds: Int64)? {
        guard let connection = try? PostgresConnection(url: url, connectTimeoutSeconds: 2),
              let row = try? connection.query("SELECT count(*), coalesce(min(position), 0), coalesce(max(position), 0), count(DISTINCT event_id) FROM events").first,
              let count = try? row.int64(0), let low = try? row.int64(1), let high = try? row.int64(2), let ids = try? row.int64(3)
        else { return nil }
        return (count, low, high, ids)
    }

    static func eventCount(_ url: String) -> Int64? { positions(url)?.count }

    /// Polls `condition` every 20 ms until it holds or `seconds` pass; returns whether it held.
    @discardableResult
    static func poll(seconds: TimeInterval, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }

    /// Entries delivered to `consumer` and not acknowledged (extended XPENDING: 4 lines per entry).
    static func pendingCount(_ redis: RedisServer, consumer: String, stream: String = "notes", group: String = "sl") throws -> Int {
        let output = try redis.redisCLI(["XPENDING", stream, group, "-", "+", "1000000", consumer])
        return output.split(separator: "\n").count / 4
    }

    /// The consumer's arguments (one group `sl` on stream `notes`).
    static func consumer(_ name: String, redis: RedisServer, db: String, untilEmpty: Bool = true, batchSize: Int = 25) -> [String] {
        ["ingest", "--api-responses", "--db", db, "--from", "\(redis.url)/notes", "--consumer-group", "sl", "--consumer", name,
         "--batch-size", String(batchSize), "--block-ms", "200", "--json"] + (untilEmpty ? ["--until-empty"] : [])
    }

    /// What every test ends with: the ledger holds each distinct event exactly once at positions
    /// 1…N, nothing is pending, `verify` passes, and the projections equal the SQLite reference's.
    static func expectComplete(_ url: String, _ redis: RedisServer, _ reference: Reference,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let stored = try #require(positions(url), sourceLocation: sourceLocation)
        #expect(stored.count == reference.appended, "each distinct event stored exactly once", sourceLocation: sourceLocation)
        #expect(stored.distinctIds == stored.count, sourceLocation: sourceLocation)
        #expect(stored.min == 1 && stored.max == stored.count, "positions 1…N without gaps: \(stored)", sourceLocation: sourceLocation)
        let pending = try redis.redisCLI(["XPENDING", "notes", "sl"])
        #expect(pending.split(separator: "\n").first == "0", "nothing pending: \(pending)", sourceLocation: sourceLocation)
        let verify = try CLI.run(["verify", "--db", url])
        #expect(verify.exitCode == 0, "verify: chain intact, projections match a recomputation: \(verify)", sourceLocation: sourceLocation)
        let groups = try CLI.run(["groups", "--db", url, "--json"] + atHorizon)
        #expect(groups.exitCode == 0, "\(groups)", sourceLocation: sourceLocation)
        #expect(groups.stdout == reference.groups, "groups --json equal to the single-process SQLite ledger's", sourceLocation: sourceLocation)
    }

    // MARK: Tests

    @Test("several ingest processes, one Redis stream, one PostgreSQL ledger: each message once, same projections as one SQLite process")
    func threeNodes() throws {
        let reference = try Self.reference()
        let scratch = try TemporaryDirectory(label: "pgqueue")
        let redis = try RedisServer()
        let (cluster, url) = try Self.postgresLedger()
        defer { withExtendedLifetime(cluster) {} }  // stopped and removed when the test ends, not after its last use
        try Self.enqueue(reference.lines, to: "\(redis.url)/notes", in: scratch)

        let nodes = try ["node-1", "node-2", "node-3"].map { try CLI.start(Self.consumer($0, redis: redis, db: url)) }
        defer { for node in nodes where node.isRunning { node.kill() } }
        let results = try nodes.map { try $0.wait(timeout: 120) }
        for result in results { #expect(result.exitCode == 0, "\(result)") }
        let stats = try results.map { try $0.json() }
        func total(_ field: String) -> Int64 { stats.reduce(0) { $0 + ($1[field]?.int64Value ?? 0) } }
        #expect(total("appended") == reference.appended, "each distinct event appended by exactly one node")
        #expect(total("duplicates") == reference.duplicates, "retries (and the simulator's own retried claims) counted as duplicates")
        #expect(total("quarantined") == 0)
        #expect(total("acknowledged") == Int64(reference.lines.count), "every entry acknowledged exactly once")
        for (index, node) in stats.enumerated() {
            #expect((node["acknowledged"]?.int64Value ?? 0) > 0, "node-\(index + 1) did some of the work: \(node.canonicalString())")
        }
        try Self.expectComplete(url, redis, reference)
        #expect(reference.groupShows.count == 5)
        for (key, sqlite) in reference.groupShows.sorted(by: { $0.key < $1.key }) {
            let postgres = try CLI.run(["group", "show", key, "--json", "--db", url] + Self.atHorizon)
            #expect(postgres.exitCode == 0, "\(postgres)")
            #expect(postgres.stdout == sqlite, "group show \(key) equal on both engines")
        }
    }

    @Test("a worker killed with kill -9 mid-batch: a draining survivor claims its entries once idle; every message exactly once in PostgreSQL, nothing pending")
    func killedWorker() throws {
        let reference = try Self.reference()
        let scratch = try TemporaryDirectory(label: "pgqueue")
        let redis = try RedisServer()
        let (cluster, url) = try Self.postgresLedger()
        defer { withExtendedLifetime(cluster) {} }
        try Self.enqueue(reference.lines, to: "\(redis.url)/notes", in: scratch)

        let victim = try CLI.start(Self.consumer("node-1", redis: redis, db: url))
        // The survivor drains (--until-empty): it finishes only when nothing is pending, so it claims
        // what the dead node held once idle for --min-idle-ms (1 s here instead of the default 30 s).
        let survivor = try CLI.start(Self.consumer("node-2", redis: redis, db: url) + ["--min-idle-ms", "1000"])
        defer { for node in [victim, survivor] where node.isRunning { node.kill() } }
        Self.poll(seconds: 60) { (Self.eventCount(url) ?? 0) >= 200 }
        victim.kill(SIGKILL)
        let killed = try victim.wait(timeout: 10)
        #expect(killed.terminatedBySignal && killed.exitCode == SIGKILL, "\(killed)")
        let atKill = Self.eventCount(url) ?? 0
        #expect(atKill >= 200 && atKill < reference.appended, "the kill lands mid-run (\(atKill) of \(reference.appended) stored)")
        // node-1 reads the next batches before batch k commits, so it always dies holding unacknowledged entries.
        let orphaned = try Self.pendingCount(redis, consumer: "node-1")
        #expect(orphaned > 0, "node-1 died with entries delivered but not acknowledged")

        let survivorResult = try survivor.wait(timeout: 120)
        #expect(survivorResult.exitCode == 0, "\(survivorResult)")
        let survivorStats = try survivorResult.json()
        #expect((survivorStats["recovered"]?.int64Value ?? 0) >= Int64(orphaned), "the survivor claimed node-1's entries: \(survivorStats)")
        #expect(survivorStats["pending"]?.int64Value == 0)
        #expect(try Self.pendingCount(redis, consumer: "node-1") == 0, "nothing is left with the dead node")
        try Self.expectComplete(url, redis, reference)
    }

    /// A lost PostgreSQL connection is treated like a lost Redis connection (QueueIngestor): the
    /// batch in flight is neither committed nor acknowledged; the consumer reconnects with backoff,
    /// re-reads its own pending entries and carries on; ids make the re-run safe. Both moments are
    /// covered: the restart landing while the consumer commits batch after batch, and while it
    /// idles on an empty stream (it notices at its next commit).
    @Test("PostgreSQL restarted mid-run (busy, then idle): the consumer reconnects and finishes; nothing lost or doubled")
    func postgresRestart() throws {
        let reference = try Self.reference()
        let scratch = try TemporaryDirectory(label: "pgqueue")
        let redis = try RedisServer()
        let (cluster, url) = try Self.postgresLedger()
        defer { withExtendedLifetime(cluster) {} }
        // Three parts: one before the first restart, one after it, one after the second.
        let cuts = [0, reference.lines.count * 2 / 5, reference.lines.count * 7 / 10, reference.lines.count]
        let parts = (0..<3).map { Array(reference.lines[cuts[$0]..<cuts[$0 + 1]]) }
        try Self.enqueue(parts[0], to: "\(redis.url)/notes", in: scratch)
        let consumer = try CLI.start(Self.consumer("node-1", redis: redis, db: url, untilEmpty: false, batchSize: 20))
        defer { if consumer.isRunning { consumer.kill() } }

        // 1. Restart while the consumer is busy committing.
        #expect(Self.poll(seconds: 60) { (Self.eventCount(url) ?? 0) >= 150 }, "the consumer got going")
        let beforeRestart = Self.eventCount(url) ?? 0
        try cluster.restart()
        #expect(beforeRestart < Int64(parts[0].count), "the restart landed mid-stream (\(beforeRestart) stored before it)")
        let lastOfSecondPart = try Self.enqueue(parts[1], to: "\(redis.url)/notes", in: scratch)
        #expect(Self.poll(seconds: 60) {
                    (try? Self.groupInfo(redis)).map { $0["pending"] == "0" && $0["last-delivered-id"] == lastOfSecondPart } ?? false
                },
                "the consumer reconnected and drained the first two parts")
        #expect(consumer.isRunning, "a database restart does not end the consumer")

        // 2. Restart while it idles on a drained stream; more arrives afterwards.
        try cluster.restart()
        let lastOfThirdPart = try Self.enqueue(parts[2], to: "\(redis.url)/notes", in: scratch)
        #expect(Self.poll(seconds: 60) {
                    (try? Self.groupInfo(redis)).map { $0["pending"] == "0" && $0["last-delivered-id"] == lastOfThirdPart } ?? false
                },
                "the consumer noticed the second restart at its next commit, reconnected and drained the third part")
        #expect(consumer.isRunning)

        consumer.kill(SIGTERM)
        let result = try consumer.wait(timeout: 30)
        #expect(result.exitCode == 0 && !result.terminatedBySignal, "SIGTERM finishes the batch and exits 0: \(result)")
        let stats = try result.json()
        #expect(stats["reconnects"]?.int64Value ?? 0 >= 2, "both restarts were noticed: \(stats)")
        #expect(stats["appended"]?.int64Value == Int64(reference.appended), "each distinct event appended once: \(stats)")
        try Self.expectComplete(url, redis, reference)
    }

    /// `XINFO GROUPS notes` of group `sl` (the only one) as field → value (pending, last-delivered-id, …).
    static func groupInfo(_ redis: RedisServer) throws -> [String: String] {
        let lines = try redis.redisCLI(["XINFO", "GROUPS", "notes"]).split(separator: "\n").map(String.init)
        var info: [String: String] = [:]
        for index in stride(from: 0, to: lines.count - 1, by: 2) { info[lines[index]] = lines[index + 1] }
        return info
    }
}
