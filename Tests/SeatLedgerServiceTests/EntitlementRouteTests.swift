import AppStoreModels
import Foundation
import HTTPTestSupport
import JWSSigning
import SeatLedger
import Testing

/// `GET /v1/entitlements/{id}` through a real `serve` on loopback.
@Suite("serve: GET /v1/entitlements/{id}", .serialized)
struct EntitlementRouteTests {
    static let now = "2025-06-05T00:00:00Z"
    static let soloProduct = "com.example.reps.solo.monthly"

    /// An individual subscription (no `multiSeatInfo`) bought the day before `signedDate`, ending 29 days after it.
    static func individual(otid: String, app: String) throws -> Data {
        let signer = try JWSSigner.loadTestPKI(directory: Repository.pki)
        let t = Notifications.signedDate, day = Notifications.day
        let transaction: JSONValue = [
            "originalTransactionId": .string(otid), "transactionId": .string(otid), "appTransactionId": .string(app),
            "productId": .string(soloProduct), "inAppOwnershipType": "PURCHASED", "quantity": 1,
            "purchaseDate": .int(t - day), "originalPurchaseDate": .int(t - day), "expiresDate": .int(t + 29 * day),
            "bundleId": "com.example.reps", "environment": "Sandbox", "signedDate": .int(t), "type": "Auto-Renewable Subscription",
        ]
        let payload: JSONValue = [
            "notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY", "notificationUUID": .string(UUID().uuidString),
            "signedDate": .int(t), "version": "2.0",
            "data": ["bundleId": "com.example.reps", "environment": "Sandbox", "status": 1,
                     "signedTransactionInfo": .string(try signer.sign(payload: transaction))],
        ]
        return Data(JSONValue.object(["signedPayload": .string(try signer.sign(payload: payload))]).canonicalString().utf8)
    }

    @Test("the body equals `entitlements --json`; filters, 404, clock 400; ETag, 304 and Cache-Control follow the answer")
    func route() throws {
        let fixture = try LedgerFixture()
        let input = fixture.directory.appendingPathComponent("input.ndjson")
        var lines = try Notifications.subscribed(count: 2)
        lines.append(try Self.individual(otid: "3100000000000001", app: "706100000000000001"))
        try Data(lines.map { $0 + Data("\n".utf8) }.joined()).write(to: input)
        #expect(try CLIRun.run(["ingest", input.path, "--db", fixture.path]).status == 0)
        let token = try addToken("app", scope: "read", db: fixture.path)
        let environment = ["SEATLEDGER_NOW": Self.now]
        let serve = try ServeProcess(db: fixture.path, environment: environment)
        let client = try RawHTTPClient(port: serve.port)
        let auth = [("Authorization", "Bearer \(token)")]

        for id in ["3100000000000001", "706100000000000001", "2100000000000000", "70602100000000000001"] {
            let response = try client.request("GET", "/v1/entitlements/\(id)", headers: auth)
            #expect(response.status == 200, "\(id): \(response.text)")
            let cli = try CLIRun.run(["entitlements", id, "--json", "--db", fixture.path], environment: environment)
            #expect(cli.status == 0)
            #expect(response.body == cli.stdout, "\(id)")
            let body = try json(response)
            #expect(body["entitlements"]?.arrayValue?.first?["entitled"]?.boolValue == true, "\(id)")
            // Entitled until 2025-06-30 (25 days after `now`): cached at most 60 s.
            #expect(response.headers["cache-control"] == "private, max-age=60")
            let tag = try #require(response.headers["etag"])
            let again = try client.request("GET", "/v1/entitlements/\(id)", headers: auth + [("If-None-Match", tag)])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
        }
        let solo = try json(client.request("GET", "/v1/entitlements/3100000000000001", headers: auth))
        #expect(solo["entitlements"]?.arrayValue?.first?["productId"]?.stringValue == Self.soloProduct)
        #expect(solo["entitlements"]?.arrayValue?.first?["through"]?["groupKey"] == .null)
        #expect(solo["entitlements"]?.arrayValue?.first?["through"]?["source"]?.stringValue == "PURCHASED")

        // Filters: another product or another environment leave nothing; the ledger's keep it.
        let other = try json(client.request("GET", "/v1/entitlements/3100000000000001?product=com.example.other", headers: auth))
        #expect(other["entitlements"]?.arrayValue?.isEmpty == true)
        let same = try json(client.request("GET", "/v1/entitlements/3100000000000001?product=\(Self.soloProduct)&environment=Sandbox", headers: auth))
        #expect(same["entitlements"]?.arrayValue?.count == 1)
        let production = try json(client.request("GET", "/v1/entitlements/3100000000000001?environment=Production", headers: auth))
        #expect(production["entitlements"]?.arrayValue?.isEmpty == true)
        #expect(try client.request("GET", "/v1/entitlements/3100000000000001?environment=prod", headers: auth).status == 400)

        // Two moments with the same answer but for `asOf`: the same ETag (it digests what the answer says).
        let day5 = try client.request("GET", "/v1/entitlements/3100000000000001?asOf=2025-06-05T00:00:00Z", headers: auth)
        let day6 = try client.request("GET", "/v1/entitlements/3100000000000001?asOf=2025-06-06T00:00:00Z", headers: auth)
        #expect(day5.body != day6.body)
        #expect(day5.headers["etag"] != nil && day5.headers["etag"] == day6.headers["etag"])
        // After the period: not entitled, never cached, a new ETag.
        let before = try client.request("GET", "/v1/entitlements/3100000000000001", headers: auth)
        let lapsed = try client.request("GET", "/v1/entitlements/3100000000000001?asOf=2025-08-01T00:00:00Z", headers: auth)
        #expect(lapsed.status == 200)
        #expect(lapsed.headers["cache-control"] == "no-cache")
        #expect(lapsed.headers["etag"] != before.headers["etag"])
        #expect(try json(lapsed)["entitlements"]?.arrayValue?.first?["reason"]?["reason"]?.stringValue == "EXPIRED")
        // The day before the period ends: cached no longer than until the end.
        let lastDay = try client.request("GET", "/v1/entitlements/3100000000000001?asOf=2025-06-30T11:59:30Z", headers: auth)
        #expect(lastDay.headers["cache-control"] == "private, max-age=30")

        let missing = try client.request("GET", "/v1/entitlements/no-such-person", headers: auth)
        #expect(missing.status == 404)
        #expect(try json(missing)["message"]?.stringValue?.contains("no-such-person") == true)
        let seconds = try client.request("GET", "/v1/entitlements/3100000000000001?asOf=1748779200", headers: auth)
        #expect(seconds.status == 400)
        #expect(try json(seconds)["didYouMean"]?.stringValue == "2025-06-01T12:00:00.000Z")
        #expect(try client.request("GET", "/v1/entitlements/3100000000000001").status == 401)
        #expect(serve.stop() == 0)
    }
}
