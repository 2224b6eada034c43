import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage
import LedgerStoreConformance
import PostgresClient
import PostgresStore
import PostgresTestSupport
import Projections
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// Access transitions (issue #47) and outgoing webhooks on a real PostgreSQL ledger: the SQL of
/// `AccessChangeStore` and `WebhookStore` is written once, and these run it on the other engine.
/// The derivation tests mirror `AccessChangeDerivationTests` (SeatLedgerTests), with a compact
/// ledger over a `PostgresEventStore` instead of the SQLite one there.
@Suite("PostgreSQL: access transitions, webhook endpoints and deliveries")
struct AccessChangeStoreTests {
    typealias B = ScenarioBuilder

    /// A `Ledger` over a PostgreSQL store whose recording clock the test sets.
    final class PostgresLedger {
        let cluster: PostgresTestCluster
        let store: PostgresEventStore
        let ledger: Ledger
        let maintainer: ProjectionMaintainer
        var now: EpochMillis = B.base

        /// A new ledger on a throwaway cluster (as its owner).
        convenience init() throws {
            let cluster = try PostgresTestCluster()
            let configuration = try LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox, appAppleId: nil)
            _ = try PostgresEventStore.create(url: cluster.url(), configuration: configuration, roots: try testRoots())
            try self.init(cluster: cluster, url: cluster.url())
        }

        /// The ledger of `cluster`, opened at `url` (another role's, say).
        init(cluster: PostgresTestCluster, url: String) throws {
            self.cluster = cluster
            store = try PostgresEventStore.open(url: url)
            ledger = try Ledger.open(store: store)
            maintainer = ProjectionMaintainer(store: store)
        }

        /// Appends `events` in one transaction, recorded at `at` (their own `recordedAt` ignored).
        func append(_ events: [LedgerEvent], at moment: EpochMillis) throws {
            now = max(now, moment)
            let recorded = now
            store.clock = { recorded }
            let batch = events.map { B.newEvent($0) }
            let keys = Dictionary(uniqueKeysWithValues: batch.map { ($0.eventId, $0.identifiers.map(\.value)) })
            _ = try store.write {
                let result = try store.append(events: batch)
                try maintainer.update(after: result.appended, eventKeys: keys)
                return result
            }
        }

        /// Derives until caught up through `horizon`; every result.
        @discardableResult
        func derive(through horizon: EpochMillis, cache: AccessDeriverCache, maxEvents: Int = 2_000) throws -> [AccessDerivation] {
            var results: [AccessDerivation] = []
            repeat {
                results.append(try ledger.deriveAccessChanges(through: horizon, cache: cache, maxEvents: maxEvents))
            } while !results.last!.caughtUp
            return results
        }

        /// Every stored transition, in feed order.
        func feed() throws -> [StoredAccessTransition] { try ledger.accessTransitions(after: 0, limit: 100_000) }
    }

    /// `count` groups, each a purchaser's SUBSCRIBED (quantity 4) ending `expires`, and for the
    /// first half a member's claimed seat: several scopes and subjects per group.
    static func groups(_ count: Int, offset: Int = 0, expires: EpochMillis = B.base + 30 * B.day) -> [LedgerEvent] {
        var b = B()
        for index in 0..<count {
            let otid = String(2_000_000_000_000_000 + offset + index)
            b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.base,
                           transaction: B.transaction(id: "t\(offset + index)", original: otid, app: "70500000000\(offset + index)",
                                                      quantity: 4, purchase: B.base, expires: expires),
                           uuid: "n-\(offset + index)")
            if index % 2 == 0 {
                b.claim("claim-\(offset + index)", purchaser: otid, at: B.base + 60_000, app: "70600000000\(offset + index)",
                        memberRef: "member-\(offset + index)")
            }
        }
        return b.events
    }

    /// Feed positions 1…n, ids unique.
    static func expectGapFree(_ feed: [StoredAccessTransition], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(feed.map(\.seq) == (0..<feed.count).map { Int64($0 + 1) }, sourceLocation: sourceLocation)
        #expect(Set(feed.map(\.id)).count == feed.count, sourceLocation: sourceLocation)
    }

    static func endpoint(_ id: String, url: String = "http://127.0.0.1:9/hooks", types: [String] = WebhookMessageType.all) -> WebhookEndpointRecord {
        WebhookEndpointRecord(id: id, url: url, types: types, secret: "whsec_" + Data(repeating: 7, count: 24).base64EncodedString(),
                              createdAt: B.base)
    }

    // MARK: Derivation

    @Test("transitions stored with gap-free seq in batches; a repeat with every deriver lost (cursor back at 0) stores and queues nothing")
    func derivesAndRepeats() throws {
        let test = try PostgresLedger()
        try test.ledger.addWebhookEndpoint(Self.endpoint("wh_00000000000000a1", types: [WebhookMessageType.accessChanged]))
        let events = Self.groups(12)
        var derived = 0
        for (index, start) in stride(from: 0, to: events.count, by: 5).enumerated() {
            try test.append(Array(events[start..<min(events.count, start + 5)]), at: B.base + Int64(index + 1) * 1_000)
            let runs = try test.derive(through: test.now, cache: AccessDeriverCache())
            derived += runs.reduce(0) { $0 + $1.stored.count }
            #expect(runs.reduce(0) { $0 + $1.queuedDeliveries } == runs.reduce(0) { $0 + $1.stored.count })
        }
        let feed = try test.feed()
        #expect(feed.count == derived)
        #expect(feed.filter { $0.kind == "GAINED" }.count >= 12, "\(feed.map(\.kind))")
        Self.expectGapFree(feed)
        #expect(try test.ledger.accessDerivationStatus().cursor.position == Int64(events.count))
        let deliveries = try test.ledger.webhookDeliveries(limit: 10_000)
        #expect(deliveries.count == feed.count)
        #expect(Set(deliveries.compactMap(\.transitionSeq)) == Set(feed.map(\.seq)))

        // The cursor back at 0, as if the commit that moved it had never happened.
        _ = try test.store.write { try test.store.setAccessCursor(AccessCursor(position: 0, horizon: 0)) }
        let again = try test.derive(through: test.now, cache: AccessDeriverCache())
        #expect(again.flatMap(\.stored).isEmpty)
        #expect(again.reduce(0) { $0 + $1.queuedDeliveries } == 0)
        #expect(try test.feed() == feed)
        #expect(try test.ledger.webhookDeliveries(limit: 10_000).count == deliveries.count)
        // Filters bind their text parameters on PostgreSQL too.
        let otid = "2000000000000000"
        let mentioning = try test.ledger.accessTransitions(after: 0, limit: 100, filter: AccessTransitionFilter(mentioning: otid))
        #expect(!mentioning.isEmpty && mentioning.allSatisfy { $0.scope.contains(otid) })
        let kinds = try test.ledger.accessTransitions(after: 0, limit: 100, filter: AccessTransitionFilter(productId: B.product, kinds: ["GAINED"]))
        #expect(kinds.count == feed.filter { $0.kind == "GAINED" && $0.productId == B.product }.count)
    }

    @Test("three derivers on three connections at once, a backlog and appends arriving meanwhile: one feed, seq 1…n, no id twice, nothing lost")
    func concurrentDerivers() throws {
        let test = try PostgresLedger()
        let others = try (0..<3).map { _ in try PostgresLedger(cluster: test.cluster, url: test.cluster.url()) }
        let events = Self.groups(80)
        let backlog = events.count / 2
        try test.append(Array(events[..<backlog]), at: B.base + 1_000)
        let appended = Guarded(false)
        let failures = Guarded<[String]>([])
        let derivations = Guarded(0)
        let group = DispatchGroup()
        for other in others {
            let box = UncheckedBox(other)
            group.enter()
            Thread {
                defer { group.leave() }
                let cache = AccessDeriverCache()
                do {
                    while true {
                        let done = appended.withValue { $0 }
                        // Small batches: many transactions, each racing the others for the cursor.
                        let runs = try box.value.derive(through: B.base + 10_000, cache: cache, maxEvents: 5)
                        derivations.withValue { $0 += runs.count }
                        if done && runs.last!.cursor.position == Int64(events.count) { return }
                    }
                } catch {
                    failures.withValue { $0.append("\(error)") }
                }
            }.start()
        }
        for start in stride(from: backlog, to: events.count, by: 3) {
            try test.append(Array(events[start..<min(events.count, start + 3)]), at: B.base + 1_000)
        }
        appended.withValue { $0 = true }
        group.wait()
        #expect(failures.withValue { $0 }.isEmpty, "\(failures.withValue { $0 })")
        #expect(derivations.withValue { $0 } >= events.count / 5, "the log derived in transactions of at most 5 events")
        let feed = try test.feed()
        Self.expectGapFree(feed)
        // The same as one deriver alone makes of the whole log.
        let alone = try PostgresLedger()
        try alone.append(events, at: B.base + 1_000)
        try alone.derive(through: B.base + 10_000, cache: AccessDeriverCache())
        #expect(Set(feed.map(\.id)) == Set(try alone.feed().map(\.id)))
        #expect(feed.count == (try alone.feed().count))
    }

    @Test("a lapse is derived when its moment falls due, with no news; the next change is reported before it")
    func lapseByTime() throws {
        let test = try PostgresLedger()
        var b = B()
        let expires = B.base + 30 * B.day
        b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "t1", original: "2000000000000001", app: "705000000000000001",
                                                                             quantity: 4, purchase: B.base, expires: expires))
        try test.append(b.events, at: B.base + 1_000)
        let cache = AccessDeriverCache()
        let first = try test.derive(through: B.base + 2_000, cache: cache)
        #expect(first.last?.nextChange == expires)
        #expect(try test.feed().map(\.kind) == ["GAINED"])
        try test.derive(through: expires - 1, cache: cache)
        #expect(try test.feed().count == 1, "just before the end: nothing new")
        try test.derive(through: expires + 60_000, cache: cache)
        let feed = try test.feed()
        #expect(feed.map(\.kind) == ["GAINED", "LOST"])
        Self.expectGapFree(feed)
        let lost = try JSONValue.parse(feed[1].body)
        #expect(lost["cause"]?["kind"] == .string("TIME"))
        #expect(lost["effectiveAt"] == .timestamp(expires))
        #expect(lost["after"]?["entitled"] == .bool(false))
        #expect(try test.ledger.accessDerivationStatus().cursor.horizon == expires + 60_000)
        #expect(try test.store.nextAccessChange() == nil, "nothing else changes by time")
        // A new deriver cache (a restart) derives nothing more.
        #expect(try test.derive(through: expires + 120_000, cache: AccessDeriverCache()).flatMap(\.stored).isEmpty)
    }

    @Test("four senders claiming at once on four connections take disjoint deliveries (SKIP LOCKED under a lease), and together all of them")
    func claimsDisjoint() throws {
        let test = try PostgresLedger()
        try test.ledger.addWebhookEndpoint(Self.endpoint("wh_00000000000000a1"))
        try test.append(Self.groups(60), at: B.base + 1_000)
        let queued = try test.derive(through: B.base + 2_000, cache: AccessDeriverCache()).reduce(0) { $0 + $1.queuedDeliveries }
        #expect(queued > 100)
        let senders = try (0..<4).map { _ in UncheckedBox(try PostgresLedger(cluster: test.cluster, url: test.cluster.url())) }
        let claims = Guarded<[Int64]>([])
        let failures = Guarded<[String]>([])
        let group = DispatchGroup()
        for sender in senders {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    while true {
                        let claimed = try sender.value.ledger.claimDueDeliveries(now: B.base + 3_000, leaseUntil: B.base + 63_000, limit: 3)
                        if claimed.isEmpty { return }
                        claims.withValue { $0 += claimed.map(\.seq) }
                    }
                } catch {
                    failures.withValue { $0.append("\(error)") }
                }
            }.start()
        }
        group.wait()
        #expect(failures.withValue { $0 }.isEmpty, "\(failures.withValue { $0 })")
        let seqs = claims.withValue { $0 }
        #expect(seqs.count == queued, "each delivery claimed once")
        #expect(Set(seqs) == Set(try test.ledger.webhookDeliveries(limit: 10_000).map(\.seq)))
    }

    // MARK: Endpoints and the record chain

    @Test("webhook endpoints added, disabled and re-keyed are linked into the record chain, intact; an UPDATE of the URL by SQL is reported")
    func endpointsLinked() throws {
        let test = try PostgresLedger()
        let id = "wh_00000000000000a1"
        try test.ledger.addWebhookEndpoint(Self.endpoint(id))
        try test.ledger.addWebhookEndpoint(Self.endpoint("wh_00000000000000b2"))
        #expect(throws: LedgerStoreError.self, "an id already used") { try test.ledger.addWebhookEndpoint(Self.endpoint(id)) }
        #expect(try test.ledger.rotateWebhookSecret(id: id, newSecret: "whsec_" + Data(repeating: 9, count: 24).base64EncodedString(),
                                                    previousUntil: B.base + B.day))
        #expect(try test.ledger.disableWebhookEndpoint(id: "wh_00000000000000b2", now: B.base + 5))
        #expect(try !test.ledger.disableWebhookEndpoint(id: "wh_00000000000000b2", now: B.base + 6), "already disabled")
        #expect(try !test.ledger.rotateWebhookSecret(id: "wh_nope", newSecret: "whsec_x", previousUntil: 0))
        try test.store.setWebhookEndpointFailing(id: id, since: B.base + 7)  // operational: not linked, not a finding

        let links = try #require(try test.store.recordLinks())
        #expect(links.filter { $0.kind == .webhookEndpoint }.map(\.subject) == [id, "wh_00000000000000b2", id, "wh_00000000000000b2"])
        #expect(links.map(\.seq) == Array(1...Int64(links.count)))
        let report = try #require(try test.store.verifyRecordChain())
        #expect(report.isIntact, "\(report.findings)")
        let endpoints = try test.ledger.webhookEndpoints()
        #expect(endpoints.map(\.id) == [id, "wh_00000000000000b2"])
        #expect(endpoints[0].previousSecret != nil && endpoints[0].failingSince == B.base + 7 && endpoints[1].disabledAt == B.base + 5)

        let owner = try test.cluster.connect()
        try owner.execute("UPDATE webhook_endpoints SET url = 'http://attacker.example/hooks' WHERE id = '\(id)'")
        let tampered = try #require(try test.store.verifyRecordChain())
        #expect(tampered.findings == ["webhook endpoint \(id) differs from what SeatLedger wrote (edited outside SeatLedger)"], "\(tampered.findings)")
    }

    // MARK: Schema 5 → 6 and the append role

    @Test("a schema-5 ledger is upgraded by the owner's open; the append role then derives, claims and records deliveries, and cannot add, edit or link endpoints")
    func upgradeAndAppendRole() throws {
        let cluster = try PostgresTestCluster()
        let configuration = try LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox, appAppleId: nil)
        _ = try PostgresEventStore.create(url: cluster.url(), configuration: configuration, roots: try testRoots())
        let owner = try cluster.connect()
        // What a schema 5 ledger holds: none of schema 6's tables.
        try owner.execute("""
            DROP TABLE access_cursor, access_scopes, access_transitions, webhook_endpoints, webhook_deliveries, webhook_attempts;
            UPDATE ledger_meta SET schema_version = 5;
            CREATE ROLE seatledger_ingest LOGIN IN ROLE \(PostgresAppendRole.name);
            """)
        let memberURL = "postgresql://seatledger_ingest@127.0.0.1:\(cluster.port)/\(cluster.database)?sslmode=disable"
        func version() throws -> Int64? { try owner.scalarInt64("SELECT schema_version FROM ledger_meta") }
        _ = try PostgresEventStore.open(url: memberURL)
        #expect(try version() == 5, "not the owner: no upgrade")

        let admin = try PostgresLedger(cluster: cluster, url: cluster.url())
        #expect(try version() == 6)
        #expect(try owner.scalarInt64("SELECT count(*) FROM access_cursor WHERE id = 1 AND position = 0") == 1)
        let endpointId = "wh_00000000000000a1"
        try admin.ledger.addWebhookEndpoint(Self.endpoint(endpointId))
        #expect(try admin.store.verifyRecordChain()?.isIntact == true)

        // The append role's serve: append, derive, claim, record.
        let member = try PostgresLedger(cluster: cluster, url: memberURL)
        let events = Self.groups(4)
        try member.append(events, at: B.base + 1_000)
        let derived = try member.derive(through: B.base + 2_000, cache: AccessDeriverCache())
        let stored = derived.flatMap(\.stored)
        #expect(!stored.isEmpty)
        Self.expectGapFree(try member.feed())
        let notifications = events.filter { $0.kind == .notification }.count
        #expect(derived.reduce(0) { $0 + $1.queuedDeliveries } == stored.count + notifications, "access.changed and apple.notification")
        let claimed = try member.ledger.claimDueDeliveries(now: B.base + 3_000, leaseUntil: B.base + 63_000, limit: 1_000)
        #expect(claimed.count == stored.count + notifications)
        #expect(try member.ledger.claimDueDeliveries(now: B.base + 3_000, leaseUntil: B.base + 63_000, limit: 1_000).isEmpty, "held")
        let first = try #require(claimed.first), last = try #require(claimed.last)
        try member.ledger.recordDeliveryAttempt(WebhookAttemptRecord(deliverySeq: first.seq, attempt: 1, at: B.base + 3_100, status: 204,
                                                                     latencyMilliseconds: 3, error: nil, snippet: nil),
                                                endpointId: endpointId, delivered: true, nextAttemptAt: nil)
        try member.ledger.recordDeliveryAttempt(WebhookAttemptRecord(deliverySeq: last.seq, attempt: 1, at: B.base + 3_200, status: 500,
                                                                     latencyMilliseconds: 3, error: "answered 500", snippet: "no"),
                                                endpointId: endpointId, delivered: false, nextAttemptAt: nil)
        #expect(try member.ledger.webhookEndpoint(id: endpointId)?.failingSince == B.base + 3_200, "UPDATE (failing_since) is the role's")
        #expect(try member.ledger.webhookAttempts(deliverySeq: first.seq).map(\.status) == [204])
        let tally = try member.ledger.deliveryTally()
        #expect(tally.byState == ["delivered": 1, "failed": 1, "pending": Int64(claimed.count - 2)])
        // Past the lease, the held ones are due again (another process may take them).
        #expect(try member.ledger.claimDueDeliveries(now: B.base + 63_000, leaseUntil: B.base + 123_000, limit: 1_000).count == claimed.count - 2)
        // The operator's views and redelivery (`webhook deliveries --endpoint --failed --since`, `webhook redeliver`).
        #expect(try member.ledger.webhookDeliveries(endpointId: endpointId, state: WebhookDeliveryState.failed, since: 0, limit: 10).map(\.seq) == [last.seq])
        #expect(try member.ledger.webhookDeliveries(endpointId: "wh_other", limit: 10).isEmpty)
        #expect(try member.ledger.webhookDeliveries(since: first.createdAt + 1, limit: 10_000).isEmpty)
        #expect(try member.ledger.redeliverWebhooks(seq: last.seq, now: B.base + 64_000) == 1)
        #expect(try member.ledger.redeliverWebhooks(since: 0, now: B.base + 64_000) == 1, "the delivered one; pending ones stay as they are")
        #expect(try member.ledger.webhookDeliveries(state: WebhookDeliveryState.pending, limit: 10_000).count == claimed.count)

        // What the role may not do: add, disable, re-key or repoint an endpoint, or link one.
        func refused(_ what: String, _ attempt: () throws -> Void) {
            let error = #expect(throws: (any Error).self, "\(what)") { try attempt() }
            let state = error.flatMap { ($0 as? PostgresError ?? LedgerStoreError.databaseFailure(in: $0) as? PostgresError)?.sqlState }
            #expect(state == "42501", "\(what): \(String(describing: error))")
        }
        refused("add an endpoint") { try member.ledger.addWebhookEndpoint(Self.endpoint("wh_00000000000000c3")) }
        refused("disable one") { _ = try member.ledger.disableWebhookEndpoint(id: endpointId, now: B.base) }
        refused("re-key one") { _ = try member.ledger.rotateWebhookSecret(id: endpointId, newSecret: "whsec_x", previousUntil: 0) }
        let login = try PostgresConnection(url: memberURL)
        for sql in ["INSERT INTO webhook_endpoints (id, url, types, secret, created_at) VALUES ('wh_x', 'http://x', 'access.changed', 'whsec_x', 1)",
                    "UPDATE webhook_endpoints SET url = 'http://attacker.example/hooks'",
                    "UPDATE webhook_endpoints SET disabled_at = NULL, secret = 'whsec_x'",
                    "DELETE FROM webhook_endpoints",
                    "INSERT INTO record_chain (seq, kind, subject, digest, prev_hash, hash) VALUES (999, 'webhook_endpoint', '\(endpointId)', '\\x01', '\\x01', '\\x01')",
                    "UPDATE access_transitions SET body = '{}'",
                    "DELETE FROM access_transitions"] {
            refused(sql) { try login.execute(sql) }
        }
        #expect(try login.query("UPDATE webhook_endpoints SET failing_since = NULL").affectedRows == 1)
        #expect(try admin.store.verifyRecordChain()?.isIntact == true)
        #expect(try admin.ledger.webhookEndpoint(id: endpointId)?.url == "http://127.0.0.1:9/hooks")
    }
}

/// The test PKI's root (`Tools/pki/root.pem`): a `Ledger` opens only over a ledger with a real root.
private func testRoots() throws -> [StoredTrustRoot] {
    let pem = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/pki/root.pem")
    return try TrustAnchor.load(contentsOf: pem).map {
        StoredTrustRoot(fingerprint: $0.sha256Fingerprint, der: [UInt8]($0.der), subject: $0.subject, addedAt: 0)
    }
}

/// Hands a value to one thread. `@unchecked Sendable` is safe: each is used by the thread it is
/// handed to alone, after it was created here.
private final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
