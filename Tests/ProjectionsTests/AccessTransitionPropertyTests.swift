import AppStoreModels
import LedgerEvents
import Projections
import ProjectionTestSupport
import Testing

/// The properties of access transitions: each one is what the reference rule says (the
/// projections before and after its event, or its moment), their fold is the projections'
/// answer now whatever order and lateness the events arrived in, ids are stable, and lapses by
/// time are found for many scopes at once.
@Suite("access transitions: the fold, the reference rule, stable ids, many lapses")
struct AccessTransitionPropertyTests {
    typealias B = ScenarioBuilder
    static let p = "2000000000000001"
    static let pApp = "704000000000000001"
    static let end = B.days(30)

    /// A deterministic generator (SplitMix64) so that each seed is one reproducible stream.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        init(_ seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// The lifecycles the properties run over.
    enum Scenario: String, CaseIterable, Sendable {
        case developerHosted, appleHosted, individual, retracted

        var scope: AccessScope { self == .individual ? .subscription("s1") : .group(AccessTransitionPropertyTests.p) }

        /// The scenario's events; a retraction must follow its target, so it is `pinned` to arrive last.
        func build() -> (builder: B, pinned: Set<String>) {
            let p = AccessTransitionPropertyTests.p, app = AccessTransitionPropertyTests.pApp, end = AccessTransitionPropertyTests.end
            var b = B()
            func purchase(model: String = "DEVELOPER", seats: Int64 = 3) {
                b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(0),
                               transaction: B.transaction(id: p, original: p, app: app, quantity: seats, purchase: B.days(0),
                                                          expires: end, model: model),
                               renewal: B.renewal(original: p, quantity: seats, signed: B.days(0)))
            }
            switch self {
            case .developerHosted:
                purchase()
                b.claim("c-1", purchaser: p, at: B.days(1), memberRef: "member-1")
                b.claim("c-2", purchaser: p, at: B.days(2), memberRef: "member-2")
                b.api("AssociateSeat", method: "POST", path: "/groups/v1/transactions/\(p)/seats/c-1/associate",
                      request: ["appTransactionId": "704000000000000071"], at: B.days(3))
                b.notification("DID_CHANGE_RENEWAL_PREF", "INCREASE_QUANTITY", at: B.days(10),
                               transaction: B.transaction(id: "2000000000000002", original: p, app: app, quantity: 2,
                                                          purchase: B.days(10), expires: end, seatAddition: true),
                               renewal: B.renewal(original: p, quantity: 5, signed: B.days(10)))
                b.claim("c-3", purchaser: p, at: B.days(10) + 60_000)
                b.notification("UNCLAIM_SEATS", at: B.days(12), unclaim: ["c-2"])
                b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: end + 1000,
                               transaction: B.transaction(id: p, original: p, app: app, quantity: 3, purchase: B.days(0), expires: end),
                               renewal: B.renewal(original: p, quantity: 5, grace: B.days(36), retry: true, signed: end + 1000))
                b.notification("DID_RENEW", "BILLING_RECOVERY", at: B.days(33),
                               transaction: B.transaction(id: "2000000000000009", original: p, app: app, quantity: 5,
                                                          purchase: B.days(33), expires: B.days(63)),
                               renewal: B.renewal(original: p, quantity: 5, retry: false, signed: B.days(33)))
                b.unclaim("c-3", purchaser: p, at: B.days(40))
                return (b, [])
            case .appleHosted:
                let m = "2000000000000101", m2 = "2000000000000102"
                purchase(model: "APPLE", seats: 5)
                for (member, day) in [(m, 1.0), (m2, 3.0)] {
                    b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(day),
                                   transaction: B.transaction(id: member, original: member, app: "7\(member)", ownership: "ASSIGNED",
                                                              purchase: B.days(day), expires: end, model: "APPLE"))
                }
                b.api("GetGroupMembers", path: "/groups/v1/group/grp-1?limit=100",
                      body: ["members": [["appTransactionId": .string(app)], ["appTransactionId": .string("7\(m)")],
                                         ["appTransactionId": .string("7\(m2)")]], "hasMore": false], at: B.days(4))
                b.notification("REVOKE", at: B.days(8), transaction: B.transaction(
                    id: m2, original: m2, app: "7\(m2)", ownership: "ASSIGNED", purchase: B.days(3), expires: end,
                    signed: B.days(8), model: "APPLE", revocationDate: B.days(8), revocationType: "ASSIGNMENT_REVOKE"))
                b.notification("REFUND", at: B.days(15), transaction: B.transaction(
                    id: p, original: p, app: app, quantity: 5, purchase: B.days(0), expires: end, signed: B.days(15), model: "APPLE",
                    revocationDate: B.days(15), revocationType: "REFUND_FULL"))
                return (b, [])
            case .individual:
                b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(0),
                               transaction: B.transaction(id: "s1", original: "s1", app: "704000000000000009", purchase: B.days(0),
                                                          expires: end, model: nil))
                b.notification("DID_RENEW", at: end - 60_000,
                               transaction: B.transaction(id: "s2", original: "s1", app: "704000000000000009", purchase: end - 60_000,
                                                          expires: B.days(60), model: nil))
                b.notification("DID_FAIL_TO_RENEW", at: B.days(60) + 1000,
                               transaction: B.transaction(id: "s2", original: "s1", app: "704000000000000009", purchase: end - 60_000,
                                                          expires: B.days(60), signed: B.days(60) + 1000, model: nil),
                               renewal: B.renewal(original: "s1", retry: true, signed: B.days(60) + 1000))
                b.notification("DID_RENEW", "BILLING_RECOVERY", at: B.days(65),
                               transaction: B.transaction(id: "s3", original: "s1", app: "704000000000000009", purchase: B.days(65),
                                                          expires: B.days(95), model: nil))
                return (b, [])
            case .retracted:
                purchase()
                b.claim("c-1", purchaser: p, at: B.days(1))
                b.claim("c-2", purchaser: p, at: B.days(2))
                let unclaim = b.unclaim("c-1", purchaser: p, at: B.days(5))
                b.notification("DID_RENEW", at: end - 60_000,
                               transaction: B.transaction(id: "2000000000000009", original: p, app: app, quantity: 3,
                                                          purchase: end - 60_000, expires: B.days(60)))
                let retraction = b.retract(unclaim, at: B.days(20))
                return (b, [retraction])
            }
        }
    }

    /// The events as one ledger would hold them after they arrived in a shuffled order, some of
    /// them twice (the repeat dropped), each recorded at or after Apple signed it, some days late.
    static func arrival(_ scenario: Scenario, seed: UInt64) -> [EventFacts] {
        var rng = SplitMix64(seed)
        let (builder, pinned) = scenario.build()
        let facts = builder.facts
        var arrivals = facts.filter { !pinned.contains($0.eventId) }.shuffled(using: &rng) + facts.filter { pinned.contains($0.eventId) }
        for fact in arrivals where rng.next() % 4 == 0 {
            let first = arrivals.firstIndex { $0.eventId == fact.eventId }!
            arrivals.insert(fact, at: Int.random(in: (first + 1)...arrivals.count, using: &rng))
        }
        var seen = Set<String>(), result: [EventFacts] = [], clock = EpochMillis.min
        for var fact in arrivals where seen.insert(fact.eventId).inserted {
            let lag = rng.next() % 3 == 0 ? EpochMillis(rng.next() % UInt64(5 * B.day)) : EpochMillis(rng.next() % 60_000)
            clock = max(clock == .min ? fact.occurredAt : clock + 1, fact.occurredAt + lag)
            fact.position = EpochMillis(result.count + 1)
            fact.recordedAt = clock
            result.append(fact)
        }
        return result
    }

    /// One subject's access to one product as the projections give it, read without ``AccessScope``.
    struct Expected: Hashable, CustomStringConvertible {
        var entitled: Bool, until: EpochMillis?, source: String, reason: Revocation?, appTransactionId: String?, memberRef: String?
        var description: String { "\(entitled) until \(until.map(String.init) ?? "nil") \(source) \(reason?.reason.rawValue ?? "-")" }
    }

    /// The projections' answer at (asOf, knownAt), keyed `<subject>|<product>`.
    static func expected(_ scope: AccessScope, _ facts: [EventFacts], asOf: EpochMillis, knownAt: EpochMillis?) -> [String: Expected] {
        var result: [String: Expected] = [:]
        switch scope {
        case .group(let key):
            let state = GroupProjection.project(GroupMembership(groupKey: key), facts: facts, asOf: asOf, knownAt: knownAt)
            for member in state.members {
                let subject = member.seatClaimId.map { "claim:" + $0 } ?? "tx:" + (member.originalTransactionId ?? "?")
                result[subject + "|" + (state.productId ?? "")] = Expected(
                    entitled: member.hasAccess, until: member.accessUntil, source: EntitlementSource(role: member.role).rawValue,
                    reason: member.revocation, appTransactionId: member.appTransactionId, memberRef: member.memberRef)
            }
        case .subscription(let otid):
            if let state = SubscriptionProjection.project(originalTransactionId: otid, facts: facts, asOf: asOf, knownAt: knownAt) {
                result["tx:" + otid + "|" + (state.productId ?? "")] = Expected(
                    entitled: state.hasAccess, until: state.accessUntil, source: "PURCHASED", reason: state.revocation,
                    appTransactionId: state.appTransactionId, memberRef: nil)
            }
        }
        return result
    }

    static func name(_ key: AccessKey) -> String { key.subject + "|" + (key.productId ?? "") }

    static func expected(_ snapshot: AccessSnapshot?, _ subject: AccessSubject) -> Expected? {
        snapshot.map { Expected(entitled: $0.entitled, until: $0.until, source: $0.source.rawValue, reason: $0.reason,
                                appTransactionId: subject.appTransactionId, memberRef: subject.memberRef) }
    }

    static var cases: [(Scenario, UInt64)] { Scenario.allCases.flatMap { scenario in (1...8).map { (scenario, UInt64($0)) } } }

    @Test("the fold of the transitions is the projections' answer now, for shuffled, repeated and late-recorded streams",
          arguments: cases)
    func foldIsTheAnswer(_ scenario: Scenario, seed: UInt64) throws {
        let facts = Self.arrival(scenario, seed: seed)
        var rng = SplitMix64(seed &* 31)
        let now = facts.map(\.recordedAt).max()! + (rng.next() % 2 == 0 ? 0 : EpochMillis(rng.next() % UInt64(70 * B.day)))
        let transitions = AccessTransitions.derive(scenario.scope, facts: facts, now: now)
        let folded = AccessTransitions.fold(transitions)
        let answer = Self.expected(scenario.scope, facts, asOf: now, knownAt: nil)
        #expect(!answer.isEmpty)
        #expect(Dictionary(uniqueKeysWithValues: folded.map { (Self.name($0.key), Self.expected($0.value.snapshot, $0.value.subject)!) }) == answer)
        #expect(Set(transitions.map(\.id)).count == transitions.count)
        #expect(zip(transitions, transitions.dropFirst()).allSatisfy { $0.learnedAt <= $1.learnedAt })
    }

    @Test("each transition is the reference rule's: before and after its event at its recording, or just before and at its moment",
          arguments: cases)
    func referenceRule(_ scenario: Scenario, seed: UInt64) throws {
        let facts = Self.arrival(scenario, seed: seed)
        let now = facts.map(\.recordedAt).max()! + 70 * B.day
        let transitions = AccessTransitions.derive(scenario.scope, facts: facts, now: now)
        let recorded = Dictionary(uniqueKeysWithValues: facts.map { ($0.position, $0.recordedAt) })
        for transition in transitions {
            let known = recorded[transition.cause.knownThrough.position]!
            let (beforeAt, beforeKnown) = transition.cause.kind == .news ? (transition.learnedAt, known - 1)
                                                                          : (transition.learnedAt - 1, known)
            let before = Self.expected(scenario.scope, facts, asOf: beforeAt, knownAt: beforeKnown)[Self.name(transition.key)]
            let after = Self.expected(scenario.scope, facts, asOf: transition.learnedAt, knownAt: known)[Self.name(transition.key)]
            #expect(Self.expected(transition.after, transition.subject) == after, "\(transition.id)")
            #expect(Self.expected(transition.before, transition.subject)?.entitled == before?.entitled, "\(transition.id)")
            #expect(transition.before?.until == before?.until && transition.before?.reason == before?.reason, "\(transition.id)")
            #expect(transition.effectiveAt <= transition.learnedAt)
        }
        // And nothing is missed: every event whose recording changes the answer caused a transition of each key it changed.
        for fact in facts {
            let before = Self.expected(scenario.scope, facts, asOf: fact.recordedAt, knownAt: fact.recordedAt - 1)
            let after = Self.expected(scenario.scope, facts, asOf: fact.recordedAt, knownAt: fact.recordedAt)
            let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }
            let caused = Set(transitions.filter { $0.cause.event?.eventId == fact.eventId && $0.cause.kind == .news }.map { Self.name($0.key) })
            #expect(caused == changed, "\(fact.eventId)")
        }
    }

    @Test("a scheduler waking at each next change, and a restart replaying the log, derive the same transitions",
          arguments: Scenario.allCases)
    func incremental(_ scenario: Scenario) throws {
        let facts = Self.arrival(scenario, seed: 7)
        let now = facts.map(\.recordedAt).max()! + 70 * B.day
        let reference = AccessTransitions.derive(scenario.scope, facts: facts, now: now)
        var deriver = AccessTransitionDeriver(scope: scenario.scope)
        var transitions: [AccessTransition] = []
        var woken: [EpochMillis] = []
        let steps: [EventFacts?] = facts.map { $0 } + [nil]
        for fact in steps {
            let horizon = fact?.recordedAt ?? now
            while let next = deriver.nextChange(), next <= horizon {
                woken.append(next)
                let lapses = deriver.advance(to: next)
                #expect(!lapses.isEmpty && lapses.allSatisfy { $0.learnedAt == next })
                transitions += lapses
            }
            if let fact { transitions += deriver.append(fact) } else { transitions += deriver.advance(to: now) }
        }
        #expect(transitions == reference)
        #expect(Set(reference.filter { $0.cause.kind == .time }.map(\.learnedAt)) == Set(woken))
        #expect(deriver.current == AccessTransitions.fold(reference))
        for fact in facts { #expect(deriver.append(fact).isEmpty) }   // a restart replays the tail: nothing twice
        #expect(AccessTransitions.derive(scenario.scope, facts: facts + facts, now: now) == reference)
    }

    @Test("ids are stable: the same facts give the same ids, and an event that changes nothing leaves the ids before it alone")
    func stableIds() throws {
        let (builder, _) = Scenario.developerHosted.build()
        let facts = builder.facts
        let now = B.days(70)
        let first = AccessTransitions.derive(.group(Self.p), facts: facts, now: now)
        #expect(AccessTransitions.derive(.group(Self.p), facts: facts, now: now).map(\.id) == first.map(\.id))
        var more = builder
        let quiet = more.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: B.days(20),
                                      transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: 3,
                                                                 purchase: B.days(0), expires: Self.end),
                                      renewal: B.renewal(original: Self.p, quantity: 5, signed: B.days(20)))
        var moreFacts = more.facts
        // Recorded after everything else, it is the last event: every transition before it keeps its id.
        moreFacts[moreFacts.count - 1].recordedAt = B.days(45)
        let second = AccessTransitions.derive(.group(Self.p), facts: moreFacts, now: now)
        #expect(!second.contains { $0.cause.event?.eventId == quiet })
        let earlier = first.filter { $0.learnedAt < B.days(45) }
        #expect(!earlier.isEmpty && Array(second.prefix(earlier.count)) == earlier)
        // A lapse after it is the same change, derived with more known: its id names the last event known.
        #expect(second.map(\.kind) == first.map(\.kind) && second.count == first.count)
        let lateLapses = zip(first, second).filter { $0.0.learnedAt >= B.days(45) }
        #expect(!lateLapses.isEmpty && lateLapses.allSatisfy { $0.0.id != $0.1.id && $0.1.cause.knownThrough.eventId == quiet })
        #expect(first.allSatisfy { $0.id.hasPrefix("at1;group:\(Self.p);") })
    }

    @Test("an id's parts are escaped: a product id with ';' or '%' cannot forge another key's id")
    func idEscaping() {
        let cause = TransitionCause(kind: .news, event: EventReference(eventId: "e;1", position: 1), eventType: nil, subtype: nil,
                                    retractedEventId: nil, knownThrough: EventReference(eventId: "e;1", position: 1), upstream: nil)
        let a = AccessTransitionID.make(key: AccessKey(scope: "group:g", subject: "tx:1", productId: "a;b"), kind: .gained, cause: cause, at: 5)
        let b = AccessTransitionID.make(key: AccessKey(scope: "group:g", subject: "tx:1;a", productId: "b"), kind: .gained, cause: cause, at: 5)
        #expect(a != b)
        #expect(a == "at1;group:g;tx:1;a%3Bb;e:e%3B1;GAINED")
    }

    @Test("10,000 groups expiring in the same second: each one's next change is in that second, and advancing to its end lapses all of them")
    func manyLapsesInOneSecond() throws {
        let second = B.days(30)
        var builder = B()
        let count = 10_000
        for i in 0..<count {
            let otid = String(2_000_000_100_000_000 + i)
            builder.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(0) + EpochMillis(i),
                                 transaction: B.transaction(id: otid, original: otid, app: "7\(otid)", quantity: 2,
                                                            purchase: B.days(0) + EpochMillis(i), expires: second + EpochMillis(i * 7 % 1000)))
        }
        var derivers: [AccessTransitionDeriver] = []
        derivers.reserveCapacity(count)
        var gained = 0
        for fact in builder.facts {
            var deriver = AccessTransitionDeriver(scope: .group(fact.transactions[0].originalTransactionId))
            gained += deriver.append(fact).filter { $0.kind == .gained }.count
            derivers.append(deriver)
        }
        #expect(gained == count)
        let next = derivers.map { $0.nextChange() }
        #expect(next.allSatisfy { $0.map { $0 >= second && $0 < second + 1000 } ?? false })
        #expect(next.compactMap { $0 }.min() == second)
        var lapses: [AccessTransition] = []
        for index in derivers.indices { lapses += derivers[index].advance(to: second + 999) }
        #expect(lapses.count == count)
        #expect(lapses.allSatisfy { $0.kind == .lost && $0.cause.kind == .time && $0.after?.reason?.reason == .expired })
        #expect(Set(lapses.map(\.key.scope)).count == count && Set(lapses.map(\.id)).count == count)
        #expect(derivers.allSatisfy { $0.nextChange() == nil })
    }
}
