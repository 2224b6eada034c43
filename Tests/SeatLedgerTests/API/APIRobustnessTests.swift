import AppStoreAPI
import AppStoreModels
import EventStore
import Foundation
import JWSSigning
import LedgerEvents
import LedgerIntake
import LedgerStorage
import Projections
import SeatLedger
import SeatLedgerAppStoreAPI
import Testing

/// Robustness of the API side: resumed backfills whose window aged past Apple's history limit,
/// an Unclaim Seat whose first answer was lost, and error bodies that are not JSON.
@Suite("API: robustness")
struct APIRobustnessTests {
    // MARK: 1. Backfill resume after the saved window start aged past Apple's history limit

    @Test("an interrupted backfill of the whole 30-day window can be resumed a few minutes later")
    func backfillResumeAfterWindowAged() throws {
        let lines = try APIBackfillTests.notifications(45)
        let now = APIBackfillTests.base + PayloadFactory.day
        let fixture = try APIFixture(state: ["notifications": .array(try historyEntries(lines)),
                                             "faults": [["endpoint": "GetNotificationHistory", "skip": 1, "status": 500, "times": 1]]],
                                     now: now)
        // First run: whole sandbox window (clamped to now - 30 d + 60 s); page 2 fails → interrupted.
        let broken = try fixture.run(["backfill", "--since", "60d", "--max-attempts", "1", "--json"])
        #expect(broken.exitCode == 2, "\(broken)")
        #expect(try NotificationBackfill.cursor(of: fixture.test.ledger).inProgress != nil, "progress saved")

        // Five minutes later (Apple's clock and ours), the operator reruns it as the docs say.
        let later = now + 5 * 60_000
        try fixture.standIn.update(["now": .int(later)])
        let env = ["SEATLEDGER_NOW": Timestamp.iso8601(later)]
        let resumed = try fixture.run(["backfill", "--since", "60d", "--max-attempts", "1", "--json"], environment: env)
        let statuses = try fixture.standIn.requests("GetNotificationHistory").map { $0["status"]?.int64Value ?? 0 }
        #expect(resumed.exitCode == 0, "expected the rerun to complete: \(resumed.stdout) \(resumed.stderr) — statuses \(statuses)")
        #expect(!statuses.contains(400), "no request may start before Apple's limit: \(statuses)")
        let report = try resumed.json()
        let notes = (report["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(notes.contains { $0.contains("older than Apple's") && $0.contains("first page") }, "\(notes)")
        #expect(report["complete"] == true)
        #expect(try NotificationBackfill.cursor(of: fixture.test.ledger).inProgress == nil, "nothing left in progress")
        let stored = try APIBackfillTests.events(fixture.test.freshStore(), type: "DID_RENEW")
        #expect(Set(stored.map(\.eventId)).count == 45, "every notification recovered once")
    }

    @Test("a 400 start-date error (Apple's clock ahead of ours) re-clamps the window instead of being taken for a stale token")
    func backfillStartDateErrorReclamps() throws {
        let lines = try APIBackfillTests.notifications(5)
        let now = APIBackfillTests.base + PayloadFactory.day
        let fixture = try APIFixture(state: ["notifications": .array(try historyEntries(lines))], now: now)
        try fixture.standIn.update(["now": .int(now + 3 * 60_000)])   // Apple is three minutes ahead
        let result = try fixture.run(["backfill", "--since", "60d", "--max-attempts", "1", "--json"])
        let statuses = try fixture.standIn.requests("GetNotificationHistory").map { $0["status"]?.int64Value ?? 0 }
        #expect(result.exitCode == 0, "\(result.stdout) \(result.stderr) — statuses \(statuses)")
        #expect(statuses == [400, 200], "one refusal, then the re-clamped window: \(statuses)")
        let notes = (try result.json()["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(notes.contains { $0.contains("re-clamp") }, "\(notes)")
        #expect(!notes.contains { $0.contains("pagination token") }, "not a stale token: \(notes)")
        #expect(try APIBackfillTests.events(fixture.test.freshStore(), type: "DID_RENEW").count == 5)
    }

    // MARK: 2. Unclaim Seat retried after a timeout once Apple already applied it

    @Test("an Unclaim Seat whose first attempt timed out after Apple applied it is confirmed with Get Seat Info and succeeds")
    func unclaimTimeoutAfterApplied() throws {
        let fixture = try APISeatsTests.fixture()
        let claimed = try fixture.run(["seats", "claim", APISeatsTests.developer, "--member-ref", "m9", "--json"])
        let claimId = try #require(try claimed.json()["seatClaimId"]?.stringValue)
        try fixture.standIn.addFaults([["endpoint": "UnclaimSeat", "delay": 3]])   // applied, answer too late

        let unclaim = try fixture.run(["seats", "unclaim", APISeatsTests.developer, claimId, "--timeout", "1", "--json"])
        let atApple = try fixture.standIn.state()["seats"]?[APISeatsTests.developer]?["assignedSeatClaimIds"]?.arrayValue ?? []
        #expect(!atApple.contains(.string(claimId)), "Apple released the seat")
        let statuses = try fixture.standIn.requests("UnclaimSeat").map { $0["status"]?.int64Value ?? 0 }
        #expect(statuses == [204, 404], "\(statuses)")
        #expect(unclaim.exitCode == 0, "the unclaim happened, but the CLI reports: \(unclaim.stderr) (Apple statuses \(statuses))")
        let output = try unclaim.json()
        #expect(output["result"] == "ok")
        let notes = (output["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(notes.contains { $0.contains("the first attempt's answer was lost") && $0.contains("the unclaim took effect") }, "\(notes)")

        // Recorded: the 404 answer to the retry, and the Get Seat Info that confirmed it.
        let store = try fixture.test.freshStore()
        let unclaims = try APIBackfillTests.events(store, type: "UnclaimSeat")
            .filter { $0.decoded["apiResponse"]?["path"]?.stringValue?.hasSuffix(claimId) == true }
        #expect(unclaims.map(\.status) == [404], "\(unclaims.map(\.status))")
        let infos = try APIBackfillTests.events(store, type: "GetSeatInfo")
            .filter { $0.decoded["apiResponse"]?["path"]?.stringValue?.contains(APISeatsTests.developer) == true }
        let info = try #require(infos.last)
        #expect(info.status == 200)
        let listed = info.decoded["apiResponse"]?["body"]?["assignedSeatClaimIds"]?.arrayValue
        #expect(listed != nil && listed?.contains(.string(claimId)) == false, "Get Seat Info no longer lists the claim: \(String(describing: listed))")

        // The projection reads the 404 as the end of the claim.
        try fixture.test.reopen()
        let member = try #require(try fixture.test.ledger.groupState(APISeatsTests.developer, asOf: Timestamp.millis(Date()))
            .members.first { $0.seatClaimId == claimId })
        #expect(!member.hasAccess && member.revocation?.reason == .unclaimedByDeveloper, "\(member)")
    }

    @Test("an Unclaim Seat answered SeatClaimIdNotFoundError after a lost answer still fails when Apple still lists the claim")
    func unclaimNotFoundButStillListed() throws {
        let fixture = try APISeatsTests.fixture()
        let claimed = try fixture.run(["seats", "claim", APISeatsTests.developer, "--member-ref", "m10", "--json"])
        let claimId = try #require(try claimed.json()["seatClaimId"]?.stringValue)
        try fixture.standIn.addFaults([
            ["endpoint": "UnclaimSeat", "status": 500, "delay": 3],   // not applied, answer lost
            ["endpoint": "UnclaimSeat", "status": 404, "body": ["errorMessage": "SeatClaimIdNotFoundError: seatClaimId not found"]],
        ])
        let unclaim = try fixture.run(["seats", "unclaim", APISeatsTests.developer, claimId, "--timeout", "1", "--json"])
        #expect(unclaim.exitCode == 2, "\(unclaim)")
        #expect(try unclaim.json()["result"] == "failed")
        #expect(unclaim.stderr.contains("SeatClaimIdNotFoundError"), "\(unclaim.stderr)")
        #expect(try fixture.standIn.requests("GetSeatInfo").count == 1, "the claim was checked once")
        let atApple = try fixture.standIn.state()["seats"]?[APISeatsTests.developer]?["assignedSeatClaimIds"]?.arrayValue ?? []
        #expect(atApple.contains(.string(claimId)))
    }

    // MARK: 3. Non-JSON error bodies keep their bytes

    @Test("a non-JSON error body is recorded whole")
    func nonJSONErrorBodyRecordedWhole() throws {
        let html = "<html><body>" + String(repeating: "upstream gateway error ", count: 4_000) + "</body></html>"   // ~92 KB
        let transport = ScriptedTransport([.success(HTTPResponse(status: 400, body: Data(html.utf8)))])
        let recorded = LockedBox<[APIExchange]>([])
        let (client, _) = try APIClientTests.client(transport, attempts: 1) { recorded.set(recorded.get() + [$0]) }
        _ = try client.send(.getSeatInfo(originalTransactionId: "2000000000000001"))
        let body = try #require(recorded.get().first?.body?.stringValue)
        #expect(body.utf8.count == html.utf8.count, "recorded \(body.utf8.count) of \(html.utf8.count) bytes")
        let identical = body == html
        #expect(identical, "the recorded text differs from the body")
    }

    @Test("a body that is neither JSON nor UTF-8 is recorded as {\"base64\": …} with every byte, and ingests as an error event")
    func nonUTF8ErrorBodyRecordedAsBase64() throws {
        var bytes = Data("<html>".utf8)
        bytes.append(contentsOf: [0xFF, 0xFE, 0x00, 0xC3, 0x28])          // invalid UTF-8
        bytes.append(Data(repeating: 0x41, count: 70_000))                  // past the old 64 KiB cut
        let transport = ScriptedTransport([.success(HTTPResponse(status: 400, body: bytes))])
        let test = try TestLedger()
        let recorded = LockedBox<[APIExchange]>([])
        let (client, _) = try APIClientTests.client(transport, attempts: 1) { exchange in
            recorded.set(recorded.get() + [exchange])
            let raw = exchange.envelope.canonicalData()
            let (batch, _) = try test.ledger.ingestBatch([InboundMessage(raw: raw, source: "test", origin: .recorded)])
            #expect(batch.appended == 1, "the envelope is ingested, not quarantined")
        }
        let result = try client.send(.getSeatInfo(originalTransactionId: "2000000000000001"))
        #expect(result.status == 400 && result.errorCode == nil && result.errorMessage == nil)
        #expect(result.summary == "GetSeatInfo → 400")
        let encoded = try #require(recorded.get().first?.body?["base64"]?.stringValue)
        #expect(Data(base64Encoded: encoded) == bytes)
        let event = try #require(try APIBackfillTests.events(test.freshStore(), type: "GetSeatInfo").first)
        #expect(event.status == 400)
        #expect(event.decoded["apiResponse"]?["body"]?["base64"]?.stringValue == encoded)
    }
}
