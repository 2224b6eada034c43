import AppStoreModels
import Foundation
import HTTPTestSupport
import LedgerStorage
import PostgresClient
import PostgresStore
import PostgresTestSupport
import SeatLedger
import StandardWebhooks
import Testing

/// Two `serve` on one PostgreSQL ledger derive access transitions behind their appends and share
/// the webhook deliveries: the derivation cursor is locked (`FOR UPDATE`), so one feed comes out
/// of two followers, and deliveries are claimed `FOR UPDATE SKIP LOCKED` under a lease, so no
/// delivery is sent by both at once, and one a killed process held is sent by the other once its
/// lease ends. The receiver is the PyPI reference implementation of Standard Webhooks.
@Suite("serve: access changes and webhooks, two processes on one PostgreSQL ledger", .serialized)
struct PostgresAccessChangeTests {
    static let environment = ["SEATLEDGER_NOW": "2025-06-02T00:00:00Z"]
    static let endpointId = "wh_00000000000000a1"

    /// A ledger made by `seatledger init` on a throwaway cluster, and one endpoint (`access.changed`,
    /// to `receiver`, signed with `secret`) added by its owner through the store API.
    static func ledger(database: String, receiver: ReferenceReceiver, secret: WebhookSecret) throws -> PostgresTestCluster {
        let cluster = try PostgresTestCluster(database: database)
        let created = try CLIRun.run(["init", "--db", cluster.url(), "--bundle-id", "com.example.reps", "--environment", "Sandbox",
                                      "--root-cert", Repository.pki.appendingPathComponent("root.pem").path])
        guard created.status == 0 else { throw FixtureError("init: \(created.stderr)") }
        PostgresLedgerEngine.register()
        let ledger = try Ledger.open(path: cluster.url())
        try ledger.addWebhookEndpoint(WebhookEndpointRecord(id: endpointId, url: "http://127.0.0.1:\(receiver.port)/hooks",
                                                            types: [WebhookMessageType.accessChanged], secret: secret.revealedText,
                                                            createdAt: 0))
        return cluster
    }

    /// The stored feed, in feed order: (seq, id).
    static func feed(_ connection: PostgresConnection) throws -> [(seq: Int64, id: String)] {
        try connection.query("SELECT seq, id FROM access_transitions ORDER BY seq").map { (try $0.int64(0), try $0.text(1)) }
    }

    /// The count of `sql`'s single row.
    static func count(_ connection: PostgresConnection, _ sql: String) throws -> Int64 {
        try connection.scalarInt64(sql) ?? -1
    }

    /// Waits (deadline `seconds`) until `count` transitions are stored and each one's delivery is
    /// recorded as delivered.
    static func waitForDeliveries(_ connection: PostgresConnection, count: Int64, seconds: Int64) throws -> Bool {
        try waitUntil(timeout: .seconds(seconds)) {
            try Self.count(connection, "SELECT count(*) FROM access_transitions") == count
                && Self.count(connection, "SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'") == count
        }
    }

    /// The log lines of `server` that say a derivation, a claim or the record of an attempt failed
    /// (each is retried, so a test that only waits for the outcome would not see them).
    static func failures(_ server: ServeProcess) -> [String] {
        server.logLines().filter { line in
            let event = (try? JSONValue.parse(bytes: Array(line.utf8)))?["event"]?.stringValue ?? ""
            return ["access_derivation_failed", "webhook_claim_failed", "webhook_record_failed"].contains(event)
        }
    }

    @Test("notifications POSTed at once to two serve, alternately: one gap-free feed, every transition delivered, each webhook-id received exactly once, one attempt per delivery")
    func twoServesDeliverOnce() throws {
        let secret = WebhookSecret.generate()
        let receiver = try ReferenceReceiver(secrets: [secret.revealedText])
        let cluster = try Self.ledger(database: "access_two", receiver: receiver, secret: secret)
        let url = cluster.url()
        let token = try addToken("reader", scope: "read", db: url)
        let count = 60
        let bodies = try Notifications.subscribed(count: count, offset: 40_000)
        let servers = [try ServeProcess(db: url, environment: Self.environment), try ServeProcess(db: url, environment: Self.environment)]
        let clients = try servers.map { try RawHTTPClient(port: $0.port) }
        // Six connections at once, each notification to serve index % 2: both followers derive and
        // both senders claim from the same outbox at the same time.
        let ports = servers.map(\.port)
        let load = LoadState()
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            do {
                let own = try ports.map { try RawHTTPClient(port: $0) }
                while true {
                    let index = load.next.add(1, ordering: .relaxed).oldValue
                    guard index < count else { return }
                    if try own[index % 2].request("POST", "/notifications", body: bodies[index]).status == 200 {
                        _ = load.acknowledged.withLock { $0.insert(index) }
                    }
                }
            } catch {
                Issue.record("posting: \(error)")
            }
        }
        #expect(load.acknowledged.withLock { $0.count } == count)
        let connection = try cluster.connect()
        let delivered = try Self.waitForDeliveries(connection, count: Int64(count), seconds: 90)
        let progress = "\(try Self.count(connection, "SELECT count(*) FROM access_transitions")) transitions, "
            + "\(try Self.count(connection, "SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'")) delivered"
        #expect(delivered, "\(progress)")
        // Both nodes serve the same feed.
        var served: [[String]] = []
        for client in clients {
            let page = try JSONValue.parse(bytes: Array(try client.request("GET", "/v1/access-changes?limit=1000",
                                                                           headers: [("Authorization", "Bearer \(token)")]).body))
            served.append(page["changes"]?.arrayValue?.compactMap { $0["transition"]?["id"]?.stringValue } ?? [])
        }
        // Stopped, neither can post again: what the receiver has is all it will get.
        for server in servers { #expect(server.stop() == 0) }
        for server in servers { #expect(Self.failures(server).isEmpty, "\(Self.failures(server))") }

        // The two derivations made one feed: seq 1…n, each id once.
        let feed = try Self.feed(connection)
        #expect(feed.count == count)
        #expect(feed.map(\.seq) == (1...Int64(count)).map { $0 })
        #expect(Set(feed.map(\.id)).count == feed.count)
        #expect(served[0] == feed.map(\.id) && served[1] == served[0])

        // Every transition delivered, each webhook-id exactly once (no delivery held by both senders).
        let records = try receiver.records()
        let ids = records.compactMap { $0["webhookId"]?.stringValue }
        #expect(ids.count == records.count)
        #expect(ids.count == count, "\(ids.count) deliveries received for \(count) transitions")
        #expect(Set(ids) == Set(feed.map(\.id)))
        #expect(records.allSatisfy { $0["body"]?["type"] == "access.changed" && $0["body"]?["data"]?["id"] == $0["webhookId"] })
        #expect(try receiver.refusals().isEmpty)

        // One delivery per transition, each delivered at its first attempt, one attempt row each.
        #expect(try Self.count(connection, "SELECT count(*) FROM webhook_deliveries") == Int64(count))
        #expect(try Self.count(connection, "SELECT count(DISTINCT transition_seq) FROM webhook_deliveries") == Int64(count))
        #expect(try Self.count(connection, "SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered' AND attempts = 1 AND lease_until IS NULL")
                == Int64(count))
        #expect(try Self.count(connection, "SELECT count(*) FROM webhook_attempts") == Int64(count))
        #expect(try Self.count(connection, """
            SELECT count(*) FROM webhook_deliveries d
             WHERE (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_seq = d.seq AND a.status BETWEEN 200 AND 299) = 1
            """) == Int64(count))

        // The owner's CLI on the same ledger: the endpoint, its deliveries, and an intact ledger.
        let list = try CLIRun.run(["webhook", "list", "--db", url, "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(try JSONValue.parse(bytes: Array(list.stdout)).arrayValue?.compactMap { $0["id"]?.stringValue } == [Self.endpointId])
        let deliveries = try CLIRun.run(["webhook", "deliveries", "--db", url, "--limit", "1000", "--json"])
        #expect(deliveries.status == 0, "\(deliveries.stderr)")
        #expect(try JSONValue.parse(bytes: Array(deliveries.stdout)).arrayValue?.count == count)
        let verify = try CLIRun.run(["verify", "--db", url])
        #expect(verify.status == 0, "\(verify.text)\(verify.stderr)")
    }

    @Test("a long poll of GET /v1/access-changes on one serve answers as soon as the other serve derived the transition, not at its timeout")
    func longPollSeesTheOtherServe() throws {
        let secret = WebhookSecret.generate()
        let receiver = try ReferenceReceiver(secrets: [secret.revealedText])
        let cluster = try Self.ledger(database: "access_poll", receiver: receiver, secret: secret)
        let url = cluster.url()
        let token = try addToken("reader", scope: "read", db: url)
        let bodies = try Notifications.subscribed(count: 2, offset: 60_000)
        let deriving = try ServeProcess(db: url, environment: Self.environment)
        let polled = try ServeProcess(db: url, environment: Self.environment)
        let client = try RawHTTPClient(port: deriving.port)
        #expect(try client.request("POST", "/notifications", body: bodies[0]).status == 200)
        let connection = try cluster.connect()
        #expect(try waitUntil(timeout: .seconds(30)) { try Self.count(connection, "SELECT count(*) FROM access_transitions") == 1 })
        // Long-poll the other serve past the last position, then append (and derive) on the first.
        let answer = Guarded<(seconds: Double, body: JSONValue?)?>(nil)
        let port = polled.port
        let poller = Thread {
            let started = Date()
            let response = try? RawHTTPClient(port: port, timeoutSeconds: 60)
                .request("GET", "/v1/access-changes?after=1&wait=30", headers: [("Authorization", "Bearer \(token)")])
            let body = response.flatMap { try? JSONValue.parse(bytes: Array($0.body)) }
            answer.withValue { $0 = (Date().timeIntervalSince(started), body) }
        }
        poller.start()
        #expect(try client.request("POST", "/notifications", body: bodies[1]).status == 200)
        #expect(waitUntil(timeout: .seconds(40)) { answer.withValue { $0 } != nil })
        let (seconds, body) = try #require(answer.withValue { $0 })
        #expect(body?["changes"]?.arrayValue?.compactMap { $0["seq"]?.int64Value } == [2], "\(String(describing: body))")
        #expect(seconds < 10, "the long poll answered after \(seconds) s")
        for server in [deriving, polled] { #expect(server.stop() == 0) }
    }

    @Test("kill -9 of one serve while its deliveries are in flight: the other sends them once their lease ends, and every transition is delivered")
    func killedServeLeavesItsLeases() throws {
        let secret = WebhookSecret.generate()
        // Each answer takes 500 ms: a serve posts 8 at a time, so its 60 deliveries are in flight for ~4 s.
        let receiver = try ReferenceReceiver(secrets: [secret.revealedText], options: ["--delay-ms", "500"])
        let cluster = try Self.ledger(database: "access_kill", receiver: receiver, secret: secret)
        let url = cluster.url()
        let count = 60
        let bodies = try Notifications.subscribed(count: count, offset: 50_000)
        let lease: Int64 = 8
        let doomed = try ServeProcess(db: url, extra: ["--webhook-lease", "\(lease)"], environment: Self.environment)
        // The doomed serve takes the notifications, derives them and holds their deliveries under
        // its lease before the survivor starts (both plan derivations; whichever stores first holds
        // the deliveries, so the survivor must not be there yet for "held by the killed one" to hold).
        let client = try RawHTTPClient(port: doomed.port)
        for (index, body) in bodies.enumerated() {
            #expect(try client.request("POST", "/notifications", body: body).status == 200, "notification \(index)")
        }
        let connection = try cluster.connect()
        #expect(try waitUntil(timeout: .seconds(60)) { try Self.count(connection, "SELECT count(*) FROM webhook_deliveries") == Int64(count) })
        let survivor = try ServeProcess(db: url, extra: ["--webhook-retry-delays", "1", "--webhook-lease", "\(lease)"],
                                        environment: Self.environment)
        // In flight: some delivered, not all.
        _ = try receiver.waitForRecords(seconds: 60) { $0.count >= 4 }
        _ = doomed.stop(signal: SIGKILL)
        let killedAt = Timestamp.millis(Date())
        let held = try connection.query("""
            SELECT seq, lease_until FROM webhook_deliveries WHERE state = 'pending' AND lease_until > $1
            """, [.int64(killedAt)]).map { (seq: try $0.int64(0), leaseUntil: try $0.int64(1)) }
        #expect(!held.isEmpty, "deliveries were held under a lease when the serve was killed")
        #expect(try Self.count(connection, "SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'") < Int64(count))

        let delivered = try Self.waitForDeliveries(connection, count: Int64(count), seconds: 120)
        let progress = try Self.count(connection, "SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'")
        #expect(delivered, "\(progress) of \(count) delivered")
        // What the killed serve held was sent by the survivor only after the lease ended.
        var takenOver = 0
        for delivery in held {
            let at = try connection.scalarInt64("SELECT delivered_at FROM webhook_deliveries WHERE seq = $1", [.int64(delivery.seq)])
            if let at, at >= delivery.leaseUntil { takenOver += 1 }
        }
        #expect(takenOver > 0, "no delivery held by the killed serve was sent after its lease (\(held.count) held)")
        let feed = try Self.feed(connection)
        #expect(survivor.stop() == 0)
        #expect(Self.failures(survivor).isEmpty, "\(Self.failures(survivor))")
        #expect(Self.failures(doomed).isEmpty, "\(Self.failures(doomed))")

        // One feed from both derivations: seq 1…n, each id once.
        #expect(feed.count == count)
        #expect(feed.map(\.seq) == (1...Int64(count)).map { $0 })
        #expect(Set(feed.map(\.id)).count == feed.count)
        // Every transition received at least once (a post cut by the kill may have reached the receiver too).
        let ids = try receiver.records().compactMap { $0["webhookId"]?.stringValue }
        #expect(Set(ids) == Set(feed.map(\.id)), "\(Set(feed.map(\.id)).subtracting(ids).count) never received")
        // A refusal can only be a post the kill cut short (a truncated body fails its signature), at
        // most one per post the killed serve had open (8), and that delivery was received whole later.
        let refusals = try receiver.refusals()
        #expect(refusals.count <= 8, "\(refusals)")
        #expect(refusals.allSatisfy { refusal in refusal["webhookId"]?.stringValue.map { ids.contains($0) } == true }, "\(refusals)")
        #expect(try Self.count(connection, "SELECT count(*) FROM webhook_deliveries") == Int64(count))
        #expect(try Self.count(connection, "SELECT count(*) FROM webhook_deliveries d WHERE NOT EXISTS "
                                   + "(SELECT 1 FROM webhook_attempts a WHERE a.delivery_seq = d.seq)") == 0)
        let verify = try CLIRun.run(["verify", "--db", url])
        #expect(verify.status == 0, "\(verify.text)\(verify.stderr)")
    }
}
