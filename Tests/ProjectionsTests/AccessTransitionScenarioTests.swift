import AppStoreModels
import Projections
import ProjectionTestSupport
import Testing

/// Access transitions of one scope through the lifecycles of `Events/api/access-transitions.md`:
/// each test derives a scenario's whole list and checks what each step says.
@Suite("access transitions: scenarios")
struct AccessTransitionScenarioTests {
    typealias B = ScenarioBuilder
    static let p = "2000000000000001"
    static let pApp = "704000000000000001"
    static let m = "2000000000000101"
    let start = B.days(0)
    let end = B.days(30)

    /// A developer-hosted group of `seats` bought at `start` for a period ending at `end`, with claim `c-1` a day later.
    func devGroup(seats: Int64 = 3) -> B {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: seats,
                                                  purchase: start, expires: end),
                       renewal: B.renewal(original: Self.p, quantity: seats, signed: start))
        b.claim("c-1", purchaser: Self.p, at: B.days(1), memberRef: "member-1")
        return b
    }

    /// An Apple-hosted group of 5 seats whose member `m` (own ASSIGNED transaction) Get Group Members links on day 2.
    func appleGroup() -> B {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: 5,
                                                  purchase: start, expires: end, model: "APPLE"))
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1),
                       transaction: B.transaction(id: Self.m, original: Self.m, app: "7\(Self.m)", ownership: "ASSIGNED",
                                                  purchase: B.days(1), expires: end, model: "APPLE"))
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1?limit=100",
              body: ["members": [["appTransactionId": .string(Self.pApp)], ["appTransactionId": .string("7\(Self.m)")]], "hasMore": false],
              at: B.days(2))
        return b
    }

    static func of(_ subject: String, _ transitions: [AccessTransition]) -> [AccessTransition] {
        transitions.filter { $0.key.subject == subject }
    }

    @Test("a group purchase: each member gained at their news, then both lost by time at the period end")
    func purchaseThenExpiry() throws {
        let b = devGroup()
        let transitions = AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(40))
        #expect(transitions.map(\.kind) == [.gained, .gained, .lost, .lost])
        #expect(transitions.map(\.key.subject) == ["tx:\(Self.p)", "claim:c-1", "claim:c-1", "tx:\(Self.p)"])
        let gained = transitions[1]
        #expect(gained.cause.kind == .news && gained.cause.event?.eventId == b.events[1].eventId && gained.cause.event?.position == 2)
        #expect(gained.effectiveAt == B.days(1) && gained.learnedAt == B.days(1))
        #expect(gained.after == AccessSnapshot(entitled: true, until: end, source: .developerClaim, reason: nil))
        #expect(gained.subject.memberRef == "member-1" && gained.subject.groupKey == Self.p)
        let purchaserLapse = transitions[3], claimLapse = transitions[2]
        for lapse in [purchaserLapse, claimLapse] {
            #expect(lapse.cause.kind == .time && lapse.effectiveAt == end && lapse.learnedAt == end)
            #expect(lapse.cause.event?.eventId == b.events[0].eventId)      // the purchase set the end that fell due
            #expect(lapse.cause.knownThrough.position == 2 && lapse.corrects == nil)
        }
        #expect(purchaserLapse.after?.reason?.reason == .expired && purchaserLapse.before?.until == end)
        #expect(claimLapse.after?.reason?.reason == .groupExpired && claimLapse.cause.upstream?.reason == .expired)
        #expect(Set(transitions.map(\.id)).count == transitions.count)
    }

    @Test("billing grace: the end moves to the grace end when the period ends, and access is lost when grace ends")
    func graceEnding() throws {
        var b = devGroup()
        let failure = b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: end - 3_600_000,
                                     transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: 3, purchase: start, expires: end),
                                     renewal: B.renewal(original: Self.p, quantity: 3, grace: B.days(36), retry: true, signed: end - 3_600_000))
        let transitions = Self.of("tx:\(Self.p)", AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(40)))
        #expect(transitions.map(\.kind) == [.gained, .endMoved, .lost])   // nothing at the failure notice itself
        let moved = transitions[1]
        #expect(moved.cause.kind == .time && moved.learnedAt == end && moved.before?.until == end && moved.after?.until == B.days(36))
        let lost = transitions[2]
        #expect(lost.cause.kind == .time && lost.effectiveAt == B.days(36) && lost.after?.reason?.reason == .gracePeriodExpired)
        #expect(lost.cause.event?.eventId == failure)                     // the renewal info that carried the grace end
    }

    @Test("billing retry recovering in grace: access continues, the end moves to the new period's, caused by DID_RENEW")
    func billingRetryRecovery() throws {
        var b = devGroup()
        b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: end - 3_600_000,
                       transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: 3, purchase: start, expires: end),
                       renewal: B.renewal(original: Self.p, quantity: 3, grace: B.days(36), retry: true, signed: end - 3_600_000))
        let recovery = b.notification("DID_RENEW", "BILLING_RECOVERY", at: B.days(33),
                                      transaction: B.transaction(id: "2000000000000009", original: Self.p, app: Self.pApp, quantity: 3,
                                                                 purchase: B.days(33), expires: B.days(63)),
                                      renewal: B.renewal(original: Self.p, quantity: 3, retry: false, signed: B.days(33)))
        let all = AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(40))
        for subject in ["tx:\(Self.p)", "claim:c-1"] {
            let transitions = Self.of(subject, all)
            #expect(transitions.map(\.kind) == [.gained, .endMoved, .endMoved], "\(subject)")
            let recovered = transitions[2]
            #expect(recovered.cause.event?.eventId == recovery && recovered.cause.subtype == "BILLING_RECOVERY")
            #expect(recovered.before?.until == B.days(36) && recovered.after?.until == B.days(63) && recovered.after?.entitled == true)
            #expect(recovered.corrects == nil)                             // news about after the grace began: nothing to correct
        }
        #expect(!all.contains { $0.kind == .lost })
    }

    @Test("a seat added changes no member's access; the member who takes it gains access until the period end")
    func seatAdded() throws {
        var b = devGroup()
        let addition = b.notification("DID_CHANGE_RENEWAL_PREF", "INCREASE_QUANTITY", at: B.days(10),
                                      transaction: B.transaction(id: "2000000000000002", original: Self.p, app: Self.pApp, quantity: 2,
                                                                 purchase: B.days(10), expires: end, seatAddition: true),
                                      renewal: B.renewal(original: Self.p, quantity: 5, signed: B.days(10)))
        let claim = b.claim("c-2", purchaser: Self.p, at: B.days(10) + 60_000)
        let transitions = AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(11))
        #expect(!transitions.contains { $0.cause.event?.eventId == addition })
        let gained = try #require(transitions.last)
        #expect(gained.key.subject == "claim:c-2" && gained.kind == .gained && gained.cause.event?.eventId == claim)
        #expect(gained.after?.until == end && gained.before == nil && gained.productId == B.product)
    }

    /// Who ends a claim.
    enum Unclaimer: String, CaseIterable, Sendable { case appStore, developer }

    @Test("an unclaimed seat: the claim's access is lost with the reason and the event that unclaimed it", arguments: Unclaimer.allCases)
    func unclaimed(_ by: Unclaimer) throws {
        var b = devGroup()
        let event = by == .appStore ? b.notification("UNCLAIM_SEATS", at: B.days(12), unclaim: ["c-1"])
                                    : b.unclaim("c-1", purchaser: Self.p, at: B.days(12))
        let transitions = AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(13))
        let lost = try #require(transitions.last)
        #expect(lost.key.subject == "claim:c-1" && lost.kind == .lost && lost.effectiveAt == B.days(12))
        #expect(lost.cause.event?.eventId == event && lost.after?.reason?.eventId == event)
        #expect(lost.after?.reason?.reason == (by == .appStore ? .unclaimedByAppStore : .unclaimedByDeveloper))
        #expect(Self.of("tx:\(Self.p)", transitions).count == 1)           // the purchaser keeps access
    }

    @Test("a full refund: the purchaser loses access as REFUND_FULL, the linked member as GROUP_REVOKED with the refund one level up")
    func refund() throws {
        var b = appleGroup()
        let refund = b.notification("REFUND", at: B.days(15),
                                    transaction: B.transaction(id: Self.p, original: Self.p, app: Self.pApp, quantity: 5, purchase: start,
                                                               expires: end, signed: B.days(15), model: "APPLE",
                                                               revocationDate: B.days(15), revocationType: "REFUND_FULL"))
        let transitions = AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(40))
        let member = Self.of("tx:\(Self.m)", transitions)
        #expect(member.map(\.kind) == [.gained, .lost])
        #expect(member[0].cause.eventType == "GetGroupMembers" && member[0].after?.source == .assignedSeat)  // linked on day 2
        let lost = member[1], purchaserLost = try #require(Self.of("tx:\(Self.p)", transitions).last)
        #expect(lost.cause.event?.eventId == refund && lost.cause.eventType == "REFUND" && lost.effectiveAt == B.days(15))
        #expect(lost.after?.reason?.reason == .groupRevoked)
        #expect(lost.cause.upstream == RevocationCause(reason: .refundFull, at: B.days(15), eventId: refund))
        #expect(purchaserLost.kind == .lost && purchaserLost.after?.reason?.reason == .refundFull && purchaserLost.cause.upstream == nil)
        #expect(!transitions.contains { $0.cause.kind == .time })          // nothing left to lapse at the period end
    }

    @Test("an individual subscription: gained; renewed early, its end moves when the running period ends; lost by time; Apple's EXPIRED then names the reason")
    func individualSubscription() throws {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: "s1", original: "s1", app: "704000000000000009", purchase: start, expires: end, model: nil))
        let renewal = b.notification("DID_RENEW", at: end - 60_000,
                                     transaction: B.transaction(id: "s2", original: "s1", purchase: end - 60_000, expires: B.days(60), model: nil))
        let expired = b.notification("EXPIRED", "VOLUNTARY", at: B.days(60) + 60_000,
                                     transaction: B.transaction(id: "s2", original: "s1", purchase: end - 60_000, expires: B.days(60),
                                                                signed: B.days(60) + 60_000, model: nil))
        let transitions = AccessTransitions.derive(.subscription("s1"), facts: b.facts, now: B.days(70))
        #expect(transitions.map(\.kind) == [.gained, .endMoved, .lost, .reasonChanged])
        #expect(transitions.allSatisfy { $0.key.subject == "tx:s1" && $0.subject.groupKey == nil && $0.key.scope == "subscription:s1" })
        // A renewal charged before the period ends starts at that end: the projections' `until` is the
        // running period's until then, so the end moves by time, not at the renewal's news.
        #expect(!transitions.contains { $0.cause.event?.eventId == renewal && $0.cause.kind == .news })
        #expect(transitions[1].cause.kind == .time && transitions[1].learnedAt == end)
        #expect(transitions[1].before?.until == end && transitions[1].after?.until == B.days(60))
        #expect(transitions[2].cause.kind == .time && transitions[2].learnedAt == B.days(60) && transitions[2].after?.reason?.reason == .expired)
        #expect(transitions[2].after?.reason?.eventId == renewal)
        #expect(transitions[3].cause.event?.eventId == expired && transitions[3].after?.reason?.eventId == expired)
        #expect(transitions[3].corrects == nil && transitions[3].after?.until == B.days(60))
    }

    @Test("a renewal signed before an emitted lapse and learned after it: access continued, and each GAINED names the lapse it corrects")
    func lateRenewalCorrectsLapse() throws {
        var b = devGroup()
        let renewal = b.notification("DID_RENEW", at: end - 60_000,
                                     transaction: B.transaction(id: "2000000000000009", original: Self.p, app: Self.pApp, quantity: 3,
                                                                purchase: end - 60_000, expires: B.days(60)),
                                     recordedAt: end + 2 * 3_600_000)
        let all = AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(40))
        for subject in ["tx:\(Self.p)", "claim:c-1"] {
            let transitions = Self.of(subject, all)
            #expect(transitions.map(\.kind) == [.gained, .lost, .gained], "\(subject)")
            let lapse = transitions[1], correction = transitions[2]
            #expect(lapse.cause.kind == .time && lapse.learnedAt == end)
            #expect(correction.corrects == lapse.id && correction.cause.event?.eventId == renewal)
            #expect(correction.effectiveAt == end - 60_000 && correction.learnedAt == end + 2 * 3_600_000)
            #expect(correction.after?.until == B.days(60) && correction.before == lapse.after)
        }
        // Nothing sent is rewritten: the list up to the late renewal is the list derived without it.
        let without = AccessTransitions.derive(.group(Self.p), facts: Array(b.facts.dropLast()), now: end + 2 * 3_600_000)
        #expect(Array(all.prefix(without.count)) == without)
    }

    @Test("a retraction of a member's revocation: access is gained back, caused by the retraction, correcting the loss")
    func retraction() throws {
        var b = appleGroup()
        let revoke = b.notification("REVOKE", at: B.days(5), transaction: B.transaction(
            id: Self.m, original: Self.m, app: "7\(Self.m)", ownership: "ASSIGNED", purchase: B.days(1), expires: end,
            signed: B.days(5), model: "APPLE", revocationDate: B.days(5), revocationType: "ASSIGNMENT_REVOKE"))
        let retraction = b.retract(revoke, at: B.days(6))
        let transitions = Self.of("tx:\(Self.m)", AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(7)))
        #expect(transitions.map(\.kind) == [.gained, .lost, .gained])
        let lost = transitions[1], back = transitions[2]
        #expect(lost.after?.reason?.reason == .assignmentRevoke && lost.cause.event?.eventId == revoke)
        #expect(back.cause.event?.eventId == retraction && back.cause.eventType == Retraction.eventType)
        #expect(back.cause.retractedEventId == revoke && back.corrects == lost.id)
        #expect(back.effectiveAt == B.days(5) && back.learnedAt == B.days(6) && back.after?.until == end)
    }

    @Test("a retraction of the claim that made a member: the member's access is lost and the subject leaves the answer")
    func retractedClaim() throws {
        var b = devGroup()
        let retraction = b.retract(b.events[1].eventId, at: B.days(2))
        let transitions = Self.of("claim:c-1", AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(3)))
        #expect(transitions.map(\.kind) == [.gained, .lost])
        #expect(transitions[1].after == nil && transitions[1].cause.event?.eventId == retraction)
        #expect(AccessTransitions.fold(transitions).isEmpty)
    }

    @Test("Associate Seat giving a claim its appTransactionId is a SUBJECT_CHANGED with the access unchanged")
    func associated() throws {
        var b = devGroup()
        b.api("AssociateSeat", method: "POST", path: "/groups/v1/transactions/\(Self.p)/seats/c-1/associate", status: 200,
              request: ["appTransactionId": "704000000000000077"], at: B.days(3))
        let transitions = Self.of("claim:c-1", AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(4)))
        #expect(transitions.map(\.kind) == [.gained, .subjectChanged])
        #expect(transitions[1].before == transitions[1].after && transitions[1].subject.appTransactionId == "704000000000000077")
        #expect(transitions[0].subject.appTransactionId == nil)
    }

    @Test("the JSON form: sorted keys, the app and environment, before and after, cause one level up")
    func json() throws {
        let b = devGroup()
        let lapse = try #require(AccessTransitions.derive(.group(Self.p), facts: b.facts, now: B.days(40)).last)
        let json = lapse.json(bundleId: "com.example.reps", environment: "Sandbox")
        #expect(json["id"]?.stringValue == lapse.id && json["kind"] == "LOST" && json["bundleId"] == "com.example.reps")
        #expect(json["learnedAt"] == .timestamp(end) && json["before"]?["entitled"] == true && json["after"]?["entitled"] == false)
        #expect(json["cause"]?["kind"] == "TIME" && json["cause"]?["knownThrough"]?["position"] == 2 && json["corrects"] == .null)
        #expect(json["subject"]?["groupKey"] == .string(Self.p) && json["productId"] == .string(B.product))
        let text = json.canonicalString()
        #expect(text.hasPrefix("{\"after\":") && text.contains("\"subject\":{\"appTransactionId\":"))
    }
}
