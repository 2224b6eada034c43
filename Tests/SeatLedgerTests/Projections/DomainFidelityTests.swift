import AppStoreModels
import Foundation
import GroupSimulator
import LedgerEvents
import Projections
import ProjectionTestSupport
import Reports
@testable import SeatLedger
import Testing

/// Issue #24: one scenario per rule, written from the seed sentence with our own data, plus the
/// property extensions; and issue #23 item 2 (no trap on Apple's numbers).
@Suite("Domain fidelity (valid time, Family Sharing, unknown ownership, causes, Int64 edges)")
struct DomainFidelityTests {
    typealias B = ScenarioBuilder
    static let p = "2000000000000501"
    static let hour: EpochMillis = 3_600_000
    let start = B.days(0)
    let end = B.days(30)

    func group(_ model: String = "APPLE", seats: Int64 = 5) -> B {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: Self.p, original: Self.p, app: "704000000000000501", quantity: seats,
                                                  purchase: start, expires: end, model: model))
        return b
    }

    /// Links Apple-hosted members to the purchaser (Get Group Members lists both appTransactionIds).
    mutating func link(_ b: inout B, apps: [String], at time: EpochMillis) {
        b.api("GetGroupMembers", path: "/groups/v1/group/810000000000000501",
              body: ["members": .array((["704000000000000501"] + apps).map { ["appTransactionId": .string($0)] })], at: time)
    }

    // MARK: 1. Valid time is the time in the payload

    @Test("ledger-semantics: 'A person … has access at time T iff a verified transaction … is unrevoked': a REVOKE signed 9 h after its revocationDate ends access at the revocationDate, as of any moment after it")
    func lateSignedRevocation() throws {
        var b = group()
        let m = "3000000000000501", app = "804000000000000501"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1),
                       transaction: B.transaction(id: m, original: m, app: app, ownership: "ASSIGNED", purchase: B.days(1),
                                                  expires: end, model: "APPLE"))
        var me = self
        me.link(&b, apps: [app], at: B.days(1) + 1000)
        let revokedAt = B.days(7)
        let signedAt = revokedAt + 9 * Self.hour
        let revoke = b.notification("REVOKE", at: signedAt, transaction: B.transaction(
            id: m, original: m, app: app, ownership: "ASSIGNED", purchase: B.days(1), expires: end, signed: signedAt,
            model: "APPLE", revocationDate: revokedAt, revocationType: "ASSIGNMENT_REVOKE"), recordedAt: signedAt + 60_000)
        let expected = Revocation(reason: .assignmentRevoke, at: revokedAt, eventId: revoke)
        for asOf in [revokedAt, revokedAt + 3 * Self.hour, signedAt + Self.hour] {
            let state = try #require(b.state(Self.p, asOf: asOf))
            #expect(state.member(otid: m)?.hasAccess == false, "as of \(Timestamp.iso8601(asOf))")
            #expect(state.member(otid: m)?.revocation == expected, "as of \(Timestamp.iso8601(asOf)): one answer for every moment")
            #expect(state.seats.assigned == 0)
        }
        let before = try #require(b.state(Self.p, asOf: revokedAt - 1))
        #expect(before.member(otid: m)?.hasAccess == true)
        // Knowledge time keeps its meaning: before the ledger recorded the REVOKE it believed the member had access.
        let believed = try #require(b.state(Self.p, asOf: revokedAt + 3 * Self.hour, knownAt: signedAt))
        #expect(believed.member(otid: m)?.hasAccess == true)
        let membership = try #require(GroupIdentityResolver.resolve(b.facts)[Self.p])
        let diff = GroupDiff.knownAt(signedAt, signedAt + Self.hour, membership: membership, facts: b.facts,
                                     asOf: revokedAt + 3 * Self.hour)
        #expect(diff.changes.contains { $0.field == "member.access" && $0.after == .bool(false) }, "\(diff.changes.map(\.text))")
        #expect(diff.explainingEvents.map(\.eventId) == [revoke], "exactly the late REVOKE explains the difference")
        // Replay puts the REVOKE at its revocationDate.
        let replay = GroupReplay.entries(membership: membership, facts: b.facts, now: B.days(10))
        let entry = try #require(replay.first { $0.eventId == revoke })
        #expect(entry.effectiveAt == revokedAt && entry.signedAt == signedAt)
    }

    @Test("ledger-semantics: 'every seat renews together, on the same date': a DID_RENEW signed 2 h after the period ended, purchaseDate = the period end, leaves no gap")
    func lateSignedRenewal() throws {
        var b = group()
        let m = "3000000000000502", app = "804000000000000502"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1),
                       transaction: B.transaction(id: m, original: m, app: app, ownership: "ASSIGNED", purchase: B.days(1),
                                                  expires: end, model: "APPLE"))
        var me = self
        me.link(&b, apps: [app], at: B.days(1) + 1000)
        let late = end + 2 * Self.hour
        b.notification("DID_RENEW", at: late, transaction: B.transaction(
            id: "\(Self.p)2", original: Self.p, app: "704000000000000501", quantity: 5, purchase: end, expires: end + 30 * B.day,
            signed: late, model: "APPLE"))
        b.notification("DID_RENEW", at: late + 60_000, transaction: B.transaction(
            id: "\(m)2", original: m, app: app, ownership: "ASSIGNED", purchase: end, expires: end + 30 * B.day, signed: late + 60_000,
            model: "APPLE"))
        for asOf in [end, end + Self.hour, late + Self.hour] {
            let state = try #require(b.state(Self.p, asOf: asOf))
            #expect(state.status == .active, "as of \(Timestamp.iso8601(asOf))")
            #expect(state.members.allSatisfy { $0.hasAccess }, "as of \(Timestamp.iso8601(asOf))")
        }
        let membership = try #require(GroupIdentityResolver.resolve(b.facts)[Self.p])
        let replay = GroupReplay.entries(membership: membership, facts: b.facts, now: end + 10 * B.day)
        #expect(!replay.contains { $0.changes.contains { $0.field == "status" && $0.after != .string("ACTIVE") } },
                "no false whole-group outage: \(replay.map { "\($0.what): \($0.changes.map(\.text))" })")
        #expect(!replay.contains { $0.changes.contains { $0.field == "member.access" } }, "\(replay.map { "\(Timestamp.iso8601($0.effectiveAt)) \($0.what): \($0.changes.map(\.text))" })")
    }

    @Test("ledger-semantics: 'members keep access while the purchaser is in billing grace': a DID_FAIL_TO_RENEW/GRACE_PERIOD signed after the period end applies from the end")
    func lateSignedGrace() throws {
        var b = group("DEVELOPER")
        b.claim("c-1", purchaser: Self.p, at: B.days(1))
        b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: end + 30 * 60_000,
                       transaction: B.transaction(id: Self.p, original: Self.p, quantity: 5, purchase: start, expires: end,
                                                  signed: end + 30 * 60_000),
                       renewal: B.renewal(original: Self.p, grace: end + 16 * B.day, retry: true, signed: end + 30 * 60_000))
        let state = try #require(b.state(Self.p, asOf: end + 60_000))
        #expect(state.status == .gracePeriod)
        #expect(state.member(claim: "c-1")?.hasAccess == true)
    }

    // MARK: 2. Family Sharing

    @Test("seed 001: 'only the group purchaser can share their access with family members': a FAMILY_SHARED copy carrying multiSeatInfo is no purchaser and makes no group; it has access from its own transaction until FAMILY_REVOKE")
    func familySharedCopy() throws {
        var b = group()
        let f = "3000000000000601", app = "804000000000000601"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(2), transaction: B.transaction(
            id: f, original: f, app: app, ownership: "FAMILY_SHARED", quantity: 5, purchase: B.days(2), expires: end, model: "APPLE"))
        let groups = GroupIdentityResolver.resolve(b.facts)
        #expect(groups[f] == nil, "no phantom group keyed by the family copy")
        #expect(Set(groups.keys) == [Self.p, GroupIdentityResolver.unlinkedKey(for: f)], "nothing links it: listed on its own")
        let own = try #require(b.state(GroupIdentityResolver.unlinkedKey(for: f), asOf: B.days(3)))
        #expect(own.member(otid: f)?.role == .familyShared && own.member(otid: f)?.hasAccess == true)
        #expect(own.seats.total == nil && own.purchaserOriginalTransactionId == nil)
        let revoke = b.notification("REVOKE", at: B.days(4), transaction: B.transaction(
            id: f, original: f, app: app, ownership: "FAMILY_SHARED", quantity: 5, purchase: B.days(2), expires: end, signed: B.days(4),
            model: "APPLE", revocationDate: B.days(4), revocationType: "FAMILY_REVOKE"))
        let after = try #require(b.state(GroupIdentityResolver.unlinkedKey(for: f), asOf: B.days(5)))
        #expect(after.member(otid: f)?.revocation == Revocation(reason: .familyRevoke, at: B.days(4), eventId: revoke))
        // The purchaser's group is unchanged: 5 seats, nobody assigned.
        let purchaser = try #require(b.state(Self.p, asOf: B.days(3)))
        #expect(purchaser.seats.total == 5 && purchaser.seats.assigned == 0 && purchaser.members.count == 1)
    }

    @Test("a family member evidence links (Get Customer Groups for its transaction names the purchaser's groupId) is listed with the purchaser's group, takes no seat, and follows the group's expiry")
    func familyLinked() throws {
        var b = group()
        let f = "3000000000000602", app = "804000000000000602"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(2), transaction: B.transaction(
            id: f, original: f, app: app, ownership: "FAMILY_SHARED", purchase: B.days(2), expires: end, model: "APPLE"))
        b.api("GetCustomerGroups", path: "/groups/v1/currentGroups/\(Self.p)",
              body: ["groups": [["groupId": "810000000000000602", "groupType": "CONSUMER"]]], at: B.days(2) + 1000)
        b.api("GetCustomerGroups", path: "/groups/v1/currentGroups/\(f)",
              body: ["groups": [["groupId": "810000000000000602", "groupType": "CONSUMER"]]], at: B.days(2) + 2000)
        let state = try #require(b.state(Self.p, asOf: B.days(3)))
        #expect(state.member(otid: f)?.role == .familyShared && state.member(otid: f)?.hasAccess == true)
        #expect(state.seats.assigned == 0 && state.seats.available == 4, "a family member shares the purchaser's seat")
        let expired = try #require(b.state(Self.p, asOf: end + B.day))
        #expect(expired.member(otid: f)?.revocation?.reason == .groupExpired)
    }

    // MARK: 3. Unknown ownership

    @Test("seed 000: 'A switch that fails closed on an unknown ownership value would lock out the next kind of customer Apple invents': an undocumented inAppOwnershipType grants access, kept verbatim, flagged")
    func unknownOwnership() throws {
        var b = group()
        let g = "3000000000000701"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(2), transaction: B.transaction(
            id: g, original: g, app: "804000000000000701", ownership: "GUEST_PASS", quantity: 3, purchase: B.days(2), expires: end))
        let groups = GroupIdentityResolver.resolve(b.facts)
        #expect(groups[g] == nil, "multiSeatInfo with an unknown ownership is not a group purchase")
        let key = GroupIdentityResolver.unlinkedKey(for: g)
        let state = try #require(b.state(key, asOf: B.days(3)))
        let member = try #require(state.member(otid: g))
        #expect(member.role.rawValue == "GUEST_PASS" && member.role.isUnknownOwnership && member.hasAccess)
        #expect(GroupText.memberLine(member).contains("inAppOwnershipType GUEST_PASS"))
        let membership = try #require(groups[key])
        let anomalies = GroupAnalysis.anomalies(state: state, membership: membership, facts: b.facts, replay: [],
                                                context: .init(leafFingerprints: [:], environment: .sandbox, now: B.days(3)))
        #expect(anomalies.contains { $0.code == "unknown_ownership" && $0.text.contains("GUEST_PASS") })
    }

    // MARK: 4. Causes one level up; wording by invitation model

    @Test("hosting guide: 'when that subscription expires … revoke access for every invited member': the member is told which purchaser event, when, and its id, in member show, audit member and replay")
    func causeOneLevelUp() throws {
        var b = group("DEVELOPER")
        b.claim("c-1", purchaser: Self.p, at: B.days(1), memberRef: "user-1")
        let expired = b.notification("EXPIRED", "VOLUNTARY", at: end, transaction: B.transaction(
            id: Self.p, original: Self.p, quantity: 5, purchase: start, expires: end, signed: end))
        let state = try #require(b.state(Self.p, asOf: end + B.day))
        let revocation = try #require(state.member(claim: "c-1")?.revocation)
        #expect(revocation.cause == RevocationCause(reason: .expired, at: end, eventId: expired))
        let claimMember = try #require(state.member(claim: "c-1"))
        let line = GroupText.memberLine(claimMember)
        // The revocation names the purchaser's event and its moment; the cause does not repeat them.
        #expect(line.contains("(event \(expired))") && line.contains("caused by EXPIRED (subscription expired), the same event"), "\(line)")
        #expect(line.components(separatedBy: expired).count == 2, "the event id is named once: \(line)")
        #expect(MemberAudit.verdict(claimMember).contains("caused by EXPIRED"))
        let membership = try #require(GroupIdentityResolver.resolve(b.facts)[Self.p])
        let replay = GroupReplay.entries(membership: membership, facts: b.facts, now: end + B.day)
        #expect(replay.contains { $0.changes.contains { $0.text.contains("lost access") && $0.text.contains("caused by EXPIRED") } })
        #expect(state.member(claim: "c-1")?.json["revocation"]?["cause"]?["eventId"] == .string(expired))
    }

    @Test("Apple-hosted groups are never told to unclaim seats; a backfill names the gap and how far back the history reaches")
    func wordingByInvitationModel() throws {
        var b = group("APPLE", seats: 2)
        for (i, m) in ["3000000000000801", "3000000000000802"].enumerated() {
            b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1) + EpochMillis(i), transaction: B.transaction(
                id: m, original: m, app: "80400000000000080\(i + 1)", ownership: "ASSIGNED", purchase: B.days(1), expires: end,
                model: "APPLE"))
        }
        var me = self
        me.link(&b, apps: ["804000000000000801", "804000000000000802"], at: B.days(1) + 1000)
        let state = try #require(b.state(Self.p, asOf: B.days(2)))
        #expect(state.seats.overCapacity == 1)
        let context = GroupAnalysis.Context(leafFingerprints: [:], environment: .sandbox, now: B.days(2))
        let actions = GroupAnalysis.actions(state: state, anomalies: [], context: context)
        #expect(!actions.contains { $0.code.hasPrefix("unclaim") || $0.text.lowercased().contains("unclaim") }, "\(actions.map(\.text))")
        let backfill = try #require(actions.first { $0.code == "backfill" })
        #expect(backfill.text.contains("reaches back 30 days in Sandbox"), "\(backfill.text)")
        let production = GroupAnalysis.actions(state: state, anomalies: [Anomaly(code: "missed_notification", text: "", eventIds: [], at: B.days(1))],
                                               context: .init(leafFingerprints: [:], environment: .production, now: B.days(2)))
        #expect(production.first { $0.code == "backfill" }?.text.contains("reaches back 180 days in Production") == true)
        #expect(production.first { $0.code == "backfill" }?.text.contains(Timestamp.iso8601(B.days(1) - B.day)) == true,
                "the backfill starts a day before the suspected gap")
    }

    // MARK: Properties

    /// The generated stream with every notification re-signed up to `maxDelay` later (payload
    /// dates unchanged: the transaction's and renewal's `signedDate` move with it).
    static func resigned(_ b: B, seed: UInt64, maxDelay: EpochMillis) -> [EventFacts] {
        var rng = SeededRandom(seed: seed)
        return b.events.map { event in
            guard event.kind == .notification else { return EventFacts(event) }
            let delay = EpochMillis.random(in: 0...maxDelay, using: &rng)
            var decoded = event.decoded
            if case .object(var o) = decoded {
                for key in ["notification", "transactionInfo", "renewalInfo"] {
                    if case .object(var inner)? = o[key], let signed = inner["signedDate"]?.int64Value {
                        inner["signedDate"] = .int(signed + delay)
                        o[key] = .object(inner)
                    }
                }
                decoded = .object(o)
            }
            let moved = LedgerEvent(position: event.position, eventId: event.eventId, kind: event.kind, type: event.type,
                                    subtype: event.subtype, status: event.status, occurredAt: event.occurredAt + delay,
                                    recordedAt: event.recordedAt + delay, source: event.source, origin: event.origin, raw: event.raw,
                                    decoded: decoded, verification: [], hash: Data())
            return EventFacts(moved)
        }
    }

    @Test("state as of T (knowledge now) equals the fold of the events effective by T, whatever the signing times, arrival order and duplicates",
          arguments: Array(UInt64(61)...UInt64(68)))
    func effectivePrefixProperty(seed: UInt64) {
        let facts = Self.resigned(StreamGenerator.stream(seed: seed), seed: seed, maxDelay: 6 * Self.hour)
        var rng = SeededRandom(seed: seed &* 31)
        let times = facts.map(\.occurredAt).sorted()
        let effective = EffectiveTimes(facts)
        for _ in 0..<5 {
            guard let t = times.randomElement(using: &rng).map({ $0 - EpochMillis.random(in: 0...(6 * Self.hour), using: &rng) }) else { continue }
            var shuffled = facts.shuffled(using: &rng)
            shuffled += facts.filter { _ in Bool.random(using: &rng) }
            let full = StreamGenerator.states(shuffled, asOf: t)
            let prefix = StreamGenerator.states(facts.filter { effective.effectiveAt($0) <= t }, asOf: t)
            for (key, state) in prefix { #expect(full[key] == state, "group \(key) as of \(Timestamp.iso8601(t))") }
            #expect(Set(full.keys).isSuperset(of: prefix.keys))
        }
    }

    @Test("a generated renewal-on-time stream signed late: no replay reports a loss of access between periods", arguments: Array(UInt64(71)...UInt64(78)))
    func renewalsSignedLateNoGap(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        var b = B()
        let model = Bool.random(using: &rng) ? "APPLE" : "DEVELOPER"
        let app = "704000000000000901"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start, transaction: B.transaction(
            id: Self.p, original: Self.p, app: app, quantity: 6, purchase: start, expires: end, model: model))
        var members: [(String, String)] = []
        for i in 0..<Int.random(in: 1...4, using: &rng) {
            if model == "DEVELOPER" {
                b.claim("c-\(i)", purchaser: Self.p, at: B.days(1) + EpochMillis(i))
            } else {
                let m = "300000000000090\(i)", mApp = "80400000000000090\(i)"
                members.append((m, mApp))
                b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1) + EpochMillis(i), transaction: B.transaction(
                    id: m, original: m, app: mApp, ownership: "ASSIGNED", purchase: B.days(1), expires: end, model: "APPLE"))
            }
        }
        if !members.isEmpty {
            var me = self
            me.link(&b, apps: members.map(\.1), at: B.days(1) + 1000)
        }
        var periodEnd = end
        for k in 1...Int.random(in: 2...4, using: &rng) {
            let next = periodEnd + 30 * B.day
            let signed = periodEnd + EpochMillis.random(in: 1...(3 * Self.hour), using: &rng)
            b.notification("DID_RENEW", at: signed, transaction: B.transaction(
                id: "\(Self.p)\(k)", original: Self.p, app: app, quantity: 6, purchase: periodEnd, expires: next, signed: signed, model: model))
            for (j, (m, mApp)) in members.enumerated() {
                let memberSigned = signed + EpochMillis(j + 1) * 60_000
                b.notification("DID_RENEW", at: memberSigned, transaction: B.transaction(
                    id: "\(m)\(k)", original: m, app: mApp, ownership: "ASSIGNED", purchase: periodEnd, expires: next,
                    signed: memberSigned, model: "APPLE"))
            }
            periodEnd = next
        }
        let membership = try #require(GroupIdentityResolver.resolve(b.facts)[Self.p])
        let replay = GroupReplay.entries(membership: membership, facts: b.facts, to: periodEnd - B.day, now: periodEnd - B.day)
        let losses = replay.flatMap { entry in entry.changes.filter {
            ($0.field == "status" && $0.after != .string("ACTIVE")) || ($0.field == "member.access" && $0.after == .bool(false))
        }.map { "\(Timestamp.iso8601(entry.effectiveAt)) \(entry.what): \($0.text)" } }
        #expect(losses.isEmpty, "\(losses)")
    }

    // MARK: Int64 edges (issue #23 item 2)

    @Test("quantity at Int64's edges ingests, projects and renders every report without trapping; out-of-range values are flagged",
          arguments: [Int64.min, Int64.max, -1, 0])
    func int64Edges(quantity: Int64) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY",
                                                   transaction: factory.transaction(quantity: quantity)))
        try test.append(line: factory.notification(type: "REFUND", subtype: "SEATS", uuid: "seat-refund-edge",
                                                   signedDate: PayloadFactory.defaultSignedDate + PayloadFactory.day,
                                                   transaction: factory.transaction(quantity: quantity, signedDate: PayloadFactory.defaultSignedDate + PayloadFactory.day,
                                                                                    extra: ["revokedSeatQuantity": .int(quantity == .min ? .max : .min)])))
        let key = PayloadFactory.defaultOriginalTransactionId
        let now = PayloadFactory.defaultSignedDate + 2 * PayloadFactory.day
        let state = try test.ledger.groupState(key, asOf: now)
        #expect(state.seats.total != nil)
        #expect(state.seats.available.map { $0 >= 0 } == true && state.seats.overCapacity >= 0)
        let audit = try test.ledger.auditGroup(key, asOf: now, now: now)
        for format in [ReportFormat.html, .markdown, .json, .text] { #expect(!audit.render(format).isEmpty) }
        #expect(audit.anomalies.contains { $0.code == "out_of_range_quantity" }, "revokedSeatQuantity at an edge is always out of range")
        _ = try test.ledger.auditMember(key, asOf: now, now: now).render(.html)
    }

    @Test("saturating arithmetic clamps at Int64's bounds", arguments: [
        (Int64.max, Int64(1), Int64.max), (Int64.min, Int64(-1), Int64.min), (Int64(-1), Int64(0), Int64(-1)), (Int64(0), Int64.min, Int64.min),
    ])
    func saturating(a: Int64, b: Int64, sum: Int64) {
        #expect(a.saturatingAdd(b) == sum)
        #expect(Int64.min.saturatingSubtract(1) == .min && Int64.max.saturatingSubtract(-1) == .max && Int64(0).saturatingSubtract(.min) == .max)
        #expect([Int64.max, .max, .min].saturatingSum() == Int64.max.saturatingAdd(.min))
    }
}
