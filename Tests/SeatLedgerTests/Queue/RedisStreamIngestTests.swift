import AppStoreModels
import EventStore
import Foundation
import JWSVerification
import RedisStreams
import Testing

/// The Redis Streams consumer against a real redis-server, through the built CLI.
@Suite("Redis Streams ingest", .serialized)
struct RedisStreamIngestTests {
    /// `count` distinct signed notifications (NDJSON lines), signed on all cores.
    static func notifications(_ count: Int) throws -> [String] {
        let factory = try PayloadFactory()
        let payloads = try (0..<count).map { index in
            try factory.notificationPayload(type: "DID_RENEW", uuid: "00000000-0000-4000-8000-\(String(format: "%012d", index))",
                                            signedDate: PayloadFactory.defaultSignedDate + EpochMillis(index))
        }
        return try factory.signAll(payloads).map(PayloadFactory.body(signedPayload:))
    }

    static func enqueue(_ lines: [String], to url: String, in directory: TemporaryDirectory) throws {
        let file = try directory.writeLines(lines, to: "enqueue-\(UUID().uuidString).ndjson")
        let result = try CLI.run(["enqueue", "--to", url, file.path])
        #expect(result.exitCode == 0, "\(result)")
    }

    static func eventCount(_ db: String) throws -> Int64 {
        let result = try CLI.run(["events", "--db", db, "--json"])
        return Int64(try result.json().arrayValue?.count ?? -1)
    }

    @Test("basic flow: every entry appended once, acknowledged, nothing pending")
    func basicFlow() throws {
        let redis = try RedisServer()
        let test = try TestLedger()
        let lines = try Self.notifications(40)
        try Self.enqueue(lines + lines.prefix(5), to: "\(redis.url)/notes", in: test.directory)  // queue-level duplicates
        let result = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--from", "\(redis.url)/notes", "--consumer-group", "sl",
                                  "--consumer", "w1", "--until-empty", "--batch-size", "16", "--block-ms", "200", "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let stats = try result.json()
        #expect(stats["appended"]?.int64Value == 40)
        #expect(stats["duplicates"]?.int64Value == 5)
        #expect(stats["acknowledged"]?.int64Value == 45)
        #expect(stats["pending"]?.int64Value == 0)
        #expect(try redis.redisCLI(["XPENDING", "notes", "sl"]).hasPrefix("0"))
        #expect(try test.eventCount() == 40)
    }

    @Test("one consumer with a short --min-idle-ms never claims its own read-ahead entries: each entry committed once, none 'recovered'")
    func noSelfClaim() throws {
        let redis = try RedisServer()
        let test = try TestLedger()
        let lines = try Self.notifications(3_000)
        try Self.enqueue(lines, to: "\(redis.url)/solo", in: test.directory)
        // Batches wait for their commit longer than 5 ms, so read-ahead entries are idle that long.
        let result = try CLI.run(["ingest", "--db", test.path, "--from", "\(redis.url)/solo", "--consumer", "solo",
                                  "--min-idle-ms", "5", "--until-empty", "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let stats = try result.json()
        #expect(stats["appended"] == 3_000 && stats["duplicates"] == 0 && stats["recovered"] == 0, "\(stats)")
        #expect(stats["acknowledged"] == 3_000 && stats["pending"] == 0, "\(stats)")
    }

    @Test("an entry over --max-message-bytes is quarantined as its size, SHA-256 and first 64 KiB, never read whole; the rest goes on")
    func oversizeEntry() throws {
        let redis = try RedisServer()
        let test = try TestLedger()
        let lines = try Self.notifications(4)
        let url = try RedisStreamURL("\(redis.url)/big")
        let producer = try RedisStreamClient(url: url)
        var big = Data(#"{"signedPayload":""#.utf8)
        big.append(Data((0..<3_000_000).map { UInt8(ascii: "a") + UInt8($0 % 26) }))
        big.append(Data(#""}"#.utf8))
        try producer.add(field: "body", value: Data(lines[0].utf8))
        try producer.add(field: "body", value: Data(lines[1].utf8))
        try producer.add(field: "body", value: big)
        try producer.add(field: "body", value: Data(lines[2].utf8))
        try producer.add(field: "body", value: Data(lines[3].utf8))

        // The client's own view: the value's length, its first bytes and a staged copy to read in pieces.
        let reader = try RedisStreamClient(url: url)
        reader.valueLimit = 1 << 20
        try reader.ensureGroup("peek")
        let entries = try reader.read(group: "peek", consumer: "p", count: 10, blockMilliseconds: nil)
        #expect(entries.count == 5)
        let oversize = try #require(entries[2].oversized["body"])
        #expect(entries[2].fields["body"] == nil)
        #expect(oversize.length == big.count)
        #expect(oversize.prefix == big.prefix(64 << 10))
        #expect(try reader.stagedRange(oversize.stagedKey, from: 1_000_000, count: 10) == big.subdata(in: 1_000_000..<1_000_010))
        #expect(entries.enumerated().allSatisfy { $0.offset == 2 || $0.element.oversized.isEmpty })

        let result = try CLI.run(["ingest", "--db", test.path, "--from", "\(redis.url)/big", "--consumer-group", "sl", "--consumer", "w1",
                                  "--until-empty", "--block-ms", "200", "--max-message-bytes", "1048576", "--json"])
        #expect(result.exitCode == 3, "quarantined: \(result)")
        let stats = try result.json()
        #expect(stats["appended"]?.int64Value == 4)
        #expect(stats["quarantined"]?.int64Value == 1)
        #expect(stats["acknowledged"]?.int64Value == 5)
        #expect(stats["pending"]?.int64Value == 0)
        let record = try #require(try test.freshStore().quarantine(state: nil).first)
        #expect(record.errorCode == "message_too_large")
        #expect(record.reason == "message too large: \(big.count) bytes (limit 1048576), SHA-256 \(SHA256Digest.hex(big)); its first 65536 bytes are kept")
        #expect(record.raw == big.prefix(64 << 10))
        #expect(record.source.hasPrefix("redis:big:"))
        // The consumer's staged copy is gone (the peek's own copy is still there, expiring in an hour).
        let staged = try redis.redisCLI(["KEYS", "seatledger:oversize:*"]).split(separator: "\n")
        #expect(staged.count == 1, "\(staged)")
    }

    @Test("a redis:// URL with a password AUTHs (enqueue and ingest), never prints the password; a wrong one is refused clearly")
    func passwordProtectedServer() throws {
        let redis = try RedisServer(password: "hunter2")
        let test = try TestLedger()
        let lines = try Self.notifications(6)
        let good = "redis://:hunter2@127.0.0.1:\(redis.port)/notes"
        let file = try test.directory.writeLines(lines, to: "in.ndjson")
        let enqueued = try CLI.run(["enqueue", "--to", good, file.path])
        #expect(enqueued.exitCode == 0, "\(enqueued)")
        #expect(!enqueued.stdout.contains("hunter2") && !enqueued.stderr.contains("hunter2"), "\(enqueued)")
        #expect(enqueued.stdout.contains("redis://***@127.0.0.1:\(redis.port)/notes"), "\(enqueued)")
        let result = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--from", "redis://default:hunter2@127.0.0.1:\(redis.port)/notes",
                                  "--consumer-group", "sl", "--consumer", "w1", "--until-empty", "--block-ms", "200", "--json"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try result.json()["appended"]?.int64Value == 6)
        #expect(!result.stderr.contains("hunter2"), "\(result)")
        let wrong = try CLI.run(["enqueue", "--to", "redis://:wrong-secret@127.0.0.1:\(redis.port)/notes", file.path])
        #expect(wrong.exitCode == 2, "\(wrong)")
        #expect(wrong.stderr.contains("AUTH at redis://***@127.0.0.1:\(redis.port)/notes refused"), "\(wrong)")
        #expect(!wrong.stderr.contains("wrong-secret"), "\(wrong)")
        let none = try CLI.run(["enqueue", "--to", "redis://127.0.0.1:\(redis.port)/notes", file.path])
        #expect(none.exitCode == 2 && none.stderr.contains("NOAUTH"), "\(none)")
        // A URL that does not parse is named without its credentials too.
        for bad in ["redis://:hunter2@127.0.0.1:abc/notes", "redis://:hunter2@127.0.0.1", "redis://:hunter2@/notes"] {
            let refused = try CLI.run(["enqueue", "--to", bad, file.path])
            #expect(refused.exitCode == 2 && !refused.stderr.contains("hunter2") && refused.stderr.contains("redis://***@"), "\(refused)")
        }
    }

    @Test("poison messages are quarantined with their stream id, then acknowledged")
    func poisonMessages() throws {
        let redis = try RedisServer()
        let test = try TestLedger()
        try Self.enqueue(["{\"signedPayload\": \"not.a.jws\"}", "{broken json"], to: "\(redis.url)/notes", in: test.directory)
        let otherId = try redis.redisCLI(["XADD", "notes", "*", "wrongfield", "x"])
        let sameAgainId = try redis.redisCLI(["XADD", "notes", "*", "wrongfield", "x"])  // the same fields: another entry
        let result = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--from", "\(redis.url)/notes", "--consumer-group", "sl",
                                  "--consumer", "w1", "--until-empty", "--block-ms", "200", "--json"])
        #expect(result.exitCode == 3, "quarantined inputs give exit 3: \(result)")
        #expect(try result.json()["pending"]?.int64Value == 0)
        let quarantine = try CLI.run(["quarantine", "list", "--db", test.path, "--json"]).json().arrayValue ?? []
        #expect(quarantine.count == 4, "two entries with the same fields are two items")
        let codes = Set(quarantine.compactMap { $0["errorCode"]?.stringValue })
        #expect(codes.isSuperset(of: ["malformed_json", "missing_body_field"]))
        for id in [otherId, sameAgainId] {
            #expect(quarantine.contains { $0["source"]?.stringValue == "redis:notes:\(id)" }, "\(id)")
            let raw = try CLI.run(["quarantine", "show", "--db", test.path, "--raw",
                                   String(quarantine.first { $0["source"]?.stringValue == "redis:notes:\(id)" }?["id"]?.int64Value ?? 0)])
            #expect(raw.stdout == "redis entry \(id)\nwrongfield=x\n", "the entry's fields, bytes exact: \(raw)")
        }
    }

    @Test("a consumer killed with kill -9 mid-batch, restarted: every message exactly once, none pending")
    func killMidBatch() throws {
        let redis = try RedisServer()
        let test = try TestLedger()
        let lines = try Self.notifications(1500)
        try Self.enqueue(lines, to: "\(redis.url)/notes", in: test.directory)
        let arguments = ["ingest", "--api-responses", "--db", test.path, "--from", "\(redis.url)/notes", "--consumer-group", "sl", "--consumer", "w1",
                         "--until-empty", "--batch-size", "25", "--block-ms", "200", "--json"]
        let running = try CLI.start(arguments)
        let deadline = Date().addingTimeInterval(60)
        var seen: Int64 = 0
        while Date() < deadline {
            seen = (try? test.store.eventCount()) ?? 0
            if seen >= 100 { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        running.kill()
        _ = try? running.wait(timeout: 10)
        let atKill = try test.store.eventCount()
        #expect(atKill > 0 && atKill < 1500, "the kill must land mid-run (had \(atKill))")
        let pendingAfterKill = try redis.redisCLI(["XPENDING", "notes", "sl"])
        let restarted = try CLI.run(arguments)
        #expect(restarted.exitCode == 0, "\(restarted)")
        #expect(try test.store.eventCount() == 1500)
        #expect(try redis.redisCLI(["XPENDING", "notes", "sl"]).hasPrefix("0"), "was: \(pendingAfterKill)")
        #expect(try CLI.run(["verify", "--db", test.path]).exitCode == 0)
    }

    @Test("SIGTERM while the consumer waits on an empty stream ends the wait at once, not after --block-ms")
    func stopDuringBlock() throws {
        let redis = try RedisServer()
        let test = try TestLedger()
        let running = try CLI.start(["ingest", "--db", test.path, "--from", "\(redis.url)/quiet", "--consumer", "w1",
                                     "--block-ms", "60000", "--status-interval", "0.1", "--json"])
        // A status line says the consumer is connected and reading.
        let deadline = Date().addingTimeInterval(30)
        while running.isRunning, Date() < deadline, !running.stderrSoFar.contains("{\"status\"") { Thread.sleep(forTimeInterval: 0.02) }
        #expect(running.stderrSoFar.contains("{\"status\""))
        running.kill(SIGTERM)
        // Before, the read sat out its 60 s block first (this wait's timeout is shorter).
        let result = try running.wait(timeout: 20)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.contains("stopping…"), "\(result)")
    }

    @Test("Redis restarted mid-run: the consumer reconnects and nothing is lost or doubled")
    func redisRestart() throws {
        let redis = try RedisServer()
        let test = try TestLedger()
        let lines = try Self.notifications(300)
        try Self.enqueue(Array(lines.prefix(150)), to: "\(redis.url)/notes", in: test.directory)
        let running = try CLI.start(["ingest", "--api-responses", "--db", test.path, "--from", "\(redis.url)/notes", "--consumer-group", "sl",
                                     "--consumer", "w1", "--batch-size", "20", "--block-ms", "100", "--json"])
        var deadline = Date().addingTimeInterval(30)
        while (try test.store.eventCount()) < 150, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        try redis.restart()
        try Self.enqueue(Array(lines.suffix(150)), to: "\(redis.url)/notes", in: test.directory)
        deadline = Date().addingTimeInterval(60)
        while (try test.store.eventCount()) < 300, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try test.store.eventCount() == 300, "a read batch is committed while the stream is idle, not held until the next message or a stop")
        running.kill(SIGTERM)
        let result = try running.wait(timeout: 30)
        #expect(result.exitCode == 0, "SIGTERM finishes the batch and exits 0: \(result)")
        #expect(try result.json()["reconnects"]?.int64Value ?? 0 >= 1)
        #expect(try test.store.eventCount() == 300)
        #expect(try redis.redisCLI(["XPENDING", "notes", "sl"]).hasPrefix("0"))
    }

    @Test("two consumers in one group share the work on one ledger; another group on another ledger gets everything")
    func twoConsumersAndTwoLedgers() throws {
        let redis = try RedisServer()
        let test = try TestLedger()
        let other = try TestLedger()
        let lines = try Self.notifications(600)
        try Self.enqueue(lines, to: "\(redis.url)/notes", in: test.directory)
        func consumer(_ name: String, db: String, group: String) throws -> RunningCLI {
            try CLI.start(["ingest", "--api-responses", "--db", db, "--from", "\(redis.url)/notes", "--consumer-group", group, "--consumer", name,
                           "--until-empty", "--batch-size", "20", "--block-ms", "300", "--json"])
        }
        let a = try consumer("a", db: test.path, group: "sl")
        let b = try consumer("b", db: test.path, group: "sl")
        let c = try consumer("c", db: other.path, group: "other")
        let ra = try a.wait(timeout: 120), rb = try b.wait(timeout: 120), rc = try c.wait(timeout: 120)
        #expect(ra.exitCode == 0 && rb.exitCode == 0 && rc.exitCode == 0, "\(ra)\n\(rb)\n\(rc)")
        let appendedA = try ra.json()["appended"]?.int64Value ?? 0, appendedB = try rb.json()["appended"]?.int64Value ?? 0
        #expect(appendedA + appendedB == 600, "each message appended exactly once across the two consumers")
        #expect(appendedA > 0 && appendedB > 0, "both consumers did work (\(appendedA) / \(appendedB))")
        #expect(try test.store.eventCount() == 600)
        #expect(try other.store.eventCount() == 600)
        #expect(try CLI.run(["verify", "--db", test.path]).exitCode == 0)
    }
}
