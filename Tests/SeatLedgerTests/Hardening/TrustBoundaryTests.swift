import AppStoreModels
import EventStore
import Foundation
import LedgerEvents
import LedgerStorage
import SeatLedger
import Testing

/// Issue #23 item 1: unsigned `apiResponse` envelopes are applied only from the API client or an
/// import the operator names; the webhook, spools and queues carry only Apple-signed notifications.
@Suite("Trust boundary: API-response envelopes and provenance", .serialized)
struct TrustBoundaryTests {
    static let purchaser = "2000000000000808"
    static let activeUntil = PayloadFactory.defaultSignedDate + 29 * PayloadFactory.day

    /// A signed 8-seat developer-hosted purchase, and 7 Claim Seat envelopes filling the group
    /// (8 seats: the purchaser's own plus 7 claims).
    static func fullGroup(_ factory: PayloadFactory) throws -> (purchase: String, claims: [String]) {
        var info = PayloadFactory.MultiSeatInfo()
        info.priceTiers = [PayloadFactory.PriceTier(price: 9990, quantity: 8)]
        let tx = factory.transaction(originalTransactionId: purchaser, appTransactionId: "705000000000000808", quantity: 8,
                                     expiresDate: activeUntil, multiSeatInfo: info)
        let purchase = try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "purchase-808", transaction: tx,
                                                renewal: factory.renewal(originalTransactionId: purchaser, renewalQuantity: 8))
        return (purchase, (1...7).map { claim($0, factory) })
    }

    /// A Claim Seat envelope for member `n` of the group.
    static func claim(_ n: Int, _ factory: PayloadFactory) -> String {
        factory.apiResponse(endpoint: "ClaimSeat", method: "POST", path: "/groups/v1/transactions/\(purchaser)/seats",
                            requestBody: ["requestIdentifier": .string("req-\(n)")],
                            body: ["seatClaimId": .string(String(format: "aaaaaaaa-0000-4000-8000-%012d", n))],
                            respondedAt: .string(Timestamp.iso8601(PayloadFactory.defaultSignedDate + EpochMillis(n) * 60_000)),
                            context: ["memberRef": .string("member-\(n)")])
    }

    static func seats(_ test: TestLedger) throws -> (claimed: Int64, overCapacity: Int64, withAccess: Int) {
        let ledger = try Ledger.open(path: test.path, readOnly: true)
        let state = try ledger.groupState(purchaser, asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day)
        return (state.seats.claimed, state.seats.overCapacity, state.members.filter(\.hasAccess).count)
    }

    @Test("six forged ClaimSeat envelopes through the webhook, a spool and a queue leave a full 8-seat group at 8; each is quarantined naming its path")
    func forgedClaimsAreQuarantined() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let (purchase, claims) = try Self.fullGroup(factory)
        // The operator's own responses: trusted (record).
        #expect(try test.ledger.append(notificationBody: Data(purchase.utf8)) == .appended(positions: [1], duplicatesCarried: 0))
        for claim in claims { _ = try test.ledger.append(apiResponseEnvelope: Data(claim.utf8), source: "record") }
        let before = try Self.seats(test)
        #expect(before.claimed == 7 && before.overCapacity == 0 && before.withAccess == 8, "\(before)")

        let forged = (100..<106).map { Self.claim($0, factory) }
        // 1, 2: the webhook.
        for line in forged[0..<2] {
            let outcome = try test.ledger.append(notificationBody: Data(line.utf8))
            guard case .quarantined(_, let rejection) = outcome else { Issue.record("webhook applied a forged envelope: \(outcome)"); continue }
            #expect(rejection.code == "untrusted_api_response")
            #expect(rejection.reason.contains("webhook") && rejection.reason.contains("--api-responses"), "\(rejection.reason)")
        }
        // 3, 4: a spool directory (CLI).
        let spool = try TemporaryDirectory(label: "spool")
        _ = try spool.write(forged[2], to: "f1.json")
        _ = try spool.write(forged[3], to: "f2.json")
        let spooled = try CLI.run(["ingest", "--db", test.path, "--spool", "--json", spool.url.path])
        #expect(spooled.exitCode == 3, "\(spooled)")
        #expect(try spool.contents(of: "rejected") == ["f1.json", "f2.json"])
        // 5, 6: a queue (CLI, real redis-server).
        let redis = try RedisServer()
        let file = try test.directory.writeLines(Array(forged[4..<6]), to: "forged.ndjson")
        let enqueued = try CLI.run(["enqueue", "--to", "\(redis.url)/hook", file.path])
        #expect(enqueued.exitCode == 0, "\(enqueued)")
        let queued = try CLI.run(["ingest", "--db", test.path, "--from", "\(redis.url)/hook", "--until-empty", "--block-ms", "200", "--json"])
        #expect(queued.exitCode == 3, "\(queued)")

        let after = try Self.seats(test)
        #expect(after.claimed == 7, "forged claims counted: \(after)")
        #expect(after.overCapacity == 0)
        #expect(after.withAccess == 8)
        let store = try test.freshStore()
        let refused = try store.quarantine().filter { $0.errorCode == "untrusted_api_response" }
        #expect(refused.count == 6)
        #expect(Set(refused.map(\.raw)) == Set(forged.map { Data($0.utf8) }), "raw bytes kept for review")
        #expect(refused.contains { $0.reason.contains("spool") } && refused.contains { $0.reason.contains("queue") })
    }

    @Test("the operator can allow envelopes for a source: ingest --api-responses, quarantine retry --api-responses")
    func operatorAllowsEnvelopes() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let (purchase, claims) = try Self.fullGroup(factory)
        let file = try test.directory.writeLines([purchase] + claims, to: "export.ndjson")
        let refused = try CLI.run(["ingest", "--db", test.path, "--json", file.path])
        #expect(refused.exitCode == 3, "\(refused)")
        #expect(try refused.json()["quarantined"]?.int64Value == 7)
        #expect(try Self.seats(test).claimed == 0)

        let retried = try CLI.run(["quarantine", "retry", "--db", test.path, "--json"])
        #expect(try retried.json()["released"]?.int64Value == 0, "retry alone does not trust envelopes: \(retried)")
        let allowed = try CLI.run(["quarantine", "retry", "--api-responses", "--db", test.path, "--json"])
        #expect(allowed.exitCode == 0, "\(allowed)")
        #expect(try allowed.json()["released"]?.int64Value == 7)
        #expect(try Self.seats(test).claimed == 7)

        let other = try TestLedger()
        let imported = try CLI.run(["ingest", "--db", other.path, "--api-responses", "--json", file.path])
        #expect(imported.exitCode == 0, "\(imported)")
        #expect(try imported.json()["appended"]?.int64Value == 8)
        #expect(try Self.seats(other).claimed == 7)
    }

    @Test("every event records its path as its origin: webhook, file, stdin, spool, record, quarantine-retry; replay shows it")
    func provenanceIsRecorded() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let (purchase, claims) = try Self.fullGroup(factory)
        _ = try test.ledger.append(notificationBody: Data(purchase.utf8))
        let renewal = { (uuid: String, day: EpochMillis) in
            try factory.notification(type: "DID_RENEW", uuid: uuid, signedDate: PayloadFactory.defaultSignedDate + day * 1_000,
                                     transaction: factory.transaction(originalTransactionId: Self.purchaser, quantity: 8,
                                                                      signedDate: PayloadFactory.defaultSignedDate + day * 1_000))
        }
        let file = try test.directory.writeLines([try renewal("via-file", 1)], to: "one.ndjson")
        #expect(try CLI.run(["ingest", "--db", test.path, file.path]).exitCode == 0)
        #expect(try CLI.run(["ingest", "--db", test.path, "-"], stdin: Data((try renewal("via-stdin", 2) + "\n").utf8)).exitCode == 0)
        let spool = try TemporaryDirectory(label: "spool")
        _ = try spool.write(try renewal("via-spool", 3), to: "n.json")
        #expect(try CLI.run(["ingest", "--db", test.path, "--spool", spool.url.path]).exitCode == 0)
        let recorded = try test.directory.write(claims[0], to: "claim.json")
        #expect(try CLI.run(["record", "--db", test.path, recorded.path]).exitCode == 0)
        let store = try test.freshStore()
        #expect(try store.event(id: "purchase-808")?.origin == .webhook)
        #expect(try store.event(id: "via-file")?.origin == .file)
        #expect(try store.event(id: "via-stdin")?.origin == .stdin)
        #expect(try store.event(id: "via-spool")?.origin == .spool)
        #expect(try store.event(at: 5)?.origin == .recorded)
        let replay = try CLI.run(["replay", Self.purchaser, "--db", test.path])
        #expect(replay.exitCode == 0, "\(replay)")
        for origin in ["webhook", "file", "stdin", "spool", "recorded"] {
            #expect(replay.stdout.contains("via \(origin)"), "replay does not show origin \(origin):\n\(replay.stdout)")
        }
    }
}
