import AppStoreAPI
import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import Projections
import SeatLedger
import SeatLedgerAppStoreAPI
import Testing

/// `seatledger reconcile` against the stand-in: every call recorded, the diff against Apple,
/// bootstrapping an unknown group, paging (Get Group Members, Get Transaction History), failures.
@Suite("API reconcile against the stand-in")
struct APIReconcileTests {
    static let now = PayloadFactory.defaultSignedDate + PayloadFactory.day
    static let otid = PayloadFactory.defaultOriginalTransactionId
    static let purchaserApp = PayloadFactory.defaultAppTransactionId
    static let groupId = "810000000000000001"
    static let c1 = "c1c1c1c1-0000-4000-8000-000000000001"
    static let c2 = "c2c2c2c2-0000-4000-8000-000000000002"
    static let m1 = "705000000000000011"
    static let m2 = "705000000000000012"

    /// The ledger's view: the purchase and two claims (with the members' appTransactionIds).
    static func delivered(_ factory: PayloadFactory) throws -> [String] {
        func claim(_ id: String, _ app: String, _ ref: String, minute: Int64) -> String {
            factory.apiResponse(endpoint: "ClaimSeat", method: "POST", path: "/groups/v1/transactions/\(otid)/seats",
                                requestBody: ["requestIdentifier": .string("r-\(ref)"), "appTransactionId": .string(app)],
                                body: ["seatClaimId": .string(id)],
                                respondedAt: .string(Timestamp.iso8601(PayloadFactory.defaultSignedDate + minute * 60_000)),
                                context: ["memberRef": .string(ref)])
        }
        return [
            try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "purchase", transaction: factory.transaction(),
                                     renewal: factory.renewal()),
            claim(c1, m1, "m1", minute: 1), claim(c2, m2, "m2", minute: 2),
        ]
    }

    /// Apple's view: statuses, the transactions, seats, groups and members agreeing with `delivered`.
    static func appleState(_ factory: PayloadFactory) throws -> [String: JSONValue] {
        let transaction = factory.transaction()
        let addition = factory.transaction(transactionId: "2000000000000099", quantity: 2,
                                           signedDate: PayloadFactory.defaultSignedDate + 60_000)
        return [
            "statuses": .object([otid: [
                "environment": "Sandbox", "bundleId": .string(TestLedger.bundleId),
                "data": [["subscriptionGroupIdentifier": "21000001", "lastTransactions": [[
                    "originalTransactionId": .string(otid), "status": 1,
                    "signedTransactionInfo": .string(try factory.sign(transaction)),
                    "signedRenewalInfo": .string(try factory.sign(factory.renewal())),
                ]]]],
            ]]),
            "transactions": [.string(try factory.sign(transaction)), .string(try factory.sign(addition))],
            "seats": .object([otid: ["totalSeatCount": 5, "assignedSeatClaimIds": [.string(c1), .string(c2)]]]),
            "customerGroups": .object([otid: [["groupId": .string(groupId), "groupType": "CONSUMER"]]]),
            "groupMembers": .object([groupId: [.string(purchaserApp), .string(m1), .string(m2)]]),
        ]
    }

    static func types(_ store: any LedgerStore) throws -> [String] {
        var found: [String] = []
        try store.forEachEvent { if $0.kind == .apiResponse, let type = $0.type { found.append(type) } }
        return found
    }

    @Test("reconcile records statuses, seat info, groups and members, then reports no difference when Apple agrees")
    func agreement() throws {
        let factory = try PayloadFactory()
        let fixture = try APIFixture(state: try Self.appleState(factory), now: Self.now)
        try fixture.ingest(try Self.delivered(factory))
        let before = try Self.types(fixture.test.store)
        let result = try fixture.run(["reconcile", Self.otid])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("No differences."), "\(result)")
        let recorded = Array(try Self.types(try fixture.test.freshStore()).dropFirst(before.count))
        #expect(recorded == ["GetAllSubscriptionStatuses", "GetSeatInfo", "GetCustomerGroups", "GetGroupMembers"])
        #expect(try fixture.standIn.requests("GetGroupMembers").first?["query"] == "limit=100")
        let json = try fixture.run(["reconcile", Self.otid, "--json"])
        #expect(try json.json()["comparison"]?["differences"] == false)
    }

    @Test("a claim Apple no longer lists (a missed UNCLAIM_SEATS) shows as drift: exit 1")
    func drift() throws {
        let factory = try PayloadFactory()
        var apple = try Self.appleState(factory)
        apple["seats"] = .object([Self.otid: ["totalSeatCount": 5, "assignedSeatClaimIds": [.string(Self.c1)]]])
        apple["groupMembers"] = .object([Self.groupId: [.string(Self.purchaserApp), .string(Self.m1)]])
        let fixture = try APIFixture(state: apple, now: Self.now)
        try fixture.ingest(try Self.delivered(factory))
        let result = try fixture.run(["reconcile", Self.otid, "--json"])
        #expect(result.exitCode == 1, "\(result)")
        let comparison = try #require(try result.json()["comparison"])
        let fields = (comparison["changes"]?.arrayValue ?? []).compactMap { $0["field"]?.stringValue }
        #expect(Set(fields).isSuperset(of: ["available", "assignedSeatClaimIds", "groupMembers"]), "\(comparison)")
        #expect(comparison.canonicalString().contains(Self.c2))
        let text = try fixture.run(["reconcile", Self.otid])
        #expect(text.stdout.contains("only ours [\"\(Self.m2)\"]"), "\(text)")
    }

    @Test("reconcile of a REF the ledger does not know and that cannot be a transaction id asks Apple nothing, records nothing",
          arguments: ["nosuch", "../../x", "12a4"])
    func unknownNonNumericReference(_ reference: String) throws {
        let factory = try PayloadFactory()
        let fixture = try APIFixture(state: try Self.appleState(factory), now: Self.now)
        let result = try fixture.run(["reconcile", reference])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("not a transaction id"), "\(result)")
        #expect(try fixture.standIn.requests().isEmpty, "no call to Apple")
        #expect(try fixture.test.freshStore().eventCount() == 0)
    }

    @Test("reconcile of a transaction the ledger does not know asks Apple first and builds the group")
    func bootstrap() throws {
        let factory = try PayloadFactory()
        let fixture = try APIFixture(state: try Self.appleState(factory), now: Self.now)
        let result = try fixture.run(["reconcile", Self.otid, "--json"])
        #expect([0, 1].contains(result.exitCode), "\(result)")
        try fixture.test.reopen()
        let state = try fixture.test.ledger.groupState(Self.otid, asOf: Self.now)
        #expect(state.seats.total == 5)
        #expect(Set(state.members.compactMap(\.seatClaimId)) == [Self.c1, Self.c2], "Apple's listing is evidence of the claims")
        #expect(state.groupIds == [Self.groupId])
    }

    @Test("paging: every Get Group Members page (limit ≤ 100) and Get Transaction History page is fetched and recorded")
    func paging() throws {
        let factory = try PayloadFactory()
        var apple = try Self.appleState(factory)
        apple["transactionPageSize"] = 1
        let fixture = try APIFixture(state: apple, now: Self.now)
        try fixture.ingest(try Self.delivered(factory))
        var options = LedgerAPIOptions()
        options.baseURL = fixture.standIn.baseURL
        options.environment = fixture.credentials
        options.clock = { Self.now }
        let (api, warnings) = try LedgerAPI.connect(fixture.test.ledger, options: options)
        #expect(warnings.isEmpty)
        var reconciler = GroupReconciler(api: api)
        reconciler.memberPageLimit = 2
        let report = try reconciler.run(Self.otid, withHistory: true, now: Self.now)
        #expect(report.failedCalls.isEmpty, "\(report.calls.map(\.summary))")
        #expect(report.calls.map(\.call.endpoint.rawValue) == [
            "GetAllSubscriptionStatuses", "GetTransactionHistory", "GetTransactionHistory", "GetSeatInfo", "GetCustomerGroups",
            "GetGroupMembers", "GetGroupMembers",
        ])
        let members = try fixture.standIn.requests("GetGroupMembers").compactMap { $0["query"]?.stringValue }
        #expect(members.count == 2 && members[0] == "limit=2" && members[1].hasPrefix("limit=2&paginationToken="))
        let history = try fixture.standIn.requests("GetTransactionHistory").compactMap { $0["query"]?.stringValue }
        #expect(history == ["sort=ASCENDING", "revision=1&sort=ASCENDING"])
        #expect(api.summary.appended == 7 && api.summary.quarantined == 0)
        #expect(throws: APIUsageError.self) { try APICall.getGroupMembers(groupId: Self.groupId, limit: 101) }
        #expect(try fixture.test.ledger.latestTransaction("2000000000000099")?.quantity == 2, "history transactions are in the ledger")
    }

    @Test("without a fixed moment, reconcile compares with the answers it has just recorded (a clock that moves on)")
    func comparesWithTheAnswersJustRecorded() throws {
        let factory = try PayloadFactory()
        let fixture = try APIFixture(state: try Self.appleState(factory), now: Self.now)
        try fixture.ingest(try Self.delivered(factory))
        /// A clock a second later at every reading, like a real one during a run of calls.
        final class MovingClock {
            var millis: EpochMillis
            init(_ start: EpochMillis) { millis = start }
            func next() -> EpochMillis { millis += 1_000; return millis }
        }
        func reconcile(fixedAt moment: EpochMillis?) throws -> (ReconcileReport, EpochMillis?) {
            let clock = MovingClock(Self.now)
            var options = LedgerAPIOptions()
            options.baseURL = fixture.standIn.baseURL
            options.environment = fixture.credentials
            options.clock = { clock.next() }
            let (api, _) = try LedgerAPI.connect(fixture.test.ledger, options: options)
            let report = try GroupReconciler(api: api).run(Self.otid, now: moment)
            let seatInfo = api.recorded.last { $0.exchange.endpoint == .getSeatInfo }?.exchange.respondedAt
            return (report, seatInfo)
        }
        let (fixed, _) = try reconcile(fixedAt: Self.now)
        let (moving, recordedAt) = try reconcile(fixedAt: nil)
        let seatInfoAt = try #require(recordedAt)
        #expect(seatInfoAt > Self.now)
        #expect((moving.comparison?.appleObservedAt ?? 0) >= seatInfoAt, "compared with the answers this run recorded (Get Seat Info, then Get Group Members)")
        let fixedComparison = try #require(fixed.comparison, "the fixed-moment run compares too")
        #expect((fixedComparison.appleObservedAt ?? 0) < seatInfoAt, "a moment fixed before the calls cannot see them")
    }

    @Test("a call that keeps failing makes reconcile exit 2 (after recording every attempt); Apple-hosted groups skip Get Seat Info")
    func failuresAndAppleHosted() throws {
        let factory = try PayloadFactory()
        var apple = try Self.appleState(factory)
        apple["faults"] = [["endpoint": "GetSeatInfo", "status": 500, "times": 5]]
        let fixture = try APIFixture(state: apple, now: Self.now)
        try fixture.ingest(try Self.delivered(factory))
        let result = try fixture.run(["reconcile", Self.otid, "--max-attempts", "2"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stdout.contains("✗ GetSeatInfo → 500 after 2 attempts"), "\(result)")
        #expect(try Self.types(try fixture.test.freshStore()).filter { $0 == "GetSeatInfo" }.count == 2)

        var info = PayloadFactory.MultiSeatInfo()
        info.invitationManagement = "APPLE"
        let hosted = factory.transaction(originalTransactionId: "2000000000000005", appTransactionId: "705000000000000005",
                                         multiSeatInfo: info)
        try fixture.ingest([try factory.notification(uuid: "apple-hosted", transaction: hosted)])
        let skipped = try fixture.run(["reconcile", "2000000000000005", "--json"])
        let notes = try skipped.json()["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(notes.contains { $0.contains("Get Seat Info skipped") }, "\(skipped)")
        #expect(notes.contains { $0.contains("placeholder") }, "an unknown customer gets the sandbox placeholder group, ignored")
        #expect(try fixture.standIn.requests("GetSeatInfo").allSatisfy { $0["path"]?.stringValue?.contains("2000000000000005") == false })
    }
}
