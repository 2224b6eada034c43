import AppStoreModels
import Foundation
import HTTPTestSupport
import LedgerEvents
import LedgerStorage
import Testing

/// A real `seatledger serve` process on the fixture's ledger, talking to the fixture's stand-in.
final class SeatServe {
    let running: RunningCLI
    let port: UInt16

    init(_ fixture: APIFixture, extra: [String] = [], credentials: Bool = true) throws {
        var env = credentials ? fixture.credentials : [:]
        env["SEATLEDGER_NOW"] = Timestamp.iso8601(fixture.now)
        running = try CLI.start(["serve", "--db", fixture.test.path, "--listen", "127.0.0.1:0",
                                 "--api-base-url", fixture.standIn.baseURL] + extra, environment: env)
        var found: UInt16?
        let running = self.running
        _ = waitUntil(timeout: .seconds(30)) {
            for line in running.stderrSoFar.split(separator: "\n") {
                guard let value = try? JSONValue.parse(String(line)), value["event"]?.stringValue == "start",
                      let address = value["address"]?.stringValue, let colon = address.lastIndex(of: ":") else { continue }
                found = UInt16(address[address.index(after: colon)...])
            }
            return found != nil || !running.isRunning
        }
        guard let found else { throw TestSupportError("serve did not start: \(running.stderrSoFar)") }
        port = found
    }

    deinit { if running.isRunning { running.kill(); _ = try? running.wait(timeout: 10) } }

    /// A request with `token`; the body as JSON.
    func request(_ method: String, _ path: String, token: String?, body: JSONValue? = nil) throws -> (status: Int, json: JSONValue, headers: [String: String]) {
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let response = try RawHTTPClient(port: port, timeoutSeconds: 60).request(method, path, headers: headers,
                                                                                  body: body.map { Data($0.canonicalData()) } ?? Data())
        return (response.status, (try? JSONValue.parse(response.body)) ?? .null, response.headers)
    }

    /// SIGTERM and the exit.
    func stop() throws -> CLIResult {
        running.kill(SIGTERM)
        return try running.wait(timeout: 30)
    }
}

/// `POST/DELETE /v1/groups/{ref}/seats…` of `seatledger serve` against the API stand-in.
@Suite("serve: seat endpoints against the stand-in", .serialized)
struct ServeSeatsTests {
    static let developer = APISeatsTests.developer
    static let seatsPath = "/v1/groups/\(APISeatsTests.developer)/seats"

    static func token(_ fixture: APIFixture, scope: String = "seats") throws -> String {
        let run = try CLI.run(["token", "add", "t-\(scope)", "--scope", scope, "--db", fixture.test.path, "--json"])
        return try #require(try run.json()["token"]?.stringValue, "\(run)")
    }

    static func member(_ group: JSONValue, claim: String) -> JSONValue? {
        group["members"]?.arrayValue?.first { $0["seatClaimId"]?.stringValue == claim }
    }

    static func appleClaims(_ fixture: APIFixture) throws -> [JSONValue] {
        try fixture.standIn.state()["seats"]?[developer]?["assignedSeatClaimIds"]?.arrayValue ?? []
    }

    @Test("claim: 201 with the seatClaimId and the group's new state, an event recorded; the same requestId again is the same claim, one call to Apple")
    func claimAndSameRequestId() throws {
        let fixture = try APISeatsTests.fixture()
        let token = try Self.token(fixture)
        let serve = try SeatServe(fixture)
        let requestId = "0f2d9a40-1111-4aaa-8bbb-000000000001"
        let body: JSONValue = ["memberRef": "m1", "appTransactionId": "705000000000000042", "requestId": .string(requestId)]
        let first = try serve.request("POST", Self.seatsPath, token: token, body: body)
        #expect(first.status == 201, "\(first)")
        let claimId = try #require(first.json["seatClaimId"]?.stringValue)
        #expect(first.json["requestId"] == .string(requestId))
        let member = try #require(Self.member(first.json["group"] ?? .null, claim: claimId), "\(first.json)")
        #expect(member["hasAccess"] == true && member["memberRef"] == "m1")
        #expect(first.json["group"]?["seats"]?["available"] == 3)

        let again = try serve.request("POST", Self.seatsPath, token: token, body: body)
        #expect(again.status == 200, "\(again)")
        #expect(again.json["seatClaimId"] == .string(claimId) && again.json["replayed"] == true)
        let sent = try fixture.standIn.requests("ClaimSeat")
        #expect(sent.count == 1, "one call to Apple")
        #expect(sent.first?["body"]?["requestIdentifier"] == .string(requestId))
        #expect(try Self.appleClaims(fixture).count == 1)
        #expect(try serve.stop().exitCode == 0)
        let store = try fixture.test.freshStore()
        let events = try APISeatsTests.claimEvents(store)
        #expect(events.count == 1 && events.first?.decoded["apiResponse"]?["context"]?["memberRef"] == "m1")
        #expect(try store.claimRequest(requestId)?.state == ClaimRequestRecord.claimed)
    }

    @Test("409 with the seat counts when the ledger shows no available seat: Apple is not called, nothing stored")
    func noAvailableSeat() throws {
        let fixture = try APISeatsTests.fixture()
        let serve = try SeatServe(fixture)
        let refused = try serve.request("POST", "/v1/groups/\(APISeatsTests.full)/seats", token: try Self.token(fixture),
                                        body: ["memberRef": "late"])
        #expect(refused.status == 409, "\(refused)")
        #expect(refused.json["error"] == "no_available_seat")
        #expect(refused.json["seats"]?["available"] == 0 && refused.json["seats"]?["total"] == 2, "\(refused.json)")
        #expect(try fixture.standIn.requests().isEmpty, "no call to Apple")
        #expect(try fixture.test.freshStore().claimRequests().isEmpty)
        _ = try serve.stop()
    }

    @Test("Apple's 4xx is passed through with its status and error code, recorded, and the request marked failed")
    func appleRefusal() throws {
        let fixture = try APISeatsTests.fixture(faults: [[
            "endpoint": "ClaimSeat", "status": 400, "times": 1,
            "body": ["errorCode": 4_000_123, "errorMessage": "NoAvailableSeatsError: scripted refusal"],
        ]])
        let serve = try SeatServe(fixture)
        let refused = try serve.request("POST", Self.seatsPath, token: try Self.token(fixture), body: ["memberRef": "m4"])
        #expect(refused.status == 400, "\(refused)")
        #expect(refused.json["error"] == "apple_refused")
        #expect(refused.json["appleErrorCode"] == 4_000_123)
        #expect(refused.json["appleErrorMessage"]?.stringValue?.contains("NoAvailableSeatsError") == true)
        #expect(try fixture.standIn.requests("ClaimSeat").count == 1, "a 4xx is not retried")
        _ = try serve.stop()
        let store = try fixture.test.freshStore()
        #expect(try APISeatsTests.claimEvents(store).map(\.status) == [400], "the refusal is an event")
        #expect(try store.claimRequests().first?.state == ClaimRequestRecord.failed)
    }

    @Test("429 with Retry-After, then success: one seat, both requests with the same requestIdentifier")
    func rateLimitedThenSuccess() throws {
        let fixture = try APISeatsTests.fixture(faults: [["endpoint": "ClaimSeat", "status": 429, "headers": ["Retry-After": "1"], "times": 1,
                                                          "body": ["errorCode": 4_290_000, "errorMessage": "Rate limit exceeded."]]])
        let serve = try SeatServe(fixture)
        let claimed = try serve.request("POST", Self.seatsPath, token: try Self.token(fixture), body: ["memberRef": "m6"])
        #expect(claimed.status == 201, "\(claimed)")
        let sent = try fixture.standIn.requests("ClaimSeat")
        #expect(sent.map { $0["status"] } == [429, 200])
        #expect(sent.first?["body"] == sent.last?["body"])
        #expect(try Self.appleClaims(fixture) == [claimed.json["seatClaimId"] ?? .null])
        _ = try serve.stop()
        #expect(try APISeatsTests.claimEvents(try fixture.test.freshStore()).map(\.status) == [429, 200], "both answers recorded")
    }

    @Test("5xx on every attempt: 502 naming the requestId; the retry with it claims once")
    func serverErrorThenRetry() throws {
        let fixture = try APISeatsTests.fixture(faults: [["endpoint": "ClaimSeat", "status": 503, "times": 2,
                                                          "body": ["errorCode": 5_000_000, "errorMessage": "GeneralInternalError"]]])
        let serve = try SeatServe(fixture, extra: ["--api-max-attempts", "2"])
        let token = try Self.token(fixture)
        let failed = try serve.request("POST", Self.seatsPath, token: token, body: ["memberRef": "m7"])
        #expect(failed.status == 502, "\(failed)")
        #expect(failed.json["error"] == "apple_unavailable" && failed.json["appleStatus"] == 503 && failed.json["attempts"] == 2)
        let requestId = try #require(failed.json["requestId"]?.stringValue)
        #expect(try fixture.test.freshStore().claimRequest(requestId)?.state == ClaimRequestRecord.pending)
        let retried = try serve.request("POST", Self.seatsPath, token: token, body: ["memberRef": "m7", "requestId": .string(requestId)])
        #expect(retried.status == 200 && retried.json["resumed"] == true, "\(retried)")
        #expect(retried.json["requestId"] == .string(requestId))
        #expect(try Self.appleClaims(fixture).count == 1)
        _ = try serve.stop()
    }

    @Test("a timeout after Apple committed: 504 with the requestId; the next claim reuses it and Apple returns the same seat")
    func timeoutAfterCommit() throws {
        let fixture = try APISeatsTests.fixture(faults: [["endpoint": "ClaimSeat", "delay": 3, "times": 1]])
        let serve = try SeatServe(fixture, extra: ["--api-timeout", "1", "--api-max-attempts", "1"])
        let token = try Self.token(fixture)
        let lost = try serve.request("POST", Self.seatsPath, token: token, body: ["memberRef": "m8"])
        #expect(lost.status == 504, "\(lost)")
        #expect(lost.json["error"] == "apple_no_answer")
        let requestId = try #require(lost.json["requestId"]?.stringValue)
        let taken = try Self.appleClaims(fixture)
        #expect(taken.count == 1, "Apple took the seat though the answer was lost")
        let stored = try fixture.test.freshStore().claimRequest(requestId)
        #expect(stored?.state == ClaimRequestRecord.pending && stored?.attempts == 1 && stored?.memberRef == "m8", "\(String(describing: stored))")
        // A different requestId for the same member while that claim is unresolved is refused before any call.
        let other = try serve.request("POST", Self.seatsPath, token: token,
                                      body: ["memberRef": "m8", "requestId": "0f2d9a40-1111-4aaa-8bbb-0000000000ff"])
        #expect(other.status == 409 && other.json["error"] == "claim_pending" && other.json["requestId"] == .string(requestId), "\(other)")
        #expect(try fixture.standIn.requests("ClaimSeat").count == 1)
        // The app server retries without the requestId (it lost our answer too): the pending request is found by member.
        let retried = try serve.request("POST", Self.seatsPath, token: token, body: ["memberRef": "m8"])
        #expect(retried.status == 200, "\(retried)")
        #expect(retried.json["resumed"] == true && retried.json["requestId"] == .string(requestId))
        #expect(retried.json["seatClaimId"] == taken.first)
        #expect(try Self.appleClaims(fixture).count == 1, "still one seat at Apple")
        let identifiers = try fixture.standIn.requests("ClaimSeat").compactMap { $0["body"]?["requestIdentifier"] }
        #expect(identifiers == [.string(requestId), .string(requestId)])
        let member = try #require(Self.member(retried.json["group"] ?? .null, claim: taken.first?.stringValue ?? ""))
        #expect(member["hasAccess"] == true && member["memberRef"] == "m8")
        _ = try serve.stop()
    }

    @Test("associate and unclaim are recorded: associate keeps access, unclaim ends it")
    func associateAndUnclaim() throws {
        let fixture = try APISeatsTests.fixture()
        let serve = try SeatServe(fixture)
        let token = try Self.token(fixture)
        let claimed = try serve.request("POST", Self.seatsPath, token: token, body: ["memberRef": "m5"])
        let claimId = try #require(claimed.json["seatClaimId"]?.stringValue, "\(claimed)")
        let associated = try serve.request("POST", "\(Self.seatsPath)/\(claimId)/associate", token: token,
                                           body: ["appTransactionId": "705000000000000077"])
        #expect(associated.status == 200, "\(associated)")
        var member = try #require(Self.member(associated.json["group"] ?? .null, claim: claimId))
        #expect(member["appTransactionId"] == "705000000000000077" && member["hasAccess"] == true)
        let unclaimed = try serve.request("DELETE", "\(Self.seatsPath)/\(claimId)", token: token)
        #expect(unclaimed.status == 200, "\(unclaimed)")
        member = try #require(Self.member(unclaimed.json["group"] ?? .null, claim: claimId))
        #expect(member["hasAccess"] == false, "\(member)")
        let again = try serve.request("DELETE", "\(Self.seatsPath)/\(claimId)", token: token)
        #expect(again.status == 404 && again.json["error"] == "apple_refused", "Apple no longer knows the claim: \(again)")
        #expect(again.json["appleErrorMessage"]?.stringValue?.contains("SeatClaimIdNotFoundError") == true)
        _ = try serve.stop()
        try fixture.test.reopen()
        let types = try fixture.test.ledger.events(mentioning: claimId).map(\.type)
        #expect(types.contains("AssociateSeat") && types.contains("UnclaimSeat"), "\(types)")
    }

    @Test("the seat endpoints need a token of scope seats: 401 without, 403 for scope read; bad bodies are 400; nothing reaches Apple")
    func authorization() throws {
        let fixture = try APISeatsTests.fixture()
        let read = try Self.token(fixture, scope: "read")
        let seats = try Self.token(fixture)
        let serve = try SeatServe(fixture)
        let routes: [(String, String, JSONValue?)] = [
            ("POST", Self.seatsPath, ["memberRef": "m1"]),
            ("DELETE", "\(Self.seatsPath)/c-1", nil),
            ("POST", "\(Self.seatsPath)/c-1/associate", ["appTransactionId": "705000000000000077"]),
        ]
        for (method, path, body) in routes {
            let none = try serve.request(method, path, token: nil, body: body)
            #expect(none.status == 401 && none.json["error"] == "unauthorized", "\(method) \(path): \(none)")
            let wrong = try serve.request(method, path, token: read, body: body)
            #expect(wrong.status == 403 && wrong.json["message"]?.stringValue?.contains("needs scope seats") == true, "\(wrong)")
        }
        #expect(try serve.request("POST", Self.seatsPath, token: seats, body: ["requestId": "x"]).status == 400)
        #expect(try serve.request("POST", Self.seatsPath, token: seats, body: ["memberRef": "m1", "requestId": "not-a-uuid"]).status == 400)
        #expect(try serve.request("GET", Self.seatsPath, token: seats).status == 405)
        #expect(try serve.request("GET", "/v1/groups/\(Self.developer)", token: seats).status == 403, "a seats token does not read")
        #expect(try fixture.standIn.requests().isEmpty)
        _ = try serve.stop()
    }

    @Test("without App Store Server API credentials the seat endpoints answer 503 api_not_configured and nothing is stored")
    func notConfigured() throws {
        let fixture = try APISeatsTests.fixture()
        let token = try Self.token(fixture)
        let serve = try SeatServe(fixture, credentials: false)
        let answer = try serve.request("POST", Self.seatsPath, token: token, body: ["memberRef": "m1"])
        #expect(answer.status == 503 && answer.json["error"] == "api_not_configured", "\(answer)")
        #expect(try fixture.standIn.requests().isEmpty)
        #expect(try fixture.test.freshStore().claimRequests().isEmpty)
        _ = try serve.stop()
    }
}
