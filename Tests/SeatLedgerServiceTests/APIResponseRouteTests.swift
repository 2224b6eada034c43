import AppStoreModels
import EventStore
import Foundation
import HTTPTestSupport
import JWSVerification
import Testing

/// A Claim Seat response as an app server that called Apple itself would record it: group
/// `2100000000000000` (``Notifications/subscribed(count:offset:)``'s first), member `member-42`.
enum ClaimSeatEnvelope {
    static let seatClaimId = "5b0c2d6e-1f3a-4c7b-9e8d-2a4f6b8c0d1e"
    static let memberRef = "member-42"

    /// The envelope's bytes, for `environment` (the fixture's ledger is Sandbox).
    static func body(environment: String = "Sandbox") -> Data {
        let envelope: JSONValue = ["apiResponse": [
            "endpoint": "ClaimSeat", "method": "POST", "path": "/groups/v1/transactions/2100000000000000/seats",
            "requestBody": ["requestIdentifier": "0d7e4b8a-6c2f-4a1e-8b3d-9f5c7a1e2b4d", "appTransactionId": "704000000000000042"],
            "status": 200, "body": ["seatClaimId": .string(seatClaimId)], "respondedAt": "2025-06-02T00:00:00.000Z",
            "environment": .string(environment), "context": ["memberRef": .string(memberRef)],
        ]]
        return Data(envelope.prettyString().utf8)
    }
}

/// `POST /v1/api-responses` (issue #50): an `apiResponse` envelope an app server got from Apple,
/// recorded by a real `serve` on loopback with a token of scope `record`, as `seatledger record`
/// would record it, with origin `app-server` and the token in its source.
@Suite("POST /v1/api-responses (a real serve on loopback)", .serialized)
struct APIResponseRouteTests {
    static let source = "token app-server POST /v1/api-responses"

    /// A ledger with the group of the envelope purchased, an `app-server` token of scopes read and
    /// record and a `reader` token of scope read only.
    struct Setup {
        let fixture: LedgerFixture
        let appServer: String
        let reader: String
        let serve: ServeProcess
        let client: RawHTTPClient

        init() throws {
            fixture = try LedgerFixture()
            let added = try CLIRun.run(["token", "add", "app-server", "--scope", "read", "--scope", "record", "--db", fixture.path, "--json"])
            guard added.status == 0, let token = try JSONValue.parse(bytes: Array(added.stdout))["token"]?.stringValue else {
                throw FixtureError("token add failed: \(added.status) \(added.stderr)")
            }
            appServer = token
            reader = try addToken("reader", scope: "read", db: fixture.path)
            serve = try ServeProcess(db: fixture.path)
            client = try RawHTTPClient(port: serve.port)
            let purchase = try client.request("POST", "/notifications", body: try Notifications.subscribed(count: 1)[0])
            guard try json(purchase)["result"]?.stringValue == "appended" else { throw FixtureError("purchase not appended: \(purchase.text)") }
        }

        func record(_ body: Data, token: String? = nil) throws -> RawHTTPResponse {
            try client.request("POST", "/v1/api-responses", headers: [("Authorization", "Bearer \(token ?? appServer)")], body: body)
        }

        /// `GET /v1/members/{id}` while the group is active.
        func member(_ id: String) throws -> RawHTTPResponse {
            try client.request("GET", "/v1/members/\(id)?asOf=2025-06-10T00:00:00Z", headers: [("Authorization", "Bearer \(appServer)")])
        }

        /// Every event `events --json` lists.
        func events() throws -> [JSONValue] {
            let run = try CLIRun.run(["events", "--db", fixture.path, "--json"])
            guard run.status == 0 else { throw FixtureError("events failed: \(run.stderr)") }
            let listed = try JSONValue.parse(bytes: Array(run.stdout))
            return listed.arrayValue ?? listed["events"]?.arrayValue ?? []
        }

        /// Every quarantine row `quarantine list --json` lists.
        func quarantine() throws -> [JSONValue] {
            let run = try CLIRun.run(["quarantine", "list", "--db", fixture.path, "--json"])
            guard run.status == 0 else { throw FixtureError("quarantine list failed: \(run.stderr)") }
            return try JSONValue.parse(bytes: Array(run.stdout)).arrayValue ?? []
        }

        /// The raw bytes `quarantine show ID --raw` prints.
        func quarantinedBytes(_ id: Int64) throws -> Data {
            let run = try CLIRun.run(["quarantine", "show", String(id), "--raw", "--db", fixture.path])
            guard run.status == 0 else { throw FixtureError("quarantine show failed: \(run.stderr)") }
            return run.stdout
        }
    }

    @Test("a Claim Seat envelope is appended (201) with origin app-server and the token in its source; its member becomes visible; the same body again is 200 duplicate, one event")
    func appendedThenDuplicate() throws {
        let setup = try Setup()
        let body = ClaimSeatEnvelope.body()
        let before = try setup.member(ClaimSeatEnvelope.memberRef)
        #expect(before.status == 404, "nobody is named member-42 before the claim is recorded: \(before.text)")

        let appended = try setup.record(body)
        #expect(appended.status == 201, "\(appended.text)")
        let receipt = try json(appended)
        #expect(receipt["outcome"] == "appended")
        let positions = try #require(receipt["positions"]?.arrayValue)
        #expect(positions == [2], "the purchase is at 1: \(receipt)")
        let eventId = SHA256Digest.hex(try JSONValue.parse(body).canonicalData())
        #expect(receipt["eventId"]?.stringValue == eventId, "the event id is the SHA-256 of the canonical envelope")

        for id in [ClaimSeatEnvelope.memberRef, "704000000000000042"] {
            let member = try setup.member(id)
            #expect(member.status == 200, "\(id): \(member.text)")
            let access = try json(member)
            #expect(access["hasAccess"] == true, "\(id): \(access)")
            let memberships = access["memberships"]?.arrayValue ?? []
            #expect(memberships.contains { $0["member"]?["memberRef"] == .string(ClaimSeatEnvelope.memberRef) }, "\(id): \(access)")
        }

        let again = try setup.record(body)
        #expect(again.status == 200, "\(again.text)")
        let duplicate = try json(again)
        #expect(duplicate["outcome"] == "duplicate")
        #expect(duplicate["existingPosition"] == positions[0])
        #expect(duplicate["eventId"]?.stringValue == eventId)

        let metrics = try setup.client.request("GET", "/metrics").text
        #expect(metrics.contains("seatledger_http_requests_total{route=\"/v1/api-responses\",status=\"201\"} 1\n"), "\(metrics)")
        #expect(metrics.contains("seatledger_http_requests_total{route=\"/v1/api-responses\",status=\"200\"} 1\n"), "\(metrics)")
        #expect(setup.serve.stop() == 0)

        let events = try setup.events()
        let recorded = events.filter { $0["kind"] == "apiResponse" }
        #expect(recorded.count == 1, "the same envelope twice is one event: \(events)")
        #expect(recorded.first?["eventId"]?.stringValue == eventId)
        #expect(recorded.first?["origin"] == "app-server")
        #expect(recorded.first?["source"]?.stringValue == Self.source)
        #expect(try setup.quarantine().isEmpty)
        let log = setup.serve.logLines().compactMap { try? JSONValue.parse(bytes: Array($0.utf8)) }
            .filter { $0["path"] == "/v1/api-responses" }
        #expect(log.map { $0["outcome"]?.stringValue ?? "?" } == ["appended", "duplicate"], "\(log)")
        #expect(log.allSatisfy { $0["token"] == "app-server" && $0["eventId"]?.stringValue == eventId }, "\(log)")
    }

    @Test("no token is 401; a read-only token is 403 naming the token, its scope and record; the app server's token also reads but is 403 on the seats; nothing is stored")
    func authorization() throws {
        let setup = try Setup()
        let body = ClaimSeatEnvelope.body()
        let none = try setup.client.request("POST", "/v1/api-responses", body: body)
        #expect(none.status == 401, "\(none.text)")
        #expect(try json(none)["error"] == "unauthorized")
        let forbidden = try setup.record(body, token: setup.reader)
        #expect(forbidden.status == 403, "\(forbidden.text)")
        #expect(try json(forbidden)["error"] == "forbidden")
        #expect(try json(forbidden)["message"]?.stringValue == "token reader has scope read; this endpoint needs scope record", "\(forbidden.text)")

        let auth = [("Authorization", "Bearer \(setup.appServer)")]
        #expect(try setup.client.request("GET", "/v1/groups", headers: auth).status == 200, "read is one of its scopes")
        let seats = try setup.client.request("POST", "/v1/groups/2100000000000000/seats", headers: auth, body: Data(#"{"memberRef": "m"}"#.utf8))
        #expect(seats.status == 403, "\(seats.text)")
        #expect(try json(seats)["message"]?.stringValue == "token app-server has scopes read, record; this endpoint needs scope seats")
        #expect(try setup.client.request("GET", "/v1/api-responses", headers: auth).status == 405)

        #expect(setup.serve.stop() == 0)
        #expect(try setup.events().count == 1, "only the purchase")
        #expect(try setup.quarantine().isEmpty, "a refused token stores nothing")
    }

    @Test("refused bodies are 400 with the refusal's code and a message naming the problem; the raw bytes are in quarantine with the token's source", arguments: [
        ("malformed JSON", Data(#"{"apiResponse": {"endpoint": "ClaimSeat""#.utf8), "malformed_json", "malformed JSON: "),
        ("another environment", ClaimSeatEnvelope.body(environment: "Production"), "environment_mismatch",
         "environment mismatch: apiResponse names \"Production\", ledger expects \"Sandbox\""),
        ("no respondedAt", Data(#"{"apiResponse": {"endpoint": "ClaimSeat", "status": 200}}"#.utf8), "invalid_envelope", "respondedAt"),
        ("respondedAt before year 1", Data(#"{"apiResponse": {"endpoint": "ClaimSeat", "status": 200, "respondedAt": -2.2e14}}"#.utf8),
         "invalid_envelope", "is outside the years 0001 to 9999"),
        ("a signed notification", Data(#"{"signedPayload": "eyJhbGciOiJFUzI1NiJ9.e30.c2ln"}"#.utf8), "not_an_api_response",
         "a signed notification ({\"signedPayload\": …}) was posted to POST /v1/api-responses"),
        ("an empty body", Data(), "empty_message", "empty message"),
    ])
    func refused(_ what: String, _ body: Data, _ code: String, _ reason: String) throws {
        let setup = try Setup()
        let refused = try setup.record(body)
        #expect(refused.status == 400, "\(what): \(refused.text)")
        let error = try json(refused)
        #expect(error["error"]?.stringValue == code, "\(what): \(error)")
        #expect(error["message"]?.stringValue?.contains(reason) == true, "\(what): \(error)")
        let id = try #require(error["quarantineId"]?.int64Value, "\(what): \(error)")
        #expect(error["message"]?.stringValue?.contains("kept in quarantine as #\(id)") == true, "\(what): \(error)")
        #expect(setup.serve.stop() == 0)

        #expect(try setup.quarantinedBytes(id) == body, "\(what): the raw bytes exactly as posted")
        let rows = try setup.quarantine()
        #expect(rows.count == 1, "\(what): \(rows)")
        #expect(rows.first?["id"]?.int64Value == id)
        #expect(rows.first?["source"]?.stringValue == Self.source, "\(what): \(rows)")
        #expect(rows.first?["errorCode"]?.stringValue == code, "\(what): \(rows)")
        #expect(try setup.events().count == 1, "\(what): nothing appended but the purchase")
    }

    @Test("a body over --max-body (default 1 MiB) is 413 and stores nothing, counted under the route's label")
    func oversize() throws {
        let setup = try Setup()
        let huge = Data(repeating: UInt8(ascii: " "), count: 2 << 20) + ClaimSeatEnvelope.body()
        let refused = try RawHTTPClient(port: setup.serve.port)
            .request("POST", "/v1/api-responses", headers: [("Authorization", "Bearer \(setup.appServer)")], body: huge)
        #expect(refused.status == 413, "\(refused.text)")
        #expect(try json(refused)["error"] == "body_too_large")
        let metrics = try setup.client.request("GET", "/metrics").text
        #expect(metrics.contains("seatledger_http_requests_total{route=\"/v1/api-responses\",status=\"413\"} 1\n"), "\(metrics)")
        #expect(setup.serve.stop() == 0)
        #expect(try setup.events().count == 1)
        #expect(try setup.quarantine().isEmpty)
    }
}
