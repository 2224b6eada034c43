import AppStoreModels
import Foundation
import HTTPTestSupport
import PostgresClient
import PostgresTestSupport
import Synchronization
import Testing

@Suite("serve: two processes on one PostgreSQL ledger", .serialized)
struct PostgresServeTests {
    @Test("the load split between two serve processes (16 connections, each notification also re-sent to the other): every acknowledgement stored once, positions gap-free, projections equal to a rebuild")
    func twoProcesses() async throws {
        let cluster = try PostgresTestCluster(database: "serve_two")
        let url = cluster.url()
        let created = try CLIRun.run(["init", "--db", url, "--bundle-id", "com.example.reps", "--environment", "Sandbox",
                                      "--root-cert", Repository.pki.appendingPathComponent("root.pem").path])
        #expect(created.status == 0, "\(created.stderr)")
        let token = try addToken("reader", scope: "read", db: url)
        let count = 300
        let bodies = try Notifications.subscribed(count: count, offset: 20_000)
        let servers = [try ServeProcess(db: url), try ServeProcess(db: url)]
        let ports = servers.map(\.port)
        let load = LoadState()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for connection in 0..<16 {
                group.addTask {
                    try await onThread {
                        let clients = try ports.map { try RawHTTPClient(port: $0) }
                        while true {
                            let index = load.next.add(1, ordering: .relaxed).oldValue
                            guard index < count else { return }
                            let own = (index + connection) % 2
                            let first = try clients[own].request("POST", "/notifications", body: bodies[index])
                            let again = try clients[1 - own].request("POST", "/notifications", body: bodies[index])
                            #expect(first.status == 200 && again.status == 200)
                            let results = Set([try json(first)["result"]?.stringValue, try json(again)["result"]?.stringValue])
                            #expect(results == ["appended", "duplicate"], "notification \(index): \(results)")
                            if first.status == 200 { _ = load.acknowledged.withLock { $0.insert(index) } }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(load.acknowledged.withLock { $0.count } == count)
        // Both nodes see every event, gap-free, in the same order.
        let auth = [("Authorization", "Bearer \(token)")]
        var feeds: [[JSONValue]] = []
        for port in ports {
            let feed = try json(RawHTTPClient(port: port).request("GET", "/v1/changes?after=0&limit=1000", headers: auth))
            feeds.append(feed["changes"]?.arrayValue ?? [])
        }
        #expect(feeds[0].map { $0["position"]?.int64Value } == (1...Int64(count)).map { Optional($0) })
        #expect(feeds[0] == feeds[1])
        #expect(Set(feeds[0].compactMap { $0["eventId"]?.stringValue }).count == count)
        for server in servers { #expect(server.stop() == 0) }
        let verify = try CLIRun.run(["verify", "--db", url])
        #expect(verify.status == 0, "\(verify.text)\(verify.stderr)")
    }

    @Test("the database unreachable: POST /notifications answers 503 with Retry-After and /readyz 503; once it is back, the resend is acknowledged and stored once")
    func databaseDown() throws {
        let cluster = try PostgresTestCluster(database: "serve_down")
        let url = cluster.url()
        let created = try CLIRun.run(["init", "--db", url, "--bundle-id", "com.example.reps", "--environment", "Sandbox",
                                      "--root-cert", Repository.pki.appendingPathComponent("root.pem").path])
        #expect(created.status == 0, "\(created.stderr)")
        let bodies = try Notifications.subscribed(count: 2, offset: 30_000)
        let serve = try ServeProcess(db: url)
        #expect(try RawHTTPClient(port: serve.port).request("POST", "/notifications", body: bodies[0]).status == 200)
        cluster.stop()
        let refused = try RawHTTPClient(port: serve.port, timeoutSeconds: 60).request("POST", "/notifications", body: bodies[1])
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "5")
        #expect(try json(refused)["error"]?.stringValue == "not_stored")
        #expect(try RawHTTPClient(port: serve.port, timeoutSeconds: 60).request("GET", "/readyz").status == 503)
        try cluster.start()
        #expect(waitUntil(timeout: .seconds(30)) {
            (try? RawHTTPClient(port: serve.port, timeoutSeconds: 30).request("POST", "/notifications", body: bodies[1]).status) == 200
        })
        #expect(serve.stop() == 0)
        let events = try CLIRun.run(["verify", "--db", url, "--json"])
        #expect(events.status == 0, "\(events.text)\(events.stderr)")
        let count = try cluster.connect().query("SELECT count(*)::bigint FROM events").first?.int64(0)
        #expect(count == 2)
        let metricsLine = serve.logLines().filter { $0.contains("\"outcome\":\"not_stored\"") }
        #expect(!metricsLine.isEmpty)
    }

    @Test("a PostgreSQL ledger made before api_tokens gets the table at the first token add, readable by the append role")
    func olderPostgresLedger() throws {
        let cluster = try PostgresTestCluster(database: "serve_tokens")
        let url = cluster.url()
        let created = try CLIRun.run(["init", "--db", url, "--bundle-id", "com.example.reps", "--environment", "Sandbox",
                                      "--root-cert", Repository.pki.appendingPathComponent("root.pem").path])
        #expect(created.status == 0, "\(created.stderr)")
        let admin = try cluster.connect()
        try admin.execute("DROP TABLE api_tokens")
        #expect(try CLIRun.run(["token", "list", "--db", url]).text.contains("No tokens."))
        _ = try addToken("app", scope: "read", db: url)
        let granted = try admin.query("SELECT has_table_privilege('seatledger_append', 'api_tokens', 'SELECT')").first?.bool(0)
        #expect(granted == true)
        #expect(try CLIRun.run(["token", "list", "--db", url]).text.contains("app  scope read"))
        #expect(try CLIRun.run(["verify", "--db", url]).status == 0)
    }
}
