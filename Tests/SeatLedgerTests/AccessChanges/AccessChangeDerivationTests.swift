import AppStoreModels
import EventStore
import GroupSimulator
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage
import Projections
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// `Ledger.deriveAccessChanges`: transitions stored with their feed position, lapses derived when
/// their moment falls due (an injected horizon, no clock), nothing stored twice, and the fold of
/// the stored feed equal to every scope's current answer, over tangled, shuffled histories.
@Suite("access changes: derived, stored, due by time, folded")
struct AccessChangeDerivationTests {
    typealias B = ScenarioBuilder

    /// A ledger over a bare store whose recording clock the test sets.
    final class ClockedLedger {
        let directory: TemporaryDirectory
        let ledger: Ledger
        let maintainer: ProjectionMaintainer
        var now: EpochMillis = B.base

        init() throws {
            directory = try TemporaryDirectory(label: "access")
            let anchors = try TrustAnchor.load(contentsOf: TestPaths.testRoot)
            let roots = anchors.map { StoredTrustRoot(fingerprint: $0.sha256Fingerprint, der: [UInt8]($0.der), subject: $0.subject, addedAt: 0) }
            let store = try EventStore.create(at: directory.path("l.sqlite"),
                                              configuration: LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox, appAppleId: nil),
                                              roots: roots)
            ledger = try Ledger.open(store: store)
            maintainer = ProjectionMaintainer(store: store)
        }

        /// Appends `events` in one transaction, recorded at `at` (their own `recordedAt` ignored).
        func append(_ events: [LedgerEvent], at moment: EpochMillis) throws {
            now = max(now, moment)
            let recorded = now
            ledger.store.clock = { recorded }
            let batch = events.map { B.newEvent($0) }
            let keys = Dictionary(uniqueKeysWithValues: batch.map { ($0.eventId, $0.identifiers.map(\.value)) })
            _ = try ledger.store.write {
                let result = try ledger.store.append(events: batch)
                try maintainer.update(after: result.appended, eventKeys: keys)
                return result
            }
        }

        /// Appends seed `seed`'s tangled history (``IncrementalEqualsRebuildTests/tangledHistory(seed:)``)
        /// shuffled, in batches of 1 to 4, each recorded up to `gap` after the last, calling
        /// `after` with each batch's moment; returns the last moment.
        func appendShuffled(seed: UInt64, salt: UInt64, gap: EpochMillis,
                            after: (EpochMillis, inout SeededRandom) throws -> Void) throws -> EpochMillis {
            var rng = SeededRandom(seed: seed &* salt)
            var pending = IncrementalEqualsRebuildTests.tangledHistory(seed: seed).events.shuffled(using: &rng)
            var moment = B.base
            while !pending.isEmpty {
                let size = Int.random(in: 1...max(1, min(4, pending.count)), using: &rng)
                let batch = Array(pending.prefix(size))
                pending.removeFirst(size)
                moment += EpochMillis.random(in: 0...gap, using: &rng)
                try append(batch, at: moment)
                try after(moment, &rng)
            }
            return moment
        }

        /// Derives until caught up through `horizon`; every result.
        @discardableResult
        func derive(through horizon: EpochMillis, cache: AccessDeriverCache, maxEvents: Int = 2_000, maxDue: Int = 2_000) throws -> [AccessDerivation] {
            var results: [AccessDerivation] = []
            repeat {
                results.append(try ledger.deriveAccessChanges(through: horizon, cache: cache, maxEvents: maxEvents, maxDueScopes: maxDue))
            } while !results.last!.caughtUp
            return results
        }

        /// Every stored transition, in feed order.
        func feed() throws -> [StoredAccessTransition] { try ledger.accessTransitions(after: 0, limit: .max) }

        /// The fold a reader makes of the feed: each key's last `after` (gone when `null`), with its subject.
        func foldedFeed() throws -> [String: String] {
            var state: [String: String] = [:]
            for row in try feed() {
                let body = try JSONValue.parse(row.body)
                let key = row.scope + " " + row.subjectKey + " " + (row.productId ?? "")
                if let after = body["after"], after != .null {
                    state[key] = after.canonicalString() + " " + (body["subject"]?.canonicalString() ?? "")
                } else {
                    state[key] = nil
                }
            }
            return state
        }

        /// Every scope's current answer at `asOf`, in the same form.
        func answers(asOf: EpochMillis) throws -> [String: String] {
            var scopes = Set(try ledger.store.allGroupKeys().map { AccessScope.group($0) })
            var identifiers = Set<String>()
            var all: [EventFacts] = []
            try ledger.store.forEachEvent { event in all.append(EventFacts(event)); identifiers.formUnion(EventFacts(event).identifiers) }
            for otid in SubscriptionProjection.subscriptions(naming: identifiers, in: all) { scopes.insert(.subscription(otid)) }
            var state: [String: String] = [:]
            for scope in scopes {
                for (key, entry) in scope.answer(facts: try ledger.scopeFacts(scope, maintainer: maintainer), asOf: asOf) {
                    state[key.scope + " " + key.subject + " " + (key.productId ?? "")] =
                        entry.snapshot.json.canonicalString() + " " + entry.subject.json.canonicalString()
                }
            }
            return state
        }
    }

    @Test("the feed folds to every scope's answer: tangled histories, shuffled, in batches, cache kept or lost between derivations",
          arguments: Array(UInt64(1)...UInt64(100)))
    func foldEqualsAnswer(seed: UInt64) throws {
        let test = try ClockedLedger()
        var cache = AccessDeriverCache()
        let moment = try test.appendShuffled(seed: seed, salt: 7919, gap: B.day / 2) { moment, rng in
            if Bool.random(using: &rng) { cache = AccessDeriverCache() }  // a restart: derivers replayed from the store
            try test.derive(through: moment, cache: cache)
        }
        let end = moment + 3 * B.day
        try test.derive(through: end, cache: cache)
        let folded = try test.foldedFeed(), answers = try test.answers(asOf: end)
        let differing = Set(folded.keys).union(answers.keys).filter { folded[$0] != answers[$0] }.sorted()
        let message = "seed \(seed): \(differing.map { "\($0): feed \(folded[$0] ?? "-") answer \(answers[$0] ?? "-")" })"
        #expect(differing.isEmpty, "\(message)")
        // Feed positions are gap-free from 1, ids unique.
        let feed = try test.feed()
        #expect(feed.map(\.seq) == Array(1...Int64(max(1, feed.count))).prefix(feed.count).map { $0 })
        #expect(Set(feed.map(\.id)).count == feed.count)
    }

    @Test("folded per person, the feed gives the entitlement answer (`Ledger.entitlements`, what GET /v1/entitlements serves) for every identifier it names")
    func foldEqualsEntitlements() throws {
        var compared = 0, entitledSeen = 0
        for seed in UInt64(1)...UInt64(40) {
            let test = try ClockedLedger()
            let cache = AccessDeriverCache()
            let moment = try test.appendShuffled(seed: seed, salt: 104_729, gap: 60_000) { moment, _ in
                try test.derive(through: moment, cache: cache)
            }
            // At the last recording (some access still runs then) and after every period has ended.
            for end in [moment, moment + 3 * B.day] {
                try test.derive(through: end, cache: cache)
                // The reader's fold: each key's last `after`, then per identifier and product, entitled when any entry is.
                var folded: [String: JSONValue] = [:]
                for row in try test.feed() {
                    let body = try JSONValue.parse(row.body)
                    let key = row.scope + " " + row.subjectKey + " " + (row.productId ?? "")
                    folded[key] = body["after"] == .null ? nil : body
                }
                var byPerson: [String: [String: Bool]] = [:]
                for body in folded.values {
                    let subject = body["subject"]
                    let product = body["productId"]?.stringValue ?? ""
                    let entitled = body["after"]?["entitled"] == .bool(true)
                    // A person's Apple identifiers (a seat claim id names a seat, not a person, in the entitlement answer).
                    for field in ["originalTransactionId", "appTransactionId"] {
                        guard let id = subject?[field]?.stringValue, id != SandboxPlaceholder.groupId, id != SandboxPlaceholder.memberAppTransactionId else { continue }
                        byPerson[id, default: [:]][product] = (byPerson[id]?[product] ?? false) || entitled
                    }
                }
                for (id, products) in byPerson.sorted(by: { $0.key < $1.key }) {
                    let answer = try test.ledger.entitlements(id, asOf: end)
                    var expected: [String: Bool] = [:]
                    for entitlement in answer.entitlements { expected[entitlement.productId ?? ""] = entitlement.entitled }
                    // Entitled products agree; a product the person holds no access to may be absent from either.
                    #expect(products.filter(\.value) == expected.filter(\.value), "seed \(seed), \(id): feed \(products) answer \(expected)")
                    entitledSeen += products.values.filter { $0 }.count
                    compared += 1
                }
            }
        }
        // Not vacuous: many people compared, and many of them entitled at the last recording.
        #expect(compared > 100 && entitledSeen > 20, "compared \(compared), entitled \(entitledSeen)")
    }

    @Test("a lapse is derived when its moment falls due, with no news; the next change is reported before it")
    func lapseByTime() throws {
        let test = try ClockedLedger()
        var b = B()
        let expires = B.base + 30 * B.day
        b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "t1", original: "2000000000000001", app: "705000000000000001",
                                                                             quantity: 4, purchase: B.base, expires: expires))
        try test.append(b.events, at: B.base + 1_000)
        let cache = AccessDeriverCache()
        let first = try test.derive(through: B.base + 2_000, cache: cache)
        #expect(first.last?.nextChange == expires)
        let gained = try test.feed()
        #expect(gained.map(\.kind) == ["GAINED"])
        // Just before the end: nothing new.
        try test.derive(through: expires - 1, cache: cache)
        #expect(try test.feed().count == 1)
        try test.derive(through: expires + 60_000, cache: cache)
        let feed = try test.feed()
        #expect(feed.map(\.kind) == ["GAINED", "LOST"])
        let lost = try JSONValue.parse(feed[1].body)
        #expect(lost["cause"]?["kind"] == .string("TIME"))
        #expect(lost["effectiveAt"] == .timestamp(expires))
        #expect(lost["after"]?["entitled"] == .bool(false))
        #expect(try test.ledger.accessDerivationStatus().cursor.horizon == expires + 60_000)
    }

    @Test("a billing grace period learned a minute after the period ended: the lapse at the end is corrected by the grace, access is lost by time when the grace ends, and a recovery after it is news that corrects nothing")
    func graceEndsThenRecovers() throws {
        let test = try ClockedLedger()
        let otid = "2000000000000001", app = "705000000000000001"
        let expires = B.base + 30 * B.day, grace = expires + 16 * B.day
        var b = B()
        b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "t1", original: otid, app: app, quantity: 4,
                                                                             purchase: B.base, expires: expires))
        try test.append(b.events, at: B.base + 1_000)
        let cache = AccessDeriverCache()
        try test.derive(through: B.base + 2_000, cache: cache)
        // Apple could not charge at the period end: billing retry with a grace period, learned a minute after.
        var failure = B()
        failure.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: expires,
                             transaction: B.transaction(id: "t1", original: otid, app: app, quantity: 4, purchase: B.base, expires: expires),
                             renewal: B.renewal(original: otid, quantity: 4, grace: grace, retry: true, signed: expires), uuid: "n-fail")
        try test.append(failure.events, at: expires + 60_000)
        try test.derive(through: expires + 120_000, cache: cache)
        // The period's end fell due before the failure was recorded: a lapse by time, then the news that corrects it.
        let feed = try test.feed()
        #expect(feed.map(\.kind) == ["GAINED", "LOST", "GAINED"])
        let corrected = try JSONValue.parse(feed[2].body)
        #expect(corrected["corrects"] == .string(feed[1].id))
        #expect(corrected["after"]?["until"] == .timestamp(grace))
        #expect(corrected["effectiveAt"] == .timestamp(expires) && corrected["learnedAt"] == .timestamp(expires + 60_000))
        // Nothing new before the grace ends; a lapse by time once it has.
        try test.derive(through: grace - 1, cache: cache)
        #expect(try test.feed().count == 3)
        try test.derive(through: grace + 1_000, cache: cache)
        let lapse = try JSONValue.parse(try #require(test.feed().last).body)
        #expect(lapse["kind"] == "LOST" && lapse["cause"]?["kind"] == "TIME" && lapse["effectiveAt"] == .timestamp(grace))
        // Billing recovers two days after the grace ended: access again, as news; the lapse did happen.
        let recovered = grace + 2 * B.day
        var renewal = B()
        renewal.notification("DID_RENEW", "BILLING_RECOVERY", at: recovered,
                             transaction: B.transaction(id: "t2", original: otid, app: app, quantity: 4, purchase: recovered,
                                                        expires: recovered + 30 * B.day), uuid: "n-recovered")
        try test.append(renewal.events, at: recovered + 1_000)
        try test.derive(through: recovered + 2_000, cache: cache)
        let regained = try JSONValue.parse(try #require(test.feed().last).body)
        #expect(regained["kind"] == "GAINED" && regained["cause"]?["kind"] == "NEWS")
        #expect(regained["corrects"] == .null)
        #expect(regained["after"]?["until"] == .timestamp(recovered + 30 * B.day))
        #expect(try test.foldedFeed() == test.answers(asOf: recovered + 2_000))
    }

    @Test("a retraction (`seatledger retract`) derives its transitions: the withdrawn purchase's access is lost, caused by the retraction")
    func retraction() throws {
        let test = try ClockedLedger()
        var b = B()
        b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "t1", original: "2000000000000001", app: "705000000000000001",
                                                                             quantity: 4, purchase: B.base, expires: B.base + 30 * B.day))
        try test.append(b.events, at: B.base + 1_000)
        let cache = AccessDeriverCache()
        try test.derive(through: B.base + 2_000, cache: cache)
        let withdrawn = b.events[0].eventId
        test.ledger.store.clock = { B.base + 5_000 }
        _ = try test.ledger.retract(withdrawn, reason: "sent to the wrong ledger", by: "test")
        try test.derive(through: B.base + 6_000, cache: cache)
        let feed = try test.feed()
        #expect(feed.map(\.kind) == ["GAINED", "LOST"])
        let lost = try JSONValue.parse(try #require(feed.last).body)
        #expect(lost["cause"]?["retractedEventId"] == .string(withdrawn))
        #expect(lost["cause"]?["type"] == "Retraction")
        #expect(lost["corrects"] == .string(feed[0].id))
        #expect(try test.foldedFeed() == test.answers(asOf: B.base + 6_000))
    }

    @Test("every post of a delivery is kept: two senders that posted it (a lease ended under a slow post) both appear, and a late failure leaves it delivered")
    func doubleSendLogged() throws {
        let test = try ClockedLedger()
        try test.ledger.store.addWebhookEndpoint(WebhookEndpointRecord(id: "wh_1", url: "https://example.com/hooks", types: [WebhookMessageType.accessChanged],
                                                                       secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", createdAt: 0))
        var b = B()
        b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "t1", original: "2000000000000001", quantity: 4,
                                                                             purchase: B.base, expires: B.base + 30 * B.day))
        try test.append(b.events, at: B.base + 1_000)
        let derived = try test.derive(through: B.base + 2_000, cache: AccessDeriverCache())
        #expect(derived.map(\.queuedDeliveries).reduce(0, +) == 1)
        let first = try #require(try test.ledger.claimDueDeliveries(now: B.base + 3_000, leaseUntil: B.base + 4_000, limit: 10).first)
        // The lease ends; a second sender takes the same delivery while the first is still posting.
        let second = try #require(try test.ledger.claimDueDeliveries(now: B.base + 5_000, leaseUntil: B.base + 6_000, limit: 10).first)
        #expect(first.seq == second.seq)
        try test.ledger.recordDeliveryAttempt(WebhookAttemptRecord(deliverySeq: first.seq, attempt: 1, at: B.base + 5_500, status: 204,
                                                                   latencyMilliseconds: 2_500, error: nil, snippet: nil),
                                              endpointId: "wh_1", delivered: true, nextAttemptAt: nil)
        try test.ledger.recordDeliveryAttempt(WebhookAttemptRecord(deliverySeq: second.seq, attempt: 1, at: B.base + 5_600, status: 500,
                                                                   latencyMilliseconds: 100, error: "answered 500", snippet: nil),
                                              endpointId: "wh_1", delivered: false, nextAttemptAt: B.base + 10_000)
        let attempts = try test.ledger.store.webhookAttempts(deliverySeq: first.seq)
        #expect(attempts.map(\.attempt) == [1, 2] && attempts.map(\.status) == [204, 500])
        let delivery = try #require(try test.ledger.store.webhookDeliveries(limit: 10).first)
        #expect(delivery.state == WebhookDeliveryState.delivered && delivery.attempts == 2 && delivery.lastStatus == 204)
        #expect(try test.ledger.claimDueDeliveries(now: B.base + 20_000, leaseUntil: B.base + 21_000, limit: 10).isEmpty)
    }

    @Test("news and a lapse in one round: both scopes come from the cache, none is replayed")
    func newsAndLapseShareTheCache() throws {
        let test = try ClockedLedger()
        let expires = B.base + 30 * B.day
        var b = B()
        b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "x1", original: "2000000000000001", quantity: 2,
                                                                             purchase: B.base, expires: expires))
        b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "y1", original: "2000000000000002", quantity: 2,
                                                                             purchase: B.base, expires: expires + 365 * B.day))
        try test.append(b.events, at: B.base + 1_000)
        let cache = AccessDeriverCache()
        try test.derive(through: B.base + 2_000, cache: cache)
        #expect(cache.count == 2)
        // News of group 2 in the same round as group 1's period ends (time).
        var renewal = B()
        renewal.notification("DID_RENEW", at: expires + 500, transaction: B.transaction(id: "y2", original: "2000000000000002", quantity: 2,
                                                                                         purchase: expires, expires: expires + 400 * B.day),
                             uuid: "n-renew")
        try test.append(renewal.events, at: expires + 1_000)
        let round = try test.derive(through: expires + 2_000, cache: cache)
        #expect(round.map(\.replayedScopes).reduce(0, +) == 0)
        #expect(cache.count == 2)
        let last = try #require(try test.feed().last)
        #expect(last.kind == "LOST" && last.scope == "group:2000000000000001")
    }

    @Test("news of a scope whose deriver was lost: replayed and derived in one plan, the feed gains the news only, nothing reconciled")
    func replayWithNewsReconcilesNothing() throws {
        let test = try ClockedLedger()
        let otid = "2000000000000002", app = "705000000000000002"
        var b = B()
        b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "y1", original: otid, app: app, quantity: 2,
                                                                             purchase: B.base, expires: B.base + 30 * B.day))
        try test.append(b.events, at: B.base + 1_000)
        try test.derive(through: B.base + 2_000, cache: AccessDeriverCache())
        let before = try test.feed()
        let refunded = B.base + 10 * B.day
        var refund = B()
        refund.notification("REFUND", at: refunded, transaction: B.transaction(id: "y1", original: otid, app: app, quantity: 2,
                                                                                purchase: B.base, expires: B.base + 30 * B.day,
                                                                                signed: refunded, revocationDate: refunded, revocationType: "FULL"),
                            uuid: "n-refund-replayed")
        try test.append(refund.events, at: refunded + 1_000)
        // A new cache: the group is replayed from the store in the same plan that derives its news.
        let round = try test.derive(through: refunded + 2_000, cache: AccessDeriverCache())
        #expect(round.map(\.replayedScopes).reduce(0, +) == 1)
        let added = Array(try test.feed().dropFirst(before.count))
        #expect(added.map(\.kind) == ["LOST"])
        // The replay's news is folded with what is stored before the scope is reconciled: nothing to reconcile.
        #expect(added.allSatisfy { !$0.body.contains("\"reconciled\":true") }, "\(added.map(\.id))")
        #expect(try test.foldedFeed() == test.answers(asOf: refunded + 2_000))
    }

    @Test("a second derivation, with every deriver lost, stores nothing and queues nothing")
    func idempotent() throws {
        let test = try ClockedLedger()
        let history = IncrementalEqualsRebuildTests.tangledHistory(seed: 3)
        try test.append(history.events, at: B.base + B.day)
        try test.derive(through: B.base + B.day, cache: AccessDeriverCache())
        let before = try test.feed()
        #expect(!before.isEmpty)
        // The cursor back at 0 (as if the commit that moved it had never happened, the transitions kept).
        _ = try test.ledger.store.write { try test.ledger.store.setAccessCursor(AccessCursor(position: 0, horizon: 0)) }
        let again = try test.derive(through: B.base + B.day, cache: AccessDeriverCache())
        #expect(again.flatMap(\.stored).isEmpty)
        #expect(try test.feed() == before)
    }

    @Test("a plan made before another derivation committed is dropped: it stores nothing and leaves the other's cursor where it is")
    func stalePlanDropped() throws {
        let test = try ClockedLedger()
        let history = IncrementalEqualsRebuildTests.tangledHistory(seed: 5)
        let half = history.events.count / 2
        try test.append(Array(history.events.prefix(half)), at: B.base + B.day)
        let cache = AccessDeriverCache()
        // Planned (in its own snapshot); then more news, and another derivation (another process,
        // on PostgreSQL) derives all of it and commits first.
        let stale = try test.ledger.planAccessChanges(through: B.base + B.day, cache: cache)
        #expect(!stale.rows.isEmpty && stale.events == Int64(half))
        try test.append(Array(history.events.dropFirst(half)), at: B.base + 2 * B.day)
        let other = try test.ledger.deriveAccessChanges(through: B.base + 2 * B.day, cache: AccessDeriverCache())
        #expect(other.cursor.position == Int64(history.events.count))
        let afterOther = try test.feed()
        // Stored now, the stale plan would move the cursor back to half the log.
        let dropped = try test.ledger.commitAccessChanges(stale)
        #expect(dropped.stored.isEmpty && !dropped.caughtUp && !dropped.busy)
        #expect(dropped.cursor == other.cursor)
        #expect(try test.ledger.accessDerivationStatus().cursor == other.cursor)
        #expect(try test.feed() == afterOther)
        cache.keep(stale, storedBy: dropped)
        #expect(cache.count == 0)
        // Planned again from the other's cursor: nothing left, and the feed folds to the answer.
        let again = try test.derive(through: B.base + 2 * B.day, cache: cache)
        #expect(again.flatMap(\.stored).isEmpty)
        #expect(try test.foldedFeed() == test.answers(asOf: B.base + 2 * B.day))
    }

    @Test("10,000 groups expiring in the same second: every lapse derived, only the due scopes touched")
    func manyLapsesAtOnce() throws {
        let test = try ClockedLedger()
        var b = B()
        let expires = B.base + 30 * B.day
        for index in 0..<10_000 {
            let otid = String(3_000_000_000_000_000 + index)
            b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "t\(index)", original: otid, quantity: 2,
                                                                                 purchase: B.base, expires: expires + EpochMillis(index % 1_000)))
        }
        // 1,000 groups that end a year later: not due, never touched by the lapse run.
        for index in 0..<1_000 {
            let otid = String(4_000_000_000_000_000 + index)
            b.notification("SUBSCRIBED", at: B.base, transaction: B.transaction(id: "u\(index)", original: otid, quantity: 2,
                                                                                 purchase: B.base, expires: expires + 365 * B.day))
        }
        try test.append(b.events, at: B.base + 1_000)
        let cache = AccessDeriverCache(capacity: 512)
        try test.derive(through: B.base + 2_000, cache: cache)
        #expect(try test.feed().count == 11_000)
        let notDue = try test.ledger.store.accessScopeStates(Set((0..<1_000).map { "group:" + String(4_000_000_000_000_000 + $0) }))
        let runs = try test.derive(through: expires + 1_000, cache: cache)
        #expect(runs.count == 6)  // 2,000 due scopes a transaction, then one that finds none left
        let lost = try test.feed().filter { $0.kind == "LOST" }
        #expect(lost.count == 10_000)
        #expect(Set(lost.map(\.scope)).count == 10_000)
        #expect(try test.ledger.store.accessScopeStates(Set(notDue.keys)) == notDue)
    }
}
