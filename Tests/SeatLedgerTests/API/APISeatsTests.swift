import AppStoreAPI
import AppStoreModels
import EventStore
import Foundation
import LedgerEvents
import LedgerStorage
import Projections
import SeatLedger
import SeatLedgerAppStoreAPI
import Testing

/// `seatledger seats …` against the stand-in: guards, requestIdentifier persisted before the
/// call, crash and timeout drills (never two seats), unclaim, associate, Apple's refusals.
@Suite("API seats against the stand-in")
struct APISeatsTests {
    static let now = PayloadFactory.defaultSignedDate + PayloadFactory.day
    static let developer = "2000000000000001"
    static let appleHosted = "2000000000000002"
    static let expired = "2000000000000003"
    static let full = "2000000000000004"

    /// Purchases: a 5-seat developer-hosted group, an Apple-hosted one, an expired developer-hosted
    /// one, and a 2-seat developer-hosted one whose only free seat is claimed.
    static func purchases(_ factory: PayloadFactory) throws -> [String] {
        func purchase(_ otid: String, seats: Int64, model: String, expires: EpochMillis, uuid: String) throws -> String {
            var info = PayloadFactory.MultiSeatInfo()
            info.invitationManagement = model
            info.priceTiers = [PayloadFactory.PriceTier(price: 9990, quantity: seats)]
            let tx = factory.transaction(originalTransactionId: otid, appTransactionId: "70500000000000\(otid.suffix(4))",
                                         quantity: seats, expiresDate: expires, multiSeatInfo: info)
            return try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: uuid, transaction: tx,
                                            renewal: factory.renewal(originalTransactionId: otid, renewalQuantity: seats))
        }
        let active = PayloadFactory.defaultSignedDate + 29 * PayloadFactory.day
        let claim = factory.apiResponse(endpoint: "ClaimSeat", method: "POST", path: "/groups/v1/transactions/\(full)/seats",
                                        requestBody: ["requestIdentifier": "r-full-1"],
                                        body: ["seatClaimId": "aaaaaaaa-0000-4000-8000-000000000001"],
                                        respondedAt: .string(Timestamp.iso8601(PayloadFactory.defaultSignedDate + 60_000)),
                                        context: ["memberRef": "holder"])
        return [
            try purchase(developer, seats: 5, model: "DEVELOPER", expires: active, uuid: "p-1"),
            try purchase(appleHosted, seats: 5, model: "APPLE", expires: active, uuid: "p-2"),
            try purchase(expired, seats: 5, model: "DEVELOPER", expires: PayloadFactory.defaultSignedDate + 3_600_000, uuid: "p-3"),
            try purchase(full, seats: 2, model: "DEVELOPER", expires: active, uuid: "p-4"),
            claim,
        ]
    }

    static func fixture(seats: [String: JSONValue] = [:], faults: [JSONValue] = []) throws -> APIFixture {
        var served: [String: JSONValue] = [
            developer: ["totalSeatCount": 5, "assignedSeatClaimIds": []],
            full: ["totalSeatCount": 2, "assignedSeatClaimIds": ["aaaaaaaa-0000-4000-8000-000000000001"]],
        ]
        for (key, value) in seats { served[key] = value }
        let fixture = try APIFixture(state: ["seats": .object(served), "faults": .array(faults)], now: now)
        try fixture.ingest(try purchases(try PayloadFactory()))
        return fixture
    }

    /// Claim Seat events of the developer-hosted group (the fixture's own claim is in another group).
    static func claimEvents(_ store: any LedgerStore) throws -> [LedgerEvent] {
        var found: [LedgerEvent] = []
        try store.forEachEvent { event in
            if event.type == "ClaimSeat", event.decoded["apiResponse"]?["path"]?.stringValue?.contains(developer) == true {
                found.append(event)
            }
        }
        return found
    }

    @Test("a member ref with a control character is refused before any call; one recorded by another client shows escaped")
    func controlCharactersInMemberRef() throws {
        let fixture = try Self.fixture()
        let refused = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "red\u{1B}[31m"])
        #expect(refused.exitCode == 2 && refused.stderr.contains("--member-ref holds a control character (red\\u{1B}[31m)"), "\(refused)")
        #expect(try fixture.standIn.requests("ClaimSeat").isEmpty)
        // A Claim Seat response another tool recorded, naming such a member (and some HTML).
        let factory = try PayloadFactory()
        let envelope = factory.apiResponse(endpoint: "ClaimSeat", method: "POST",
                                           path: "/groups/v1/transactions/\(Self.developer)/seats",
                                           requestBody: ["requestIdentifier": "8f1f6a7e-0000-4000-8000-000000000001"],
                                           body: ["seatClaimId": "c-escape"], respondedAt: "2025-06-01T13:00:00.000Z",
                                           context: ["memberRef": "<script>x</script>\u{1B}[31m\nline ![t](http://evil.example/p.png) a\\|b"])
        try fixture.ingest([envelope])
        let env = ["SEATLEDGER_NOW": Timestamp.iso8601(Self.now)]
        let text = try CLI.run(["group", "show", Self.developer, "--db", fixture.test.path], environment: env)
        #expect(text.stdout.contains("\\u{1B}[31m\\u{A}line"), "\(text)")
        #expect(!text.stdout.contains("\u{1B}"), "no raw escape reaches the terminal")
        let markdown = try CLI.run(["audit", "group", Self.developer, "--format", "markdown", "--db", fixture.test.path], environment: env)
        #expect(markdown.stdout.contains("&lt;script&gt;x&lt;/script&gt;"), "\(markdown)")
        #expect(!markdown.stdout.contains("<script>") && !markdown.stdout.contains("\u{1B}"), "\(markdown)")
        #expect(markdown.stdout.contains("!\\[t\\](http://evil.example/p.png)"), "no image is made of the name: \(markdown)")
        #expect(markdown.stdout.contains("a\\\\&#124;b"), "a backslash and a pipe cannot split the cell: \(markdown)")
    }

    @Test("claim --request-id of a request the ledger does not hold is refused before any call (a typo must not take a second seat)")
    func unknownRequestId() throws {
        let fixture = try Self.fixture()
        let result = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m9", "--request-id", "whatever"])
        #expect(result.exitCode == 2 && result.stderr.contains("no stored Claim Seat request whatever"), "\(result)")
        #expect(try fixture.standIn.requests("ClaimSeat").isEmpty)
        #expect(try fixture.test.freshStore().claimRequests().isEmpty)
        let empty = try fixture.run(["seats", "claim", Self.developer, "--request-id", ""])
        // An empty value is refused where options are read, before the ledger is looked at.
        #expect(empty.exitCode == 2 && empty.stderr.contains("--request-id needs a value, not an empty string"), "\(empty)")
        #expect(try fixture.standIn.requests("ClaimSeat").isEmpty)
    }

    @Test("claim --request-id of another group's or member's request is refused: resuming would send that request's identifier")
    func foreignRequestId() throws {
        let fixture = try Self.fixture()
        let first = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m1", "--json"])
        #expect(first.exitCode == 0, "\(first)")
        let requestId = try #require(try first.json()["requestIdentifier"]?.stringValue)
        let otherMember = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m2", "--request-id", requestId])
        #expect(otherMember.exitCode == 2 && otherMember.stderr.contains("is for member m1, not m2"), "\(otherMember)")
        #expect(try fixture.standIn.requests("ClaimSeat").count == 1, "no second call")
    }

    @Test("claim stores its requestIdentifier, calls Apple once and records the claim with the member")
    func claim() throws {
        let fixture = try Self.fixture()
        let result = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m1", "--app-transaction-id", "705000000000000042", "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let json = try result.json()
        let claimId = try #require(json["seatClaimId"]?.stringValue)
        let requestId = try #require(json["requestIdentifier"]?.stringValue)
        let sent = try fixture.standIn.requests("ClaimSeat")
        #expect(sent.count == 1)
        #expect(sent.first?["body"] == ["requestIdentifier": .string(requestId), "appTransactionId": "705000000000000042"])
        #expect(sent.first?["path"] == .string("\(AppStoreAPIPaths.groupsPrefix)/groups/v1/transactions/\(Self.developer)/seats"))
        let store = try fixture.test.freshStore()
        let row = try #require(try store.claimRequest(requestId))
        #expect(row.state == ClaimRequestRecord.claimed)
        #expect(row.seatClaimId == claimId)
        #expect(row.memberRef == "m1")
        let events = try Self.claimEvents(store)
        #expect(events.count == 1)
        #expect(events.first?.decoded["apiResponse"]?["context"]?["memberRef"] == "m1")
        try fixture.test.reopen()
        let state = try fixture.test.ledger.groupState(Self.developer, asOf: Self.now)
        let member = try #require(state.members.first { $0.seatClaimId == claimId })
        #expect(member.hasAccess && member.memberRef == "m1" && member.appTransactionId == "705000000000000042")
        #expect(state.seats.available == 3)

        let text = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m1"])
        #expect(text.exitCode == 2, "m1 already holds a claim: \(text)")
        #expect(text.stderr.contains("already holds active seat claim \(claimId)"))
        #expect(try fixture.standIn.requests("ClaimSeat").count == 1)
    }

    @Test("the projection's guards refuse before any request: no seat, not developer-hosted, not active", arguments: [
        (APISeatsTests.full, "no available seat", "NoAvailableSeatsError"),
        (APISeatsTests.appleHosted, "not developer-hosted (invitationManagement APPLE)", "TransactionNotDevManagedGroupError"),
        (APISeatsTests.expired, "not active (status EXPIRED)", "SubscriptionNotActiveError"),
    ])
    func guards(reference: String, reason: String, appleError: String) throws {
        let fixture = try Self.fixture()
        let result = try fixture.run(["seats", "claim", reference, "--member-ref", "someone"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("refused") && result.stderr.contains(reason) && result.stderr.contains(appleError), "\(result.stderr)")
        #expect(try fixture.standIn.requests().isEmpty, "nothing was sent to Apple")
        #expect(try fixture.test.freshStore().claimRequests().isEmpty, "and no request was stored")
        let json = try fixture.run(["seats", "claim", reference, "--json"])
        #expect(json.exitCode == 2)
        #expect(try json.json()["result"] == "refused")
    }

    @Test("an unfinished request for a canonically equivalent member ref (other bytes) is not resumed, so the seat guard still refuses a full group")
    func equivalentMemberRefIsNotResumed() throws {
        let fixture = try Self.fixture()
        // "é" written decomposed in the stored request, precomposed in the new claim: equal to
        // Swift's `==`, different to the database and to Apple.
        _ = try fixture.test.store.beginClaimRequest(originalTransactionId: Self.full, memberRef: "e\u{301}", appTransactionId: nil,
                                                     newIdentifier: "r-decomposed", now: 1)
        let result = try fixture.run(["seats", "claim", Self.full, "--member-ref", "\u{e9}"])
        #expect(result.exitCode == 2 && result.stderr.contains("no available seat"), "\(result)")
        #expect(try fixture.standIn.requests("ClaimSeat").isEmpty, "nothing was sent to Apple")
        #expect(try fixture.test.freshStore().claimRequests().map(\.requestIdentifier) == ["r-decomposed"], "and no request was added")
    }

    @Test("crash drill: kill -9 while Apple holds the answer, then the same claim reuses the requestIdentifier and gets the same seat")
    func crashDrill() throws {
        let fixture = try Self.fixture(faults: [["endpoint": "ClaimSeat", "delay": 30]])
        let running = try fixture.start(["seats", "claim", Self.developer, "--member-ref", "m2"])
        let deadline = Date().addingTimeInterval(20)
        while try fixture.standIn.requests("ClaimSeat").isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let sent = try #require(try fixture.standIn.requests("ClaimSeat").first, "the claim reached the stand-in")
        let pending = try #require(try fixture.test.freshStore().claimRequests(state: ClaimRequestRecord.pending).first,
                                   "the requestIdentifier was stored before the call")
        #expect(sent["body"]?["requestIdentifier"] == .string(pending.requestIdentifier))
        running.kill()
        _ = try running.wait(timeout: 10)
        #expect(try Self.claimEvents(try fixture.test.freshStore()).isEmpty, "the killed run never saw a response")
        let applied = try fixture.standIn.state()["seats"]?[Self.developer]?["assignedSeatClaimIds"]?.arrayValue ?? []
        #expect(applied.count == 1, "Apple took the seat")

        let retry = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m2", "--json"])
        #expect(retry.exitCode == 0, "\(retry)")
        let json = try retry.json()
        #expect(json["resumed"] == true)
        #expect(json["requestIdentifier"] == .string(pending.requestIdentifier))
        #expect(json["seatClaimId"] == applied.first)
        let after = try fixture.standIn.state()["seats"]?[Self.developer]?["assignedSeatClaimIds"]?.arrayValue ?? []
        #expect(after.count == 1, "still one seat taken at Apple")
        let requests = try fixture.standIn.requests("ClaimSeat").compactMap { $0["body"]?["requestIdentifier"] }
        #expect(Set(requests) == [.string(pending.requestIdentifier)], "both requests carried the same requestIdentifier")
        #expect(try fixture.test.freshStore().claimRequest(pending.requestIdentifier)?.state == ClaimRequestRecord.claimed)
        try fixture.test.reopen()
        let claims = try fixture.test.ledger.groupState(Self.developer, asOf: Self.now).members.filter { $0.role == .claim }
        #expect(claims.count == 1 && claims.first?.memberRef == "m2")
    }

    @Test("a Claim Seat that times out is retried with the same requestIdentifier: one seat")
    func timeoutRetry() throws {
        let fixture = try Self.fixture(faults: [["endpoint": "ClaimSeat", "delay": 3]])
        let result = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m3", "--timeout", "1", "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let sent = try fixture.standIn.requests("ClaimSeat")
        #expect(sent.count == 2)
        #expect(sent.first?["body"] == sent.last?["body"])
        #expect((try fixture.standIn.state()["seats"]?[Self.developer]?["assignedSeatClaimIds"]?.arrayValue ?? []).count == 1)
        let row = try #require(try fixture.test.freshStore().claimRequests().first)
        #expect(row.attempts == 2 && row.state == ClaimRequestRecord.claimed)
    }

    @Test("a 2xx without what it must carry is a failure, not a success: Claim Seat without a seatClaimId stays pending, Get Seat Info without its list is no 'no claims'")
    func successWithoutTheAnswer() throws {
        let fixture = try Self.fixture(faults: [["endpoint": "ClaimSeat", "status": 200, "body": "<html>oops</html>"],
                                                ["endpoint": "GetSeatInfo", "status": 200, "body": ["unexpected": true]]])
        let claim = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m7", "--json"])
        #expect(claim.exitCode == 2, "\(claim)")
        let answer = try claim.json()
        #expect(answer["result"] == "failed" && answer["seatClaimId"] == .null, "\(answer)")
        #expect(answer["problem"]?.stringValue?.contains("without a seatClaimId; the request stays pending") == true, "\(answer)")
        #expect(try fixture.test.freshStore().claimRequests().map(\.state) == [ClaimRequestRecord.pending])
        let info = try fixture.run(["seats", "info", Self.developer])
        #expect(info.exitCode == 2, "\(info)")
        #expect(info.stderr.contains("the body is not Get Seat Info (no assignedSeatClaimIds list)") && !info.stdout.contains("no claims"), "\(info)")
        // The same claim again (the faults are used up) resumes the pending request and takes one seat.
        let again = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m7", "--json"])
        #expect(again.exitCode == 0, "\(again)")
        #expect(try again.json()["resumed"] == true)
    }

    @Test("a response body over the transport's 4 MiB limit is not read further: the call fails naming the limit, nothing is stored")
    func oversizedResponse() throws {
        let fixture = try Self.fixture(faults: [["endpoint": "GetSeatInfo", "status": 200, "body": .string(String(repeating: "x", count: 5 << 20))]])
        let before = try fixture.test.freshStore().eventCount()
        let result = try fixture.run(["seats", "info", Self.developer, "--max-attempts", "1"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("the response body passed 4194304 bytes"), "\(result.stderr.prefix(600))")
        #expect(try fixture.test.freshStore().eventCount() == before, "no response, so nothing recorded")
    }

    @Test("--quiet silences the retry progress lines; without it each retry is named")
    func quietRetries() throws {
        let fault: JSONValue = ["endpoint": "GetSeatInfo", "status": 503, "times": 1, "body": ["errorCode": 5000000, "errorMessage": "x"]]
        let loud = try Self.fixture(faults: [fault]).run(["seats", "info", Self.developer])
        #expect(loud.exitCode == 0 && loud.stderr.contains("retrying"), "\(loud)")
        let quiet = try Self.fixture(faults: [fault]).run(["seats", "info", Self.developer, "--quiet"])
        #expect(quiet.exitCode == 0 && !quiet.stderr.contains("retrying"), "\(quiet)")
    }

    @Test("Apple's refusal is recorded, marks the request failed, and the next claim gets a new requestIdentifier")
    func appleRefuses() throws {
        let fixture = try Self.fixture(seats: [Self.developer: ["totalSeatCount": 2, "assignedSeatClaimIds": ["bbbbbbbb-0000-4000-8000-000000000009"]]])
        let result = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m4"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("ClaimSeat → 400") && result.stderr.contains("NoAvailableSeatsError"), "\(result.stderr)")
        let store = try fixture.test.freshStore()
        let first = try #require(try store.claimRequests().first)
        #expect(first.state == ClaimRequestRecord.failed && first.lastStatus == 400)
        #expect(try Self.claimEvents(store).map(\.status) == [400], "the refusal is an event")
        try fixture.standIn.update(["seats": .object([Self.developer: ["totalSeatCount": 5, "assignedSeatClaimIds": []]])])
        let again = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m4", "--json"])
        #expect(again.exitCode == 0, "\(again)")
        #expect(try again.json()["requestIdentifier"] != .string(first.requestIdentifier))
    }

    @Test("associate links the claim to an appTransactionId; unclaim ends it; requests lists the stored claims")
    func associateAndUnclaim() throws {
        let fixture = try Self.fixture()
        let claimed = try fixture.run(["seats", "claim", Self.developer, "--member-ref", "m5", "--json"])
        let claimId = try #require(try claimed.json()["seatClaimId"]?.stringValue)
        let associate = try fixture.run(["seats", "associate", Self.developer, claimId, "--app-transaction-id", "705000000000000077"])
        #expect(associate.exitCode == 0, "\(associate)")
        #expect(associate.stdout.contains("Associated seat \(claimId)"))
        try fixture.test.reopen()
        var member = try #require(try fixture.test.ledger.groupState(Self.developer, asOf: Self.now).members.first { $0.seatClaimId == claimId })
        #expect(member.appTransactionId == "705000000000000077" && member.hasAccess)

        let unclaim = try fixture.run(["seats", "unclaim", Self.developer, claimId, "--json"])
        #expect(unclaim.exitCode == 0, "\(unclaim)")
        #expect(try fixture.standIn.requests("UnclaimSeat").first?["status"] == 204)
        try fixture.test.reopen()
        member = try #require(try fixture.test.ledger.groupState(Self.developer, asOf: Self.now).members.first { $0.seatClaimId == claimId })
        #expect(!member.hasAccess && member.revocation?.reason == .unclaimedByDeveloper)
        let unclaimEvent = try fixture.test.ledger.events(mentioning: claimId).first { $0.type == "UnclaimSeat" }
        #expect(unclaimEvent?.decoded["apiResponse"]?["context"]?["memberRef"] == "m5", "the member is named in the context")

        let again = try fixture.run(["seats", "unclaim", Self.developer, claimId])
        #expect(again.exitCode == 2, "Apple no longer knows the claim: \(again)")
        #expect(again.stderr.contains("SeatClaimIdNotFoundError"))

        let requests = try fixture.run(["seats", "requests", Self.developer, "--json"])
        #expect(requests.exitCode == 0, "\(requests)")
        #expect(try requests.json().arrayValue?.map { $0["state"] } == ["claimed"])
        let info = try fixture.run(["seats", "info", Self.developer])
        #expect(info.exitCode == 0 && info.stdout.contains("available 4"), "\(info)")
    }

    @Test("usage errors: missing REF, unknown action, associate without --app-transaction-id, unknown group")
    func usage() throws {
        let fixture = try Self.fixture()
        #expect(try fixture.run(["seats"]).exitCode == 2)
        #expect(try fixture.run(["seats", "frob", Self.developer]).exitCode == 2)
        #expect(try fixture.run(["seats", "associate", Self.developer, "c"]).stderr.contains("--app-transaction-id"))
        let unknown = try fixture.run(["seats", "claim", "2999999999999999"])
        #expect(unknown.exitCode == 2 && unknown.stderr.contains("no group"), "\(unknown)")
        #expect(try fixture.standIn.requests().isEmpty)
    }
}
