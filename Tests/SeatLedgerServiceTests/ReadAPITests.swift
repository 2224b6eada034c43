import AppStoreModels
import EventStore
import Foundation
import HTTPTestSupport
import LedgerStorage
import SeatLedger
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
        #expect(serve.stop() == 0)
    }

    @Test("the change feed lists committed events in position order with their group keys, and long-polls for the next")
    func changeFeed() async throws {
        let fixture = try LedgerFixture()
        let bodies = try Notifications.subscribed(count: 4, offset: 500)
        let token = try addToken("feed", scope: "read", db: fixture.path)
        let serve = try ServeProcess(db: fixture.path)
        let port = serve.port
        let auth = [("Authorization", "Bearer \(token)")]
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
        async let waited = onThread { try json(RawHTTPClient(port: port, timeoutSeconds: 30).request("GET", "/v1/changes?after=3&wait=20", headers: auth)) }
        // Post the fourth once the long-poll is waiting: two requests in flight, it and the scrape.
        try await onThread {
            let client = try RawHTTPClient(port: port)
            #expect(waitUntil(timeout: .seconds(15)) {
                (try? client.request("GET", "/metrics").text.contains("seatledger_http_requests_in_flight 2")) == true
            })
            #expect(try client.request("POST", "/notifications", body: bodies[3]).status == 200)
        }
        let result = try await waited
        #expect(result["changes"]?.arrayValue?.map { $0["position"]?.int64Value } == [4])
        #expect(result["changes"]?.arrayValue?.first?["groupKeys"] == [.string(String(2_100_000_000_000_503))])
        #expect(serve.stop() == 0)
    }
}
