import AppStoreModels
import Foundation
import HTTPServer
import HTTPTestSupport
import LedgerStorage
import SeatLedger
@testable import SeatLedgerService
import Testing

/// One service over four ledgers (two apps × Sandbox and Production), answered in process by
/// ``LedgerService/handle(_:)``: routing of notifications, tokens per ledger, reads across
/// ledgers. The real-process version (PostgreSQL mixed in, `kill -9`, an outage) is
/// ``DeploymentProcessTests``.
@Suite("serve: several ledgers in one service", .serialized)
struct MultiLedgerServiceTests {
    /// The four ledgers, their service, and tokens.
    final class Deployment: @unchecked Sendable {
        let fixtures: [String: LedgerFixture]
        let service: LedgerService

        init() throws {
            var fixtures: [String: LedgerFixture] = [:]
            var served: [ServedLedger] = []
            for (name, bundleId, environment) in [("reps-production", "com.example.reps", AppStoreEnvironment.production),
                                                  ("reps-sandbox", "com.example.reps", .sandbox),
                                                  ("focus-production", "com.example.focus", .production),
                                                  ("focus-sandbox", "com.example.focus", .sandbox)] {
                let fixture = try LedgerFixture(bundleId: bundleId, environment: environment)
                fixtures[name] = fixture
                served.append(try ServedLedger(name: name, pool: try LedgerPool.open(path: fixture.path, readers: 2), location: fixture.path))
            }
            self.fixtures = fixtures
            service = try LedgerService(ledgers: served, unroutable: served[0],
                                        configuration: .init(http: .init(port: 0), ledgerDescription: "four ledgers",
                                                             now: { Timestamp.parse("2025-06-05T00:00:00Z")! }),
                                        log: RequestLog { _ in })
        }

        /// Stores one token (the same secret) with `scope` in each of `ledgers`.
        func token(_ name: String, scope: String, in ledgers: [String]) throws -> String {
            let token = TokenAuthenticator.mintToken()
            for ledger in ledgers {
                // Through its own handle, as `seatledger token add` writes it; the service sees it within a second.
                try Ledger.open(path: try #require(fixtures[ledger]).path).store
                    .addAPIToken(name: name, scope: scope, sha256: TokenAuthenticator.digest(token), now: 1)
            }
            return token
        }

        func request(_ method: String, _ path: String, query: [(name: String, value: String)] = [], token: String? = nil,
                     body: Data = Data()) async -> HTTPResponse {
            await service.handle(HTTPRequest(method: method, path: path, query: query,
                                             headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [], body: body))
        }

        func events(_ ledger: String) throws -> Int {
            Int(try #require(service.ledger(named: ledger)).pool.blockingRead { ledger in try ledger.store.eventCount() })
        }

        func quarantine(_ ledger: String) throws -> [QuarantineRecord] {
            try #require(service.ledger(named: ledger)).pool.blockingRead { ledger in try ledger.store.quarantine(state: nil, limit: 100) }
        }
    }

    static func json(_ response: HTTPResponse) throws -> JSONValue { try JSONValue.parse(bytes: [UInt8](response.body)) }

    static func header(_ response: HTTPResponse, _ name: String) -> String? {
        response.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    @Test("POST /notifications lands in the ledger of the payload's app and environment; one that fits none is kept in quarantine, answered 200")
    func routedByPayload() async throws {
        let deployment = try Deployment()
        let cases = [("reps-production", "com.example.reps", "Production"), ("reps-sandbox", "com.example.reps", "Sandbox"),
                     ("focus-production", "com.example.focus", "Production"), ("focus-sandbox", "com.example.focus", "Sandbox")]
        for (offset, (_, bundleId, environment)) in cases.enumerated() {
            for body in try Notifications.subscribed(count: offset + 1, bundleId: bundleId, environment: environment) {
                let answer = await deployment.request("POST", "/notifications", body: body)
                #expect(answer.status == 200)
                #expect(try Self.json(answer)["result"] == "appended", "\(bundleId) \(environment)")
            }
        }
        for (offset, (name, _, _)) in cases.enumerated() {
            #expect(try deployment.events(name) == offset + 1, "\(name)")
        }
        // A fifth app: 200, kept with its raw bytes in the unroutable ledger's quarantine, appended nowhere.
        let stranger = try Notifications.subscribed(count: 1, bundleId: "com.example.other", environment: "Sandbox")[0]
        let answer = await deployment.request("POST", "/notifications", body: stranger)
        #expect(answer.status == 200)
        #expect(try Self.json(answer)["errorCode"] == "no_ledger_for_notification")
        let kept = try deployment.quarantine("reps-production")
        #expect(kept.count == 1 && kept[0].raw == stranger && kept[0].errorCode == .noLedgerForNotification)
        #expect(kept[0].reason.contains("com.example.other") && kept[0].reason.contains("Sandbox"))
        for (offset, (name, _, _)) in cases.enumerated() { #expect(try deployment.events(name) == offset + 1) }

        // /metrics labels the notification counters by ledger.
        let metrics = String(decoding: await deployment.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("seatledger_notifications_appended_total{ledger=\"focus-sandbox\"} 4\n"))
        #expect(metrics.contains("seatledger_notifications_quarantined_total{ledger=\"reps-production\",reason=\"no_ledger_for_notification\"} 1\n"))
        #expect(metrics.contains("seatledger_ledger_head_position{ledger=\"focus-production\"} 3\n"))
    }

    @Test("POST /notifications/{ledger} appends to that ledger (which still refuses another app's payload); an unknown name is kept, answered 200")
    func routedByPath() async throws {
        let deployment = try Deployment()
        let body = try Notifications.subscribed(count: 1, bundleId: "com.example.focus", environment: "Sandbox")[0]
        let answer = await deployment.request("POST", "/notifications/focus-sandbox", body: body)
        #expect(try Self.json(answer)["result"] == "appended")
        #expect(try deployment.events("focus-sandbox") == 1)
        // The path names a ledger of another environment: that ledger verifies and refuses it.
        let wrong = await deployment.request("POST", "/notifications/focus-production", body: body)
        #expect(try Self.json(wrong)["errorCode"] == "environment_mismatch")
        #expect(try deployment.events("focus-production") == 0)
        let typo = await deployment.request("POST", "/notifications/focus-sandbx", body: body)
        #expect(typo.status == 200)
        #expect(try Self.json(typo)["errorCode"] == "no_ledger_for_notification")
        #expect(try deployment.quarantine("reps-production").map(\.errorCode.rawValue) == ["no_ledger_for_notification"])
    }

    @Test("a token opens the ledgers that hold it: another app's customers are 403 by name and not found by search")
    func tokensPerLedger() async throws {
        let deployment = try Deployment()
        for (ledger, bundleId, environment) in [("reps-sandbox", "com.example.reps", "Sandbox"), ("focus-sandbox", "com.example.focus", "Sandbox")] {
            for body in try Notifications.subscribed(count: 1, bundleId: bundleId, environment: environment) {
                _ = await deployment.request("POST", "/notifications/\(ledger)", body: body)
            }
        }
        let reps = try deployment.token("reps-app", scope: "read", in: ["reps-production", "reps-sandbox"])
        // Made before the first request reads the token tables (they are re-read at most once a second).
        let focus = try deployment.token("focus-app", scope: "read", in: ["focus-sandbox"])
        // The same original transaction id exists in both apps' Sandbox ledgers (as built here).
        let id = "2100000000000000"
        let found = await deployment.request("GET", "/v1/entitlements/\(id)", token: reps)
        #expect(found.status == 200)
        #expect(Self.header(found, "SeatLedger-Ledger") == "reps-sandbox")
        #expect(try Self.json(found)["bundleId"] == "com.example.reps")
        let forbidden = await deployment.request("GET", "/v1/entitlements/\(id)", query: [("ledger", "focus-sandbox")], token: reps)
        #expect(forbidden.status == 403)
        #expect(try Self.json(forbidden)["message"]?.stringValue?.contains("does not open ledger focus-sandbox") == true)
        let unknown = await deployment.request("GET", "/v1/groups", query: [("ledger", "nope")], token: reps)
        #expect(unknown.status == 404)
        #expect(try Self.json(unknown)["error"] == "unknown_ledger")
        // A page needs one ledger: the token opens two.
        let page = await deployment.request("GET", "/v1/groups", token: reps)
        #expect(page.status == 400)
        #expect(try Self.json(page)["error"] == "ledger_required")
        let named = await deployment.request("GET", "/v1/groups", query: [("ledger", "reps-sandbox")], token: reps)
        #expect(named.status == 200)
        #expect(try Self.json(named)["groups"]?.arrayValue?.count == 1)
        // A token for one ledger needs no `ledger` for a page.
        let own = await deployment.request("GET", "/v1/changes", token: focus)
        #expect(own.status == 200 && Self.header(own, "SeatLedger-Ledger") == "focus-sandbox")
        // A revoked or unknown token: 401.
        #expect(await deployment.request("GET", "/v1/changes", token: "slt_nothing").status == 401)
    }

    @Test("a person known to several ledgers: entitlements merged (each entry names its app and environment), memberships tagged, a group reference ambiguous")
    func readsAcrossLedgers() async throws {
        let deployment = try Deployment()
        for (ledger, environment) in [("reps-production", "Production"), ("reps-sandbox", "Sandbox")] {
            for body in try Notifications.subscribed(count: 1, bundleId: "com.example.reps", environment: environment) {
                _ = await deployment.request("POST", "/notifications/\(ledger)", body: body)
            }
        }
        let token = try deployment.token("reps-app", scope: "read", in: ["reps-production", "reps-sandbox"])
        let id = "2100000000000000"
        let merged = await deployment.request("GET", "/v1/entitlements/\(id)", token: token)
        #expect(merged.status == 200)
        let body = try Self.json(merged)
        #expect(body["bundleId"] == "com.example.reps" && body["environment"] == .null)
        let entries = try #require(body["entitlements"]?.arrayValue)
        #expect(entries.map { $0["environment"] } == ["Production", "Sandbox"])
        #expect(entries.allSatisfy { $0["entitled"] == true })
        // The ETag follows the answer; If-None-Match gives a 304 for the merged answer too.
        let tag = try #require(Self.header(merged, "ETag"))
        let again = await deployment.service.handle(HTTPRequest(method: "GET", path: "/v1/entitlements/\(id)",
                                                                 headers: [("Authorization", "Bearer \(token)"), ("If-None-Match", tag)]))
        #expect(again.status == 304)
        // One ledger named: exactly that ledger's answer, as `entitlements --json` prints it.
        let one = await deployment.request("GET", "/v1/entitlements/\(id)", query: [("ledger", "reps-sandbox")], token: token)
        let cli = try #require(deployment.service.ledger(named: "reps-sandbox")).pool.blockingRead { ledger in
            try ledger.entitlements(id, asOf: Timestamp.parse("2025-06-05T00:00:00Z")!).prettyJSON()
        }
        #expect(one.body == Data(cli + [UInt8(ascii: "\n")]))

        let members = try Self.json(await deployment.request("GET", "/v1/members/\(id)", token: token))
        #expect(members["hasAccess"] == true)
        #expect(members["memberships"]?.arrayValue?.map { $0["ledger"]?["name"] } == ["reps-production", "reps-sandbox"])

        let ambiguous = await deployment.request("GET", "/v1/groups/\(id)", token: token)
        #expect(ambiguous.status == 409)
        #expect(try Self.json(ambiguous)["error"] == "ambiguous_reference")
        let chosen = await deployment.request("GET", "/v1/groups/\(id)", query: [("ledger", "reps-production")], token: token)
        #expect(chosen.status == 200 && Self.header(chosen, "SeatLedger-App") == "com.example.reps Production")
        #expect(await deployment.request("GET", "/v1/groups/2199999999999999", token: token).status == 404)
    }

    @Test("/readyz reports each ledger; one ledger that cannot be written is not ready while the others are (200 degraded)")
    func readiness() async throws {
        let deployment = try Deployment()
        let all = try Self.json(await deployment.request("GET", "/readyz"))
        #expect(all["status"] == "ready")
        #expect(all["ledgers"]?.arrayValue?.map { $0["name"] } == ["reps-production", "reps-sandbox", "focus-production", "focus-sandbox"])
        await try #require(deployment.service.ledger(named: "focus-sandbox")).pool.close()
        let degraded = await deployment.request("GET", "/readyz")
        #expect(degraded.status == 200)
        let body = try Self.json(degraded)
        #expect(body["status"] == "degraded")
        #expect(body["ledgers"]?.arrayValue?.filter { $0["status"] == "not_ready" }.map { $0["name"] } == ["focus-sandbox"])
        #expect(await deployment.request("GET", "/readyz", query: [("ledger", "focus-sandbox")]).status == 503)
        // Its notifications are 503 (Apple retries); the others' are stored.
        let down = try Notifications.subscribed(count: 1, bundleId: "com.example.focus", environment: "Sandbox")[0]
        #expect(await deployment.request("POST", "/notifications", body: down).status == 503)
        let up = try Notifications.subscribed(count: 1, bundleId: "com.example.focus", environment: "Production")[0]
        #expect(try Self.json(await deployment.request("POST", "/notifications", body: up))["result"] == "appended")
    }
}

/// What a body claims, read only to choose a ledger.
@Suite("RoutingClaims: the app and environment a body names")
struct RoutingClaimsTests {
    static func jws(_ payload: JSONValue) -> String {
        "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(Data(payload.canonicalString().utf8)) + ".c2ln"
    }

    static let notification: JSONValue = ["notificationType": "TEST", "data": ["bundleId": "com.example.focus", "environment": "Sandbox"]]

    @Test("Apple's compact form (byte scans), a spaced-out form (parsed), a summary, a StoreKit transaction, an AppTransaction, an envelope; none for other bodies",
          arguments: [
            ("{\"signedPayload\":\"\(jws(notification))\"}", RoutingClaims(bundleId: "com.example.focus", environment: "Sandbox")),
            ("  { \"signedPayload\" : \"\(jws(notification))\" }\n", RoutingClaims(bundleId: "com.example.focus", environment: "Sandbox")),
            ("{\"signedPayload\":\"\(jws(["summary": ["bundleId": "com.example.reps", "environment": "Production"]]))\"}",
             RoutingClaims(bundleId: "com.example.reps", environment: "Production")),
            ("{\"signedPayload\":\"\(jws(["externalPurchaseToken": ["bundleId": "com.example.reps"]]))\"}", RoutingClaims(bundleId: "com.example.reps", environment: nil)),
            ("{\"storeKit\":{\"userId\":\"u\",\"signedTransaction\":\"\(jws(["bundleId": "com.example.reps", "environment": "Sandbox"]))\"}}",
             RoutingClaims(bundleId: "com.example.reps", environment: "Sandbox")),
            ("{\"storeKit\":{\"signedAppTransaction\":\"\(jws(["bundleId": "com.example.reps", "receiptType": "Production"]))\"}}",
             RoutingClaims(bundleId: "com.example.reps", environment: "Production")),
            (jws(["bundleId": "com.example.reps", "environment": "Sandbox"]), RoutingClaims(bundleId: "com.example.reps", environment: "Sandbox")),
            ("{\"apiResponse\":{\"environment\":\"Sandbox\",\"body\":{}}}", RoutingClaims(bundleId: nil, environment: "Sandbox")),
          ] as [(String, RoutingClaims)])
    func claims(_ body: String, _ expected: RoutingClaims) {
        #expect(RoutingClaims.of(Data(body.utf8)) == expected)
    }

    @Test("no claims in bodies that name no app", arguments: ["not json", "{}", "[1]", "{\"signedPayload\":\"a.b.c\"}", "{\"apiResponse\":{\"body\":{}}}", ""])
    func none(_ body: String) {
        #expect(RoutingClaims.of(Data(body.utf8)) == nil)
    }
}

@Suite("IdentifierFilter: which identifiers a ledger may know")
struct IdentifierFilterTests {
    @Test("no opinion before the first pass; then never a false no, few false maybes, and it grows past its capacity by asking to be filled again")
    func filter() {
        let filter = IdentifierFilter(capacity: 1_000)
        #expect(filter.mightContain("2100000000000000") == nil)
        let known = (0..<800).map { "21000000000\(String(format: "%05d", $0))" }
        #expect(filter.add(known, through: 800, ready: true))
        #expect(known.allSatisfy { filter.mightContain($0) == true })
        let falseMaybes = (0..<10_000).filter { filter.mightContain("99\($0)") == true }.count
        #expect(falseMaybes < 100, "\(falseMaybes) false maybes in 10,000")
        #expect(filter.coveredThrough == 800)
        // Behind the head the pool knows (an append acknowledged, not yet read): no opinion.
        #expect(filter.mightContain("9999", head: 801) == nil)
        #expect(filter.mightContain("9999", head: 800) == false)
        // Past capacity: emptied and doubled, no opinion until filled again.
        #expect(!filter.add((0..<5_000).map { "x\($0)" }, through: 900, ready: true))
        #expect(filter.mightContain(known[0]) == nil)
        #expect(filter.add(known, through: 800, ready: true))
        #expect(filter.mightContain(known[0]) == true)
    }

    @Test("a service of several ledgers follows each ledger's appends; a search reads the ledgers that may know the id first and answers as before")
    func following() async throws {
        let deployment = try MultiLedgerServiceTests.Deployment()
        for (ledger, environment) in [("reps-production", "Production"), ("reps-sandbox", "Sandbox")] {
            for body in try Notifications.subscribed(count: 2, bundleId: "com.example.reps", environment: environment) {
                _ = await deployment.request("POST", "/notifications/\(ledger)", body: body)
            }
        }
        let token = try deployment.token("reps-app", scope: "read", in: ["reps-production", "reps-sandbox", "focus-sandbox"])
        let ledgers = deployment.service.ledgers
        #expect(await waitUntil(timeout: .seconds(30)) {
            ledgers.allSatisfy { $0.identifiers.coveredThrough == $0.pool.headPosition && $0.identifiers.mightContain("anything") != nil }
        })
        let sandbox = try #require(deployment.service.ledger(named: "reps-sandbox"))
        let focus = try #require(deployment.service.ledger(named: "focus-sandbox"))
        #expect(sandbox.identifiers.mightContain("2100000000000001") == true)
        #expect(focus.identifiers.mightContain("2100000000000001") == false)
        #expect(deployment.service.likelyFirst([focus, sandbox], identifier: "2100000000000001").map { $0.map(\.name) }
                == [["reps-sandbox"], ["focus-sandbox"]])
        // Known to both reps ledgers: merged as before; unknown: 404 after every ledger was read.
        let merged = try MultiLedgerServiceTests.json(await deployment.request("GET", "/v1/entitlements/2100000000000001", token: token))
        #expect(merged["entitlements"]?.arrayValue?.map { $0["environment"] } == ["Production", "Sandbox"])
        #expect(await deployment.request("GET", "/v1/entitlements/2199999999999999", token: token).status == 404)
    }
}
