import AppStoreModels
import Foundation
import HTTPServer
import HTTPTestSupport
import LedgerStorage
import SeatLedger
import SeatLedgerService
import Synchronization
import Testing

@Suite("serve: the read API answers exactly what the CLI's --json prints; the change feed", .serialized)
struct ReadAPITests {
    static let now = "2026-12-01T00:00:00Z"

    @Test("groups, group show, member show, replay, diff and audit equal the CLI's --json for the same ledger and clocks")
    func equalsCLI() throws {
        let fixture = try LedgerFixture()
        let files = try FileManager.default.contentsOfDirectory(at: Repository.scenarios, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "ndjson" }.sorted { $0.path < $1.path }
        let ingest = try CLIRun.run(["ingest", "--api-responses", "--db", fixture.path] + files.prefix(8).map(\.path))
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let token = try addToken("reader", scope: "read", db: fixture.path)
        let environment = ["SEATLEDGER_NOW": Self.now]
        let serve = try ServeProcess(db: fixture.path, environment: environment)
        let client = try RawHTTPClient(port: serve.port)
        let auth = [("Authorization", "Bearer \(token)")]
        func cli(_ arguments: [String]) throws -> CLIRun { try CLIRun.run(arguments + ["--db", fixture.path], environment: environment) }
        func get(_ path: String) throws -> RawHTTPResponse {
            let response = try client.request("GET", path, headers: auth)
            #expect(response.status == 200, "\(path): \(response.text)")
            return response
        }

        let groupsCLI = try JSONValue.parse(bytes: Array(try cli(["groups", "--json"]).stdout))
        let keys = try #require(groupsCLI.arrayValue).compactMap { $0["groupKey"]?.stringValue }
        #expect(keys.count >= 3)
        #expect(try json(get("/v1/groups?limit=1000"))["groups"] == .array(try #require(groupsCLI.arrayValue).sorted {
            ($0["groupKey"]?.stringValue ?? "") < ($1["groupKey"]?.stringValue ?? "")
        }))
        // Pagination walks every group once, in key order.
        var paged: [String] = []
        var cursor: String?
        repeat {
            let page = try json(get("/v1/groups?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")))
            paged += page["groups"]?.arrayValue?.compactMap { $0["groupKey"]?.stringValue } ?? []
            cursor = page["nextCursor"]?.stringValue
        } while cursor != nil
        #expect(paged == keys.sorted())
        // The filters keep exactly the CLI's groups with that status (any case) or product.
        let byKey = try #require(groupsCLI.arrayValue).sorted { ($0["groupKey"]?.stringValue ?? "") < ($1["groupKey"]?.stringValue ?? "") }
        let statuses = Set(byKey.compactMap { $0["status"]?.stringValue })
        #expect(!statuses.isEmpty)
        for status in statuses {
            #expect(try json(get("/v1/groups?limit=1000&status=\(status.lowercased())"))["groups"]
                    == .array(byKey.filter { $0["status"]?.stringValue == status }), "status \(status)")
        }
        let products = Set(byKey.compactMap { $0["productId"]?.stringValue })
        #expect(!products.isEmpty)
        for product in products {
            #expect(try json(get("/v1/groups?limit=1000&product=\(product)"))["groups"]
                    == .array(byKey.filter { $0["productId"]?.stringValue == product }), "product \(product)")
        }
        let badStatus = try client.request("GET", "/v1/groups?status=ACTVE", headers: auth)
        #expect(badStatus.status == 400)
        let badStatusMessage = try json(badStatus)["message"]?.stringValue ?? ""
        #expect(badStatusMessage.contains("status=ACTVE") && badStatusMessage.contains("ACTIVE, BILLING_RETRY"), "\(badStatusMessage)")

        let asOf = "2025-06-15T00:00:00Z", knownAt = "2026-11-30T00:00:00Z"
        var membersCompared = 0
        for key in keys {
            let show = try cli(["group", "show", key, "--json"])
            #expect(try get("/v1/groups/\(key)").body == show.stdout, "group \(key)")
            let pinned = try cli(["group", "show", key, "--as-of", asOf, "--known-at", knownAt, "--json"])
            #expect(try get("/v1/groups/\(key)?asOf=\(asOf)&knownAt=\(knownAt)").body == pinned.stdout, "group \(key) at \(asOf)")
            let group = try JSONValue.parse(bytes: Array(show.stdout))
            for member in group["members"]?.arrayValue ?? [] {
                guard let id = member["appTransactionId"]?.stringValue ?? member["originalTransactionId"]?.stringValue else { continue }
                let memberCLI = try cli(["member", "show", id, "--json"])
                let api = try json(get("/v1/members/\(id)"))
                #expect(api["memberships"] == (try JSONValue.parse(bytes: Array(memberCLI.stdout))), "member \(id)")
                let access = api["memberships"]?.arrayValue?.contains { $0["member"]?["hasAccess"]?.boolValue == true } ?? false
                #expect(api["hasAccess"]?.boolValue == access)
                membersCompared += 1
            }
            #expect(try get("/v1/groups/\(key)/replay").body == (try cli(["replay", key, "--json"])).stdout, "replay \(key)")
            #expect(try get("/v1/groups/\(key)/audit?format=json").body == (try cli(["audit", "group", key, "--json"])).stdout, "audit \(key)")
            #expect(try get("/v1/groups/\(key)/audit?format=markdown").body
                    == (try cli(["audit", "group", key, "--format", "markdown"])).stdout, "audit markdown \(key)")
            let diff = try cli(["diff", key, "--known-at", "2020-01-01T00:00:00Z", "--known-at", knownAt, "--json"])
            #expect(try get("/v1/groups/\(key)/diff?knownAt=2020-01-01T00:00:00Z&knownAt=\(knownAt)").body == diff.stdout, "diff \(key)")
        }
        #expect(membersCompared > 0)
        let missing = try client.request("GET", "/v1/members/no-such-member", headers: auth)
        #expect(missing.status == 404)
        #expect(try json(missing)["message"]?.stringValue?.contains("no-such-member") == true)
        let badClock = try client.request("GET", "/v1/groups/\(keys[0])?asOf=yesterday", headers: auth)
        #expect(badClock.status == 400)
        #expect(try json(badClock)["message"]?.stringValue?.contains("asOf=yesterday") == true)
        let farClock = try client.request("GET", "/v1/groups/\(keys[0])?asOf=253402300800000", headers: auth)
        #expect(farClock.status == 400)
        #expect(try json(farClock)["message"]?.stringValue?.contains("asOf=253402300800000 is not in the years 0001 to 9999 (epoch milliseconds -62135596800000 to 253402300799999)") == true)
        #expect(serve.stop() == 0)
    }

    /// A fresh ledger served on loopback, and the header of a read token for it.
    static func feedServer() throws -> (LedgerFixture, ServeProcess, [(String, String)]) {
        let fixture = try LedgerFixture()
        let token = try addToken("feed", scope: "read", db: fixture.path)
        return (fixture, try ServeProcess(db: fixture.path), [("Authorization", "Bearer \(token)")])
    }

    @Test("the change feed lists committed events in position order with their group keys, and long-polls for the next")
    func changeFeed() async throws {
        let bodies = try Notifications.subscribed(count: 4, offset: 500)
        let (fixture, serve, auth) = try Self.feedServer()
        defer { withExtendedLifetime(fixture) {} }   // the ledger's directory lives as long as the server
        let port = serve.port
        try await onThread {
            let client = try RawHTTPClient(port: port)
            for body in bodies.prefix(3) { #expect(try client.request("POST", "/notifications", body: body).status == 200) }
            let feed = try json(client.request("GET", "/v1/changes?after=0", headers: auth))
            let changes = try #require(feed["changes"]?.arrayValue)
            #expect(changes.map { $0["position"]?.int64Value } == [1, 2, 3])
            #expect(changes.map { $0["groupKeys"] } == (500..<503).map { JSONValue.array([.string(String(2_100_000_000_000_000 + $0))]) })
            #expect(feed["next"]?.int64Value == 3)
            let empty = try json(client.request("GET", "/v1/changes?after=3&wait=0", headers: auth))
            #expect(empty["changes"]?.arrayValue?.isEmpty == true && empty["next"]?.int64Value == 3)
        }
        let waited = StartedThread { try json(RawHTTPClient(port: port, timeoutSeconds: 30).request("GET", "/v1/changes?after=3&wait=20", headers: auth)) }
        // Post the fourth once the long-poll is waiting: two requests in flight, it and the scrape.
        try await onThread {
            let client = try RawHTTPClient(port: port)
            #expect(waitUntil(timeout: .seconds(15)) {
                (try? client.request("GET", "/metrics").text.contains("seatledger_http_requests_in_flight 2")) == true
            })
            #expect(try client.request("POST", "/notifications", body: bodies[3]).status == 200)
        }
        let result = try await waited.value()
        #expect(result["changes"]?.arrayValue?.map { $0["position"]?.int64Value } == [4])
        #expect(result["changes"]?.arrayValue?.first?["groupKeys"] == [.string(String(2_100_000_000_000_503))])
        #expect(serve.stop() == 0)
    }

    @Test("the change feed refuses a cursor past the head (409 with the head; after = Int64.max included), and SIGTERM answers a long poll in flight at once and drains")
    func changeFeedEdges() async throws {
        let body = try #require(try Notifications.subscribed(count: 1, offset: 600).first)
        let (fixture, serve, auth) = try Self.feedServer()
        defer { withExtendedLifetime(fixture) {} }   // the ledger's directory lives as long as the server
        let port = serve.port
        try await onThread {
            let client = try RawHTTPClient(port: port)
            #expect(try client.request("POST", "/notifications", body: body).status == 200)
            for after in ["2", "9223372036854775807"] {
                let past = try client.request("GET", "/v1/changes?after=\(after)&limit=1000", headers: auth)
                let answer = try json(past)
                #expect(past.status == 409 && answer["error"] == "cursor_past_head" && answer["head"]?.int64Value == 1, "after=\(after): \(answer)")
                #expect(answer["message"]?.stringValue?.contains("after=\(after) is past the ledger's head, position 1") == true)
            }
            let atHead = try json(client.request("GET", "/v1/changes?after=1&limit=1000", headers: auth))
            #expect(atHead["changes"]?.arrayValue?.isEmpty == true && atHead["next"]?.int64Value == 1 && atHead["head"]?.int64Value == 1)
        }
        // A long poll waiting for a minute when SIGTERM comes: answered at once, not cut off by the drain's timeout.
        let waited = StartedThread { try RawHTTPClient(port: port, timeoutSeconds: 90).request("GET", "/v1/changes?after=1&wait=60", headers: auth) }
        try await onThread {
            let client = try RawHTTPClient(port: port)
            #expect(waitUntil(timeout: .seconds(15)) {
                (try? client.request("GET", "/metrics").text.contains("seatledger_http_requests_in_flight 2")) == true
            })
        }
        #expect(serve.stop(signal: SIGTERM) == 0)
        let answer = try await waited.value()
        #expect(answer.status == 200)
        let page = try json(answer)
        #expect(page["changes"]?.arrayValue?.isEmpty == true && page["next"]?.int64Value == 1, "\(page)")
        let stops = serve.logLines().compactMap { try? JSONValue.parse(bytes: Array($0.utf8)) }.filter { $0["event"] == "stop" }
        #expect(stops.map { $0["drained"] } == [.bool(true)], "\(serve.logLines().suffix(3))")
    }
}

/// `LedgerService.handleImmediately`: the answers the polling thread gives itself are the async
/// handler's answers, and it takes nothing else.
@Suite("serve: the reads answered on the polling thread")
struct ImmediateReadTests {
    @Test("GET /v1/members/{id} and /v1/groups/{ref}, their errors (400, 401, 403, 404) equal handle(); every other request is left to it")
    func sameAsAsyncHandler() async throws {
        let fixture = try LedgerFixture()
        let files = try FileManager.default.contentsOfDirectory(at: Repository.scenarios, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "ndjson" }.sorted { $0.path < $1.path }
        let ingest = try CLIRun.run(["ingest", "--api-responses", "--db", fixture.path] + files.prefix(4).map(\.path))
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let reader = try addToken("reader", scope: "read", db: fixture.path)
        let seats = try addToken("seats", scope: "seats", db: fixture.path)
        let pool = try LedgerPool.open(path: fixture.path, readers: 2)
        let now = try #require(Timestamp.parse(ReadAPITests.now))
        let service = try LedgerService(pool: pool, configuration: .init(http: .init(port: 0), ledgerDescription: fixture.path, now: { now }),
                                        log: RequestLog { _ in })
        let keys = try await pool.read { ledger in try ledger.store.allGroupKeys() }
        let key = try #require(keys.first)
        let state = try await pool.read { ledger in try ledger.groupState(key, asOf: now).json }
        let member = try #require(state["members"]?.arrayValue?.first.flatMap { $0["appTransactionId"]?.stringValue ?? $0["originalTransactionId"]?.stringValue })
        func request(_ method: String, _ path: String, query: [(name: String, value: String)] = [], token: String? = reader) -> HTTPRequest {
            HTTPRequest(method: method, path: path, query: query, headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [], body: Data())
        }
        let taken = [
            request("GET", "/v1/members/\(member)"),
            request("GET", "/v1/members/\(member)", query: [("asOf", "2025-06-15T00:00:00Z")]),
            request("GET", "/v1/groups/\(key)"),
            request("HEAD", "/v1/groups/\(key)"),
            request("GET", "/v1/groups/\(key)", query: [("knownAt", "2020-01-01T00:00:00Z")]),
            request("GET", "/v1/members/no-such-member"),                       // 404
            request("GET", "/v1/groups/\(key)", query: [("asOf", "yesterday")]),  // 400
            request("GET", "/v1/groups/\(key)", token: nil),                     // 401
            request("GET", "/v1/members/\(member)", token: "slt_unknown"),       // 401
            request("GET", "/v1/members/\(member)", token: seats),               // 403
        ]
        var statuses: [Int] = []
        for item in taken {
            let now = try #require(answeredNow(service.handleImmediately(item)), "\(item.method) \(item.path) is answered on the polling thread")
            let later = await service.handle(item)
            #expect(now.status == later.status, "\(item.path)")
            #expect(now.body == later.body, "\(item.path)")
            #expect(now.headers.map { "\($0.name): \($0.value)" } == later.headers.map { "\($0.name): \($0.value)" }, "\(item.path)")
            statuses.append(now.status)
        }
        #expect(statuses == [200, 200, 200, 200, 200, 404, 400, 401, 401, 403])
        #expect(try JSONValue.parse(bytes: Array(try #require(answeredNow(service.handleImmediately(taken[2]))).body)) == state)
        let left = [
            request("POST", "/v1/members/\(member)"), request("GET", "/v1/groups"), request("GET", "/v1/changes"),
            request("GET", "/v1/groups/\(key)/replay"), request("GET", "/v1/members/"), request("GET", "/v1//\(member)"),
            request("GET", "/notifications"), request("PUT", "/notifications"), request("GET", "/healthz"), request("GET", "/nowhere"),
        ]
        for item in left {
            guard case .notTaken = service.handleImmediately(item) else { Issue.record("\(item.method) \(item.path) was taken"); continue }
        }
        await service.shutdown(drainTimeout: .seconds(5))
    }

    @Test("POST /notifications is started on the polling thread and answered once durable, as handle() answers it: appended, duplicate, quarantined; 503 once the pool is closed")
    func notificationsLater() async throws {
        let fixture = try LedgerFixture()
        let pool = try LedgerPool.open(path: fixture.path, readers: 1)
        let service = try LedgerService(pool: pool, configuration: .init(http: .init(port: 0), ledgerDescription: fixture.path),
                                        log: RequestLog { _ in })
        let bodies = try Notifications.subscribed(count: 2)
        func post(_ body: Data) -> HTTPRequest { HTTPRequest(method: "POST", path: "/notifications", body: body) }
        func later(_ request: HTTPRequest) async throws -> (status: Int, json: JSONValue, headers: [String]) {
            guard case .later(let start) = service.handleImmediately(request) else { throw FixtureError("POST /notifications was not started on the polling thread") }
            let response = await withCheckedContinuation { (continuation: CheckedContinuation<HTTPResponse, Never>) in
                start { answer in continuation.resume(returning: answer()) }
            }
            return (response.status, try JSONValue.parse(bytes: Array(response.body)), response.headers.map { "\($0.name): \($0.value)" })
        }
        let first = try await later(post(bodies[0]))
        #expect(first.status == 200 && first.json["result"] == "appended" && first.json["positions"] == [1])
        // The same body again, either way: a duplicate of position 1.
        let again = try await later(post(bodies[0]))
        #expect(again.status == 200 && again.json == ["result": "duplicate", "existingPosition": 1])
        let viaHandle = await service.handle(post(bodies[0]))
        #expect(viaHandle.status == 200)
        #expect(try JSONValue.parse(bytes: Array(viaHandle.body)) == again.json)
        let second = try await later(post(bodies[1]))
        #expect(second.json["positions"] == [2])
        // An API-response envelope and bytes that are not JSON: quarantined with their raw bytes, 200.
        let envelope = try await later(post(Data(#"{"apiResponse":{"kind":"transactionInfo"}}"#.utf8)))
        #expect(envelope.status == 200 && envelope.json["result"] == "quarantined" && envelope.json["errorCode"] == "api_response_on_webhook")
        let garbage = try await later(post(Data("not json".utf8)))
        #expect(garbage.status == 200 && garbage.json["result"] == "quarantined")
        let (events, quarantined) = try await pool.read { ledger in
            (try ledger.store.eventCount(), try ledger.store.quarantine(state: nil, limit: 100))
        }
        #expect(events == 2)
        #expect(quarantined.map { String(decoding: $0.raw, as: UTF8.self) }.sorted() == ["not json", #"{"apiResponse":{"kind":"transactionInfo"}}"#])
        let state = ServiceMetrics.LedgerState(name: "default", headPosition: 2, newestEventAgeSeconds: nil, openQuarantineItems: 2)
        let text = service.metrics.render(ledgers: [state], inFlight: 0, build: ServiceBuild(version: "v", commit: "c"))
        #expect(text.contains("seatledger_notifications_appended_total{ledger=\"default\"} 2\n"))
        #expect(text.contains("seatledger_notifications_quarantined_total{ledger=\"default\",reason=\"api_response_on_webhook\"} 1\n"))
        await pool.close()
        let closed = try await later(post(bodies[1]))
        #expect(closed.status == 503 && closed.json["error"] == "not_stored" && closed.headers.contains("Retry-After: 5"))
        await service.shutdown(drainTimeout: .seconds(5))
    }
}

/// `RouteParameters`: what a `/v1` route does not take is refused, not ignored.
@Suite("serve: query parameters a route does not take")
struct RouteParameterTests {
    @Test("an unknown or repeated query parameter on a /v1 route is a 400 naming it and what the route takes, from handle() and the polling thread alike; /notifications keeps its query string")
    func refused() async throws {
        let fixture = try LedgerFixture()
        let reader = try addToken("reader", scope: "read", db: fixture.path)
        let seats = try addToken("seats", scope: "seats", db: fixture.path)
        let pool = try LedgerPool.open(path: fixture.path, readers: 1)
        let service = try LedgerService(pool: pool, configuration: .init(http: .init(port: 0), ledgerDescription: fixture.path),
                                        log: RequestLog { _ in })
        let g = "2000000000000001"
        // (method, path, query, token, the message's words)
        let cases: [(String, String, [(name: String, value: String)], String, [String])] = [
            ("GET", "/v1/members/m1", [("asof", "2025-06-15T00:00:00Z")], reader,
             ["unknown query parameter asof (did you mean asOf?)", "/v1/members/{id} takes ledger, asOf, knownAt"]),
            ("GET", "/v1/groups/\(g)", [("asOf", "2025-06-15T00:00:00Z"), ("knownat", "2025-06-15T00:00:00Z")], reader,
             ["unknown query parameter knownat (did you mean knownAt?)", "/v1/groups/{ref} takes ledger, asOf, knownAt"]),
            ("GET", "/v1/groups/\(g)", [("asOf", "2025-06-15T00:00:00Z"), ("asOf", "2026-06-15T00:00:00Z")], reader,
             ["query parameter asOf is given 2 times; give it once"]),
            ("GET", "/v1/groups", [("page", "2")], reader,
             ["unknown query parameter page: /v1/groups takes ledger, asOf, knownAt, limit, cursor, status, product"]),
            ("GET", "/v1/groups", [("limit", "1"), ("limit", "500")], reader, ["query parameter limit is given 2 times; give it once"]),
            ("GET", "/v1/groups/\(g)/replay", [("asOf", "2025-06-15T00:00:00Z")], reader,
             ["unknown query parameter asOf: /v1/groups/{ref}/replay takes ledger, from, to, knownAt"]),
            ("GET", "/v1/groups/\(g)/diff", [("knownAt", "1"), ("knownAt", "2"), ("knownAt", "3")], reader,
             ["query parameter knownAt is given 3 times; give it at most 2 times"]),
            ("GET", "/v1/groups/\(g)/audit", [("fmt", "html")], reader, ["unknown query parameter fmt: /v1/groups/{ref}/audit takes ledger, format, asOf"]),
            ("GET", "/v1/changes", [("since", "0")], reader, ["unknown query parameter since: /v1/changes takes ledger, after, limit, wait"]),
            ("DELETE", "/v1/groups/\(g)/seats/claim-1", [("force", "1")], seats,
             ["unknown query parameter force: /v1/groups/{ref}/seats/{seatClaimId} takes ledger"]),
        ]
        for (method, path, query, token, words) in cases {
            let request = HTTPRequest(method: method, path: path, query: query, headers: [("Authorization", "Bearer \(token)")])
            let response = await service.handle(request)
            let body = try JSONValue.parse(bytes: Array(response.body))
            let message = body["message"]?.stringValue ?? ""
            #expect(response.status == 400 && body["error"] == "bad_parameter", "\(path) \(query): \(response.status) \(message)")
            for word in words { #expect(message.contains(word), "\(path) \(query): \(message)") }
            if case .response(let now) = service.handleImmediately(request) {
                #expect(now.status == response.status && now.body == response.body, "\(path) on the polling thread")
            }
        }
        // Without a token the unknown parameter is not looked at: 401 first, as for any /v1 read.
        let anonymous = await service.handle(HTTPRequest(method: "GET", path: "/v1/members/m1", query: [("asof", "x")]))
        #expect(anonymous.status == 401)
        // A notification URL with a query string of its own (configured so in App Store Connect) is stored.
        let body = try #require(try Notifications.subscribed(count: 1).first)
        let posted = await service.handle(HTTPRequest(method: "POST", path: "/notifications", query: [("env", "production")], body: body))
        #expect(posted.status == 200)
        #expect(try JSONValue.parse(bytes: Array(posted.body))["result"] == "appended")
        await service.shutdown(drainTimeout: .seconds(5))
        await pool.close()
    }
}

/// The response of an immediate answer given now, or `nil`.
private func answeredNow(_ answer: ImmediateAnswer) -> HTTPResponse? {
    guard case .response(let response) = answer else { return nil }
    return response
}
