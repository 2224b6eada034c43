import AppStoreAPI
import AppStoreModels
import EventStore
import Foundation
import GroupSimulator
import JWSSigning
import LedgerEvents
import LedgerStorage
import SeatLedger
import SeatLedgerAppStoreAPI
import Testing

/// `seatledger backfill` against the local stand-in: paging, missed notifications, idempotency,
/// resumption, 429 / 5xx / timeouts, error bodies, JWT refusal, window limits.
@Suite("API backfill against the stand-in")
struct APIBackfillTests {
    static let base = PayloadFactory.defaultSignedDate
    static let minute: EpochMillis = 60_000

    /// `count` signed notifications, one a minute from `base`, uuids `n-00`, `n-01` …
    static func notifications(_ count: Int) throws -> [String] {
        let factory = try PayloadFactory()
        let transaction = factory.transaction()
        return try (0..<count).map { index in
            try factory.notification(type: "DID_RENEW", uuid: String(format: "n-%02d", index),
                                     signedDate: base + Int64(index) * minute, transaction: transaction)
        }
    }

    static func events(_ store: any LedgerStore, type: String) throws -> [LedgerEvent] {
        var found: [LedgerEvent] = []
        try store.forEachEvent { if $0.type == type { found.append($0) } }
        return found
    }

    @Test("backfill pages through the history, appends exactly the missed notifications, and a rerun appends nothing")
    func missedNotificationsAndIdempotency() throws {
        let lines = try Self.notifications(45)
        let missed: Set<Int> = [3, 21, 22, 40]
        let fixture = try APIFixture(state: ["notifications": .array(try historyEntries(lines))], now: Self.base + PayloadFactory.day)
        try fixture.ingest(lines.enumerated().filter { !missed.contains($0.offset) }.map(\.element))
        let since = Timestamp.iso8601(Self.base - 3_600_000)

        let first = try fixture.run(["backfill", "--since", since, "--json"])
        #expect(first.exitCode == 0, "\(first)")
        let report = try first.json()
        #expect(report["pages"] == 3, "45 notifications at 20 a page")
        #expect(report["returned"] == 45)
        #expect(report["new"] == 4)
        #expect(report["alreadyKnown"] == 41)
        let newIds = Set((report["newNotifications"]?.arrayValue ?? []).compactMap { $0["notificationUUID"]?.stringValue })
        #expect(newIds == Set(missed.map { String(format: "n-%02d", $0) }))
        let store = try fixture.test.freshStore()
        for id in newIds { #expect(try store.event(id: id)?.origin == .backfill) }

        let history = try fixture.standIn.requests("GetNotificationHistory")
        #expect(history.count == 3)
        #expect(history.first?["query"] == "", "the first page has no token")
        #expect(history.dropFirst().allSatisfy { ($0["query"]?.stringValue ?? "").hasPrefix("paginationToken=") })
        #expect(history.first?["body"]?["startDate"] == .int(Self.base - 3_600_000))
        #expect(history.first?["body"]?["endDate"] == .int(fixture.now))
        #expect(try Self.events(store, type: "GetNotificationHistory").count == 3, "each page is an apiResponse event")

        let count = try store.eventCount()
        let second = try fixture.run(["backfill", "--since", since, "--json"])
        #expect(second.exitCode == 0, "\(second)")
        #expect(try second.json()["new"] == 0)
        #expect(try fixture.test.freshStore().eventCount() == count, "the second run appends nothing")
        #expect(try fixture.standIn.requests("GetNotificationHistory").count == 3, "and asks Apple nothing: the window is covered")
        let text = try fixture.run(["backfill", "--since", since])
        #expect(text.stdout.contains("already backfilled"), "\(text)")

        // Credentials never reach the ledger or the output.
        let token = try #require(history.first?["token"]?.stringValue)
        let ledgerBytes = try Data(contentsOf: URL(fileURLWithPath: fixture.test.path))
        #expect(ledgerBytes.range(of: Data(token.utf8)) == nil)
        #expect(ledgerBytes.range(of: Data("Bearer".utf8)) == nil)
        #expect(!first.stdout.contains(token) && !first.stderr.contains(token))
        let key = try String(contentsOf: StandInKey.privateKey, encoding: .utf8)
        let keyBody = key.split(separator: "\n")[1]
        #expect(ledgerBytes.range(of: Data(keyBody.utf8)) == nil)
    }

    @Test("a page with one notification that fails verification: the page is quarantined, its good notifications still appended")
    func oneBadItemDoesNotHoldThePageBack() throws {
        var lines = try Self.notifications(5)
        // The middle one signed by the impostor chain (same names, other keys): chain_not_trusted.
        let rogue = try PayloadFactory(prefix: "rogue-")
        lines[2] = try rogue.notification(type: "DID_RENEW", uuid: "n-rogue", signedDate: Self.base + 2 * Self.minute,
                                          transaction: rogue.transaction())
        let fixture = try APIFixture(state: ["notifications": .array(try historyEntries(lines))], now: Self.base + PayloadFactory.day)
        try fixture.ingest([lines[0], lines[4]])  // n-01 and n-03 were missed
        let since = Timestamp.iso8601(Self.base - 3_600_000)
        let result = try fixture.run(["backfill", "--since", since, "--json"])
        #expect(result.exitCode == 3, "something was quarantined: \(result)")
        let report = try result.json()
        #expect(report["returned"] == 5)
        let newIds = Set((report["newNotifications"]?.arrayValue ?? []).compactMap { $0["notificationUUID"]?.stringValue })
        #expect(newIds == ["n-01", "n-03"], "\(report)")
        #expect(report["alreadyKnown"] == 2 && report["quarantined"] == 1, "\(report)")
        let store = try fixture.test.freshStore()
        #expect(try store.event(id: "n-01")?.origin == .backfill)
        #expect(try store.event(id: "n-rogue") == nil)
        let quarantine = try store.quarantine()
        #expect(quarantine.count == 2, "the page as it came, and the bad notification alone")
        #expect(quarantine.contains { $0.source.hasSuffix("#notificationHistory[2]") && $0.errorCode == "chain_not_trusted" },
                "\(quarantine.map { ($0.source, $0.errorCode) })")
    }

    @Test("a stop requested between pages ends the run there with its place saved (exit 4 in the CLI); the next run resumes")
    func stopBetweenPages() throws {
        let lines = try Self.notifications(45)
        let fixture = try APIFixture(state: ["notifications": .array(try historyEntries(lines))], now: Self.base + PayloadFactory.day)
        var options = LedgerAPIOptions()
        options.baseURL = fixture.standIn.baseURL
        options.environment = fixture.credentials
        options.clock = { fixture.now }
        let (api, _) = try LedgerAPI.connect(fixture.test.ledger, options: options)
        final class Asked { var count = 0 }
        let asked = Asked()
        var backfill = NotificationBackfill(api: api)
        backfill.shouldStop = { asked.count += 1; return asked.count > 1 }  // after the first page
        let first = try backfill.run(since: Self.base - 3_600_000, until: nil, onlyFailures: false, now: fixture.now)
        #expect(first.interrupted && !first.complete && first.pages == 1 && first.newNotifications.count == 20, "\(first.json)")
        #expect(try NotificationBackfill.cursor(of: fixture.test.ledger).inProgress?.pages == 1)
        let second = try NotificationBackfill(api: api).run(since: Self.base - 3_600_000, until: nil, onlyFailures: false, now: fixture.now)
        #expect(second.resumed && second.complete && second.pages == 2 && second.newNotifications.count == 25, "\(second.json)")
        #expect(try fixture.standIn.requests("GetNotificationHistory").count == 3, "no page fetched twice")
    }

    @Test("--only-failures asks for failed deliveries only; a full run's coverage also covers failures")
    func onlyFailures() throws {
        let lines = try Self.notifications(6)
        let entries = try historyEntries(Array(lines[0..<4])) + historyEntries(Array(lines[4...]), sendAttemptResult: "TIMED_OUT")
        let fixture = try APIFixture(state: ["notifications": .array(entries)], now: Self.base + PayloadFactory.day)
        let since = Timestamp.iso8601(Self.base - 3_600_000)
        let failures = try fixture.run(["backfill", "--since", since, "--only-failures", "--json"])
        #expect(failures.exitCode == 0, "\(failures)")
        #expect(try failures.json()["new"] == 2)
        #expect(try fixture.standIn.requests("GetNotificationHistory").first?["body"]?["onlyFailures"] == true)
        let all = try fixture.run(["backfill", "--since", since, "--json"])
        #expect(try all.json()["new"] == 4, "the failures-only window did not count as covering everything")
        let again = try fixture.run(["backfill", "--since", since, "--only-failures", "--json"])
        #expect(try again.json()["pages"] == 0)
        #expect(try fixture.standIn.requests("GetNotificationHistory").count == 2)
        let config = try fixture.run(["api-config", "--json"])
        #expect(try config.json()["backfill"]?["coveredAll"]?.arrayValue?.count == 1, "\(config)")
    }

    @Test("an interrupted backfill keeps its place and the next run resumes from the next page")
    func resumesAfterFailure() throws {
        let lines = try Self.notifications(45)
        let fixture = try APIFixture(state: [
            "notifications": .array(try historyEntries(lines)),
            "faults": [["endpoint": "GetNotificationHistory", "skip": 1, "times": 2, "status": 503,
                        "body": ["errorCode": 5000000, "errorMessage": "An unknown error occurred."]]],
        ], now: Self.base + PayloadFactory.day)
        let since = Timestamp.iso8601(Self.base - 3_600_000)
        let broken = try fixture.run(["backfill", "--since", since, "--max-attempts", "2", "--json"])
        #expect(broken.exitCode == 2, "\(broken)")
        let partial = try broken.json()
        #expect(partial["new"] == 20)
        #expect(partial["complete"] == false)
        #expect(partial["failure"]?.stringValue?.contains("503") == true, "\(partial)")
        let errors = try Self.events(try fixture.test.freshStore(), type: "GetNotificationHistory").filter { $0.status == 503 }
        #expect(errors.count == 2, "each failed attempt is its own event")

        let resumed = try fixture.run(["backfill", "--since", since, "--json"])
        #expect(resumed.exitCode == 0, "\(resumed)")
        let rest = try resumed.json()
        #expect(rest["resumed"] == true)
        #expect(rest["new"] == 25)
        #expect(rest["pages"] == 2)
        let requests = try fixture.standIn.requests("GetNotificationHistory")
        #expect(requests.count == 5)
        #expect(requests[3]["query"] == requests[1]["query"], "the resumed run asks for the page that failed")
        #expect(try fixture.test.freshStore().eventCount() == 45 + 5)
    }

    @Test("a 2xx page that is not a history page, or says hasMore without a new token, stops the run with its place kept; the window is not marked fetched",
          arguments: [JSONValue.string("<html>upstream proxy error</html>"), ["notificationHistory": [], "hasMore": true],
                      ["hasMore": false], ["notificationHistory": []]])
    func malformedPageKeepsThePlace(_ page: JSONValue) throws {
        let lines = try Self.notifications(45)
        let fixture = try APIFixture(state: [
            "notifications": .array(try historyEntries(lines)),
            "faults": [["endpoint": "GetNotificationHistory", "skip": 1, "status": 200, "body": page]],
        ], now: Self.base + PayloadFactory.day)
        let since = Timestamp.iso8601(Self.base - 3_600_000)
        let broken = try fixture.run(["backfill", "--since", since, "--json"])
        #expect(broken.exitCode == 2, "\(broken)")
        let partial = try broken.json()
        #expect(partial["complete"] == false && partial["new"] == 20, "\(partial)")
        #expect(partial["failure"]?.stringValue?.contains("page 2 of the window") == true, "\(partial)")
        #expect(partial["failure"]?.stringValue?.contains("the window is not marked fetched") == true, "\(partial)")

        let resumed = try fixture.run(["backfill", "--since", since, "--json"])
        #expect(resumed.exitCode == 0, "\(resumed)")
        let rest = try resumed.json()
        #expect(rest["complete"] == true && rest["new"] == 25, "\(rest)")
        let requests = try fixture.standIn.requests("GetNotificationHistory")
        #expect(requests.count == 4 && requests[2]["query"] == requests[1]["query"], "the rerun asks for the page again")
        #expect(try Self.events(try fixture.test.freshStore(), type: "DID_RENEW").count == 45)
    }

    @Test("429 honours Retry-After, 5xx and GeneralInternalRetryableError are retried, each attempt recorded")
    func retries() throws {
        let lines = try Self.notifications(3)
        let fixture = try APIFixture(state: [
            "notifications": .array(try historyEntries(lines)),
            "faults": [
                ["endpoint": "GetNotificationHistory", "status": 429, "headers": ["Retry-After": "1"],
                 "body": ["errorCode": 4290000, "errorMessage": "Rate limit exceeded."]],
                ["endpoint": "GetNotificationHistory", "status": 500,
                 "body": ["errorCode": 5000001, "errorMessage": "An unknown retryable error occurred. Please try again."]],
                ["endpoint": "GetNotificationHistory", "status": 502],
            ],
        ], now: Self.base + PayloadFactory.day)
        let started = Date()
        let result = try fixture.run(["backfill", "--since", Timestamp.iso8601(Self.base - 3_600_000), "--json"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.exitCode == 0, "\(result)")
        #expect(try result.json()["new"] == 3)
        #expect(elapsed >= 1.0, "Retry-After: 1 was honoured")
        #expect(result.stderr.contains("HTTP 429; retrying"), "\(result.stderr)")
        let requests = try fixture.standIn.requests("GetNotificationHistory")
        #expect(requests.map { $0["status"] } == [429, 500, 502, 200])
        if requests.count == 4, let first = requests[0]["time"], let second = requests[1]["time"],
           case .double(let t0) = first, case .double(let t1) = second {
            #expect(t1 - t0 >= 1.0, "the retry after the 429 waited Retry-After")
        }
        let statuses = try Self.events(try fixture.test.freshStore(), type: "GetNotificationHistory").compactMap(\.status)
        #expect(statuses == [429, 500, 502, 200], "every attempt's response is a distinct event")
    }

    @Test("a request that times out is abandoned after --timeout and retried")
    func timeouts() throws {
        let lines = try Self.notifications(2)
        let fixture = try APIFixture(state: [
            "notifications": .array(try historyEntries(lines)),
            "faults": [["endpoint": "GetNotificationHistory", "delay": 4]],
        ], now: Self.base + PayloadFactory.day)
        let started = Date()
        let result = try fixture.run(["backfill", "--since", Timestamp.iso8601(Self.base - 3_600_000), "--timeout", "1", "--json"])
        #expect(Date().timeIntervalSince(started) < 3.5, "the client did not wait for the slow response")
        #expect(result.exitCode == 0, "\(result)")
        #expect(try result.json()["new"] == 2)
        #expect(result.stderr.contains("timed out"), "\(result.stderr)")
        #expect(try fixture.standIn.requests("GetNotificationHistory").count == 2)
        #expect(try Self.events(try fixture.test.freshStore(), type: "GetNotificationHistory").count == 1,
                "the abandoned attempt got no response, so only the answer is recorded")
    }

    @Test("an error body is recorded, not retried, and reported with Apple's errorCode (exit 2)")
    func errorBodies() throws {
        let fixture = try APIFixture(state: [
            "notifications": [],
            "faults": [["endpoint": "GetNotificationHistory", "status": 400,
                        "body": ["errorCode": 4000028, "errorMessage": "Invalid pagination token."]]],
        ], now: Self.base + PayloadFactory.day)
        let result = try fixture.run(["backfill", "--since", Timestamp.iso8601(Self.base - 3_600_000)])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stdout.contains("4000028"), "\(result)")
        #expect(try fixture.standIn.requests("GetNotificationHistory").count == 1, "a 400 is not retried")
        let recorded = try Self.events(try fixture.test.freshStore(), type: "GetNotificationHistory")
        #expect(recorded.map(\.status) == [400])
        #expect(recorded.first?.decoded["apiResponse"]?["body"]?["errorCode"] == 4000028)
    }

    @Test("the stand-in refuses a JWT signed with another key (401, recorded, not retried); a key readable by others is warned about")
    func wrongKey() throws {
        let fixture = try APIFixture(state: ["notifications": []], now: Self.base + PayloadFactory.day)
        let rogue = try StandInKey.environment(in: fixture.test.directory, key: TestPaths.pkiFile("rogue-leaf.key"), mode: 0o644)
        let result = try fixture.run(["backfill", "--since", "1d"], environment: rogue)
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("accessible by group or others"), "\(result.stderr)")
        let requests = try fixture.standIn.requests()
        #expect(requests.map { $0["auth"] } == ["bad signature"])
        #expect(try Self.events(try fixture.test.freshStore(), type: "GetNotificationHistory").map(\.status) == [401])
    }

    @Test("the stand-in checks expiry, lifetime, audience, bundle id and key id")
    func standInChecksClaims() throws {
        let standIn = try APIStandIn(state: ["notifications": []])
        let signer = try ES256Signer(contentsOf: StandInKey.privateKey)
        let credentials = APICredentials(issuerId: StandInKey.issuerId, keyId: StandInKey.keyId, signer: signer, keySource: "test")
        let now = Int64(Date().timeIntervalSince1970)
        func status(_ token: String) throws -> (Int, String?) {
            let url = try #require(URL(string: standIn.baseURL + "/inApps/v1/transactions/1"))
            let response = try URLSessionTransport().send(HTTPRequest(method: "GET", url: url, headers: ["Authorization": "Bearer " + token], timeout: 10))
            return (response.status, response.headers["x-standin-reason"])
        }
        func custom(_ claims: [String: JSONValue], header: [String: JSONValue] = [:]) throws -> String {
            var all: [String: JSONValue] = ["iss": .string(StandInKey.issuerId), "iat": .int(now), "exp": .int(now + 600),
                                            "aud": "appstoreconnect-v1", "bid": .string(TestLedger.bundleId)]
            for (key, value) in claims { all[key] = value }
            var head: [String: JSONValue] = ["kid": .string(StandInKey.keyId), "typ": "JWT"]
            for (key, value) in header { head[key] = value }
            return try ES256JWT.make(header: .object(head), claims: .object(all), signer: signer)
        }
        let good = try APITokenProvider.make(credentials: credentials, bundleId: TestLedger.bundleId, issuedAt: now, lifetime: 1200)
        #expect(try status(good).0 == 404, "a valid token reaches the endpoint (unknown transaction: 404)")
        #expect(try status(try APITokenProvider.make(credentials: credentials, bundleId: TestLedger.bundleId, issuedAt: now - 7200,
                                                      lifetime: 3600)) == (401, "expired"))
        #expect(try status(try custom(["exp": .int(now + 7200)])) == (401, "lifetime over 60 minutes"))
        #expect(try status(try custom(["aud": "someone-else"])) == (401, "wrong aud"))
        #expect(try status(try custom(["bid": "com.example.other"])) == (401, "wrong bid"))
        #expect(try status(try custom([:], header: ["kid": "OTHERKEY"])) == (401, "wrong kid"))
        #expect(try status(try custom([:], header: ["typ": .null])).0 == 401)
    }

    @Test("a --since older than Apple's 30-day sandbox history is moved forward with a note")
    func windowLimit() throws {
        let now = Self.base + 90 * PayloadFactory.day
        let fixture = try APIFixture(state: ["notifications": []], now: now)
        let result = try fixture.run(["backfill", "--since", Timestamp.iso8601(Self.base), "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let notes = try result.json()["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(notes.contains { $0.contains("30 days of notification history in Sandbox") }, "\(notes)")
        let start = try fixture.standIn.requests("GetNotificationHistory").first?["body"]?["startDate"]?.int64Value
        #expect(start == now - 30 * PayloadFactory.day + 60_000)
    }

    @Test("missed-notification drill: the simulator drops notifications, backfill recovers exactly those, diff --known-at shows the change")
    func simulatorDrill() throws {
        let scenario = try #require(BuiltInLifecycles.named("seat-increase"))
        var options = BuiltInLifecycles.options(for: scenario)
        let plan = try SimulationPlan(scenario, options: options)
        let increase = try #require(plan.events.first { $0.label.contains("INCREASE_QUANTITY") })
        options.faults.drop = .targets(indexes: [increase.index], eventIds: [])
        let run = try GroupSimulator(pkiDirectory: TestPaths.pki).run(scenario, options: options)
        #expect(run.droppedEventIndexes == [increase.index])
        let notificationLines = run.plan.events.filter { $0.kind == .notification }.map { run.eventLines[$0.index] }
        let now = run.plan.evaluationTime + 3_600_000
        let fixture = try APIFixture(state: ["notifications": .array(try historyEntries(notificationLines))], now: now)
        try fixture.ingest(run.lines)
        let expected = try #require(run.expected.first)
        let groupKey = try #require(expected["groupKey"]?.stringValue)
        let before = try fixture.test.ledger.groupState(groupKey, asOf: now)
        #expect(before.seats.total == 8, "the seat increase was missed")

        let result = try fixture.run(["backfill", "--since", Timestamp.iso8601(run.plan.start - 3_600_000), "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let report = try result.json()
        #expect(report["new"] == 1)
        #expect(report["newNotifications"]?.arrayValue?.first?["notificationUUID"] == .string(increase.eventId))
        #expect(report["groups"] == [.string(groupKey)])
        // The report names the two knowledge times to diff (the CLI records at $SEATLEDGER_NOW).
        let knownBefore = try #require(Timestamp.parse(report["knownBefore"]))
        let knownAfter = try #require(Timestamp.parse(report["knownAfter"]))
        #expect(knownBefore > now - 3_600_000 && knownAfter == now, "the delivered stream was recorded an hour before")

        try fixture.test.reopen()
        let after = try fixture.test.ledger.groupState(groupKey, asOf: now)
        #expect(after.seats.total == 10)
        var ours = after.json.objectValue ?? [:]
        ours["knownAt"] = .null
        let expectedAtNow = run.plan.expectedStates(at: now).first { $0["groupKey"] == .string(groupKey) }
        #expect(JSONValue.object(ours) == expectedAtNow, "the ledger converges to the simulator's truth")

        let diff = try CLI.run(["diff", groupKey, "--known-at", Timestamp.iso8601(knownBefore), "--known-at", Timestamp.iso8601(knownAfter),
                                "--db", fixture.test.path, "--json"], environment: ["SEATLEDGER_NOW": Timestamp.iso8601(now)])
        #expect(diff.exitCode == 1, "differences found: \(diff)")
        let text = diff.stdout
        #expect(text.contains("total") && text.contains("10"), "\(text)")
    }

    @Test("a drill with many drops recovers exactly the dropped notifications")
    func randomDropsRecovered() throws {
        let scenario = try #require(BuiltInLifecycles.named("developer-unclaim"))
        var options = BuiltInLifecycles.options(for: scenario, seed: 11)
        options.faults.drop = .rate(0.5)
        let run = try GroupSimulator(pkiDirectory: TestPaths.pki).run(scenario, options: options)
        let dropped = Set(run.droppedEventIndexes.map { run.plan.events[$0].eventId })
        #expect(!dropped.isEmpty)
        let notificationLines = run.plan.events.filter { $0.kind == .notification }.map { run.eventLines[$0.index] }
        let now = run.plan.evaluationTime + 3_600_000
        let fixture = try APIFixture(state: ["notifications": .array(try historyEntries(notificationLines)), "historyPageSize": 2],
                                     now: now)
        try fixture.ingest(run.lines)
        let result = try fixture.run(["backfill", "--since", Timestamp.iso8601(run.plan.start - 3_600_000), "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let recovered = Set((try result.json()["newNotifications"]?.arrayValue ?? []).compactMap { $0["notificationUUID"]?.stringValue })
        #expect(recovered == dropped)
        try fixture.test.reopen()
        for group in run.expected {
            let key = try #require(group["groupKey"]?.stringValue)
            let asOf = try #require(Timestamp.parse(group["asOf"]))
            var ours = try fixture.test.ledger.groupState(key, asOf: asOf).json.objectValue ?? [:]
            ours["knownAt"] = .null
            #expect(JSONValue.object(ours) == group)
        }
    }
}
