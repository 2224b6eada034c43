import AppStoreModels
import Foundation
import HTTPTestSupport
import LedgerStorage
import SeatLedger
import StandardWebhooks
import Testing

/// `serve` derives access transitions behind the append and pushes them, signed, to a real
/// Standard Webhooks receiver (the PyPI reference implementation), at least once, across `kill -9`.
@Suite("serve: access changes in the feed and pushed as Standard Webhooks", .serialized)
struct AccessChangeWebhookTests {
    static let environment = ["SEATLEDGER_NOW": "2025-06-02T00:00:00Z"]

    static func addEndpoint(db: String, port: Int, secret: WebhookSecret, types: [String]) throws {
        let ledger = try Ledger.open(path: db)
        try ledger.store.addWebhookEndpoint(WebhookEndpointRecord(id: "wh_00000000000000a1", url: "http://127.0.0.1:\(port)/hooks",
                                                                  types: types, secret: secret.revealedText, createdAt: 0))
    }

    @Test("each notification's transition reaches the receiver verified, the raw notification too; the feed serves the same transitions")
    func delivered() throws {
        let fixture = try LedgerFixture()
        let secret = WebhookSecret.generate()
        let receiver = try ReferenceReceiver(secrets: [secret.revealedText])
        try Self.addEndpoint(db: fixture.path, port: receiver.port, secret: secret,
                             types: [WebhookMessageType.accessChanged, WebhookMessageType.appleNotification])
        let token = try addToken("reader", scope: "read", db: fixture.path)
        let serve = try ServeProcess(db: fixture.path, extra: ["--support-listen", "127.0.0.1:0"], environment: Self.environment)
        let client = try RawHTTPClient(port: serve.port)
        let bodies = try Notifications.subscribed(count: 3)
        for body in bodies { #expect(try client.request("POST", "/notifications", body: body).status == 200) }
        let records = try receiver.waitForRecords { $0.count >= 6 }
        let changes = records.filter { $0["body"]?["type"] == "access.changed" }
        #expect(changes.count == 3)
        for record in changes {
            let transition = try #require(record["body"]?["data"])
            #expect(transition["kind"] == "GAINED")
            #expect(record["webhookId"] == transition["id"])
            #expect(transition["bundleId"] == "com.example.reps" && transition["environment"] == "Sandbox")
        }
        // Apple's bodies forwarded verbatim, each under `ev_<notificationUUID>`.
        let forwarded = records.filter { $0["webhookId"]?.stringValue?.hasPrefix("ev_") == true }
        #expect(forwarded.count == 3)
        #expect(Set(forwarded.compactMap { $0["body"]?["signedPayload"]?.stringValue })
                == Set(try bodies.map { try JSONValue.parse($0)["signedPayload"]?.stringValue ?? "" }))
        #expect(try receiver.refusals().isEmpty)
        // The feed: the same three transitions, in order, with a cursor.
        let feed = try JSONValue.parse(bytes: Array(try client.request("GET", "/v1/access-changes", headers: [("Authorization", "Bearer \(token)")]).body))
        let ids = feed["changes"]?.arrayValue?.compactMap { $0["transition"]?["id"]?.stringValue } ?? []
        #expect(Set(ids) == Set(changes.compactMap { $0["webhookId"]?.stringValue }))
        #expect(feed["next"] == .int(3) && feed["last"] == .int(3))
        // A long poll past the end answers empty at its timeout, the cursor unmoved.
        let empty = try JSONValue.parse(bytes: Array(try client.request("GET", "/v1/access-changes?after=3&wait=1", headers: [("Authorization", "Bearer \(token)")]).body))
        #expect(empty["changes"] == .array([]) && empty["next"] == .int(3))
        // Filters: a page of two GAINED ends at its second row; a product no row has moves the cursor past them all, at once.
        let auth = [("Authorization", "Bearer \(token)")]
        let gained = try JSONValue.parse(bytes: Array(try client.request("GET", "/v1/access-changes?kind=GAINED&limit=2", headers: auth).body))
        #expect(gained["changes"]?.arrayValue?.count == 2 && gained["next"] == .int(2))
        let none = try JSONValue.parse(bytes: Array(try client.request("GET", "/v1/access-changes?product=com.example.other&wait=30", headers: auth).body))
        #expect(none["changes"] == .array([]) && none["next"] == .int(3))
        // An empty filter is a 400 naming it, not "no filter".
        let emptyFilter = try client.request("GET", "/v1/access-changes?product=", headers: auth)
        #expect(emptyFilter.status == 400 && emptyFilter.text.contains("bad_parameter") && emptyFilter.text.contains("product="))
        // /metrics: what was derived and delivered, nothing pending or failing.
        let metrics = try client.request("GET", "/metrics").text
        for line in ["seatledger_access_transitions_emitted_total{ledger=\"default\"} 3",
                     "seatledger_webhook_attempts_total{ledger=\"default\",outcome=\"delivered\"} 6",
                     "seatledger_webhook_attempts_total{ledger=\"default\",outcome=\"failed\"} 0",
                     "seatledger_webhook_oldest_undelivered_age_seconds{ledger=\"default\"} 0",
                     "seatledger_webhook_endpoints_failing{ledger=\"default\"} 0",
                     "seatledger_access_derivation_lag_events{ledger=\"default\"} 0"] {
            #expect(metrics.contains(line + "\n"), "\(line)")
        }
        #expect(!metrics.contains(secret.revealedText))
        // The support desk's member page lists the person's transition and its delivery.
        let deskPort = try #require(SupportDeskTests.Desk.supportPort(serve.logLines()))
        let page = try RawHTTPClient(port: deskPort).request("GET", "/member?id=2100000000000000").text
        #expect(page.contains("<h2>Access changes</h2>"))
        #expect(page.contains(">GAINED<") && page.contains("wh_00000000000000a1: delivered (1 attempt, HTTP 204)"), "\(page.suffix(1500))")
        #expect(!page.contains(secret.revealedText))
        #expect(serve.stop() == 0)
    }

    @Test("during a secret's rotation both secrets sign: a receiver that still holds only the old one, and one that holds only the new one, each verify every delivery")
    func rotation() throws {
        let fixture = try LedgerFixture()
        let old = WebhookSecret.generate(), new = WebhookSecret.generate()
        let oldOnly = try ReferenceReceiver(secrets: [old.revealedText]), newOnly = try ReferenceReceiver(secrets: [new.revealedText])
        let ledger = try Ledger.open(path: fixture.path)
        for (index, receiver) in [oldOnly, newOnly].enumerated() {
            let id = "wh_00000000000000b\(index)"
            try ledger.store.addWebhookEndpoint(WebhookEndpointRecord(id: id, url: "http://127.0.0.1:\(receiver.port)/hooks",
                                                                      types: [WebhookMessageType.accessChanged], secret: old.revealedText, createdAt: 0))
            #expect(try ledger.store.rotateWebhookSecret(id: id, newSecret: new.revealedText, previousUntil: Int64.max))
        }
        #expect(try ledger.store.verifyRecordChain()?.isIntact == true)
        let serve = try ServeProcess(db: fixture.path, environment: Self.environment)
        let client = try RawHTTPClient(port: serve.port)
        for body in try Notifications.subscribed(count: 2) { #expect(try client.request("POST", "/notifications", body: body).status == 200) }
        #expect(try oldOnly.waitForRecords { $0.count == 2 }.count == 2)
        #expect(try newOnly.waitForRecords { $0.count == 2 }.count == 2)
        #expect(try oldOnly.refusals().isEmpty && newOnly.refusals().isEmpty)
        #expect(serve.stop() == 0)
    }

    @Test("an endpoint that keeps answering 500: retried until the span ends, then the delivery fails and the endpoint is marked failing (metric, log line, deliveries --failed); redeliver queues it again")
    func failingEndpoint() throws {
        let fixture = try LedgerFixture()
        let secret = WebhookSecret.generate()
        let receiver = try ReferenceReceiver(secrets: [secret.revealedText], options: ["--status", "500"])
        try Self.addEndpoint(db: fixture.path, port: receiver.port, secret: secret, types: [WebhookMessageType.accessChanged])
        let serve = try ServeProcess(db: fixture.path, extra: ["--webhook-retry-delays", "1", "--webhook-give-up-after", "3"],
                                     environment: Self.environment)
        let client = try RawHTTPClient(port: serve.port)
        #expect(try client.request("POST", "/notifications", body: try Notifications.subscribed(count: 1)[0]).status == 200)
        // The log line that says it gave up (the process's own output, read as it writes it).
        let deadline = Date().addingTimeInterval(60)
        while !serve.logLines().contains(where: { $0.contains("\"webhook_delivery_failed\"") }), Date() < deadline { usleep(50_000) }
        let failedLine = try #require(serve.logLines().first { $0.contains("\"webhook_delivery_failed\"") })
        #expect(failedLine.contains("wh_00000000000000a1") && failedLine.contains("answered 500"))
        #expect(!failedLine.contains(secret.revealedText))
        let metrics = try client.request("GET", "/metrics").text
        #expect(metrics.contains("seatledger_webhook_endpoints_failing{ledger=\"default\"} 1\n"))
        #expect(metrics.contains("seatledger_webhook_attempts_total{ledger=\"default\",outcome=\"failed\"} 1\n"))
        #expect(serve.stop() == 0)
        let failed = try CLIRun.run(["webhook", "deliveries", "--failed", "--attempts", "--json", "--db", fixture.path])
        #expect(failed.status == 0, "\(failed.stderr)")
        let text = String(decoding: failed.stdout, as: UTF8.self)
        #expect(text.contains("\"failed\"") && text.contains("500"), "\(text)")
        // Every attempt was answered 500 and is kept: at least two (the first and a retry a second later).
        #expect(try receiver.records().isEmpty)
        let list = try CLIRun.run(["webhook", "list", "--json", "--db", fixture.path])
        #expect(String(decoding: list.stdout, as: UTF8.self).contains("failingSince"))
        let redeliver = try CLIRun.run(["webhook", "redeliver", "--since", "2000-01-01T00:00:00Z", "--db", fixture.path])
        #expect(redeliver.status == 0, "\(redeliver.stderr)")
        let pending = try CLIRun.run(["webhook", "deliveries", "--json", "--db", fixture.path])
        #expect(String(decoding: pending.stdout, as: UTF8.self).contains("\"pending\""))
    }

    @Test("kill -9 of serve again and again while the receiver fails, times out and drops connections: every transition is delivered, and the de-duplicated fold equals the feed")
    func survivesKills() throws {
        let fixture = try LedgerFixture()
        let secret = WebhookSecret.generate()
        let receiver = try ReferenceReceiver(secrets: [secret.revealedText],
                                             options: ["--chaos", "7", "--fail-rate", "0.3", "--timeout-rate", "0.05", "--close-rate", "0.1", "--hang-seconds", "3"])
        try Self.addEndpoint(db: fixture.path, port: receiver.port, secret: secret, types: [WebhookMessageType.accessChanged])
        let bodies = try Notifications.subscribed(count: 40)
        var posted = 0
        var round = 0
        let environment = Self.environment
        // Retries a second apart (the operator's option), so the chaos is survived in seconds.
        let extra = ["--webhook-retry-delays", "1"]
        while posted < bodies.count || round < 3 {
            let serve = try ServeProcess(db: fixture.path, extra: extra, environment: environment)
            let client = try RawHTTPClient(port: serve.port)
            for body in bodies[posted..<min(bodies.count, posted + 10)] {
                #expect(try client.request("POST", "/notifications", body: body).status == 200)
                posted += 1
            }
            _ = serve.stop(signal: SIGKILL)
            round += 1
        }
        let token = try addToken("reader", scope: "read", db: fixture.path)
        let serve = try ServeProcess(db: fixture.path, extra: extra, environment: environment)
        let client = try RawHTTPClient(port: serve.port)
        // The feed, read with long polls until it holds every notification's transition.
        var changes: [JSONValue] = []
        var polls = 0
        while changes.count < 40, polls < 30 {
            let page = try JSONValue.parse(bytes: Array(try client.request("GET", "/v1/access-changes?limit=1000&wait=5&after=\(changes.count)",
                                                                            headers: [("Authorization", "Bearer \(token)")]).body))
            changes += page["changes"]?.arrayValue ?? []
            polls += 1
        }
        let feed: JSONValue = ["changes": .array(changes)]
        let feedIds = Set(changes.compactMap { $0["transition"]?["id"]?.stringValue })
        #expect(feedIds.count == 40)
        let records = try receiver.waitForRecords(seconds: 120) { records in
            Set(records.compactMap { $0["webhookId"]?.stringValue }).isSuperset(of: feedIds)
        }
        // De-duplicated by webhook-id, folded in feed order: each key's last `after` is the feed's.
        var byId: [String: JSONValue] = [:]
        for record in records { if let id = record["webhookId"]?.stringValue { byId[id] = record["body"]?["data"] } }
        #expect(Set(byId.keys) == feedIds)
        for change in feed["changes"]?.arrayValue ?? [] {
            let id = change["transition"]?["id"]?.stringValue ?? ""
            #expect(byId[id] == change["transition"], "\(id)")
        }
        #expect(serve.stop() == 0)
    }
}
