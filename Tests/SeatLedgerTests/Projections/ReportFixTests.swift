import AppStoreModels
import Foundation
import LedgerEvents
import Projections
import ProjectionTestSupport
@testable import Reports
import SeatLedger
import Testing

/// Regression tests for reviewed report bugs: replay dating and blame, member audit chains,
/// `audit group --as-of` and duplicate counts in `audit member`.
@Suite("Reports: review fixes")
struct ReportFixTests {
    typealias B = ScenarioBuilder
    static let p1 = "2000000000000001", p1App = "704000000000000001"
    let start = B.days(0)
    let end = B.days(30)

    func purchaser(_ b: inout B, _ p: String, _ app: String, seats: Int64 = 5, model: String = "APPLE") {
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: start,
                       transaction: B.transaction(id: p, original: p, app: app, quantity: seats, purchase: start, expires: end, model: model),
                       renewal: B.renewal(original: p, quantity: seats, signed: start))
    }

    func devGroup() -> B {
        var b = B()
        purchaser(&b, Self.p1, Self.p1App, model: "DEVELOPER")
        return b
    }

    func membership(_ b: B, _ key: String = Self.p1) throws -> GroupMembership {
        try #require(GroupIdentityResolver.resolve(b.facts)[key])
    }

    func context(now: EpochMillis) -> GroupAnalysis.Context {
        GroupAnalysis.Context(leafFingerprints: [:], environment: .sandbox, now: now)
    }

    // MARK: 8. Blame at a period end

    @Test("replay: an unrelated event exactly at the period end does not take the blame for the expiry")
    func eventAtPeriodEndNotBlamed() throws {
        var b = devGroup()
        b.api("GetSeatInfo", path: "/groups/v1/transactions/\(Self.p1)/seats",
              body: ["totalSeatCount": 5, "availableSeatCount": 4, "assignedSeatClaimIds": []], at: end)
        let entries = GroupReplay.entries(membership: try membership(b), facts: b.facts, now: B.days(40))
        let seatInfo = try #require(entries.firstIndex { $0.what.hasPrefix("GetSeatInfo") })
        #expect(!entries[seatInfo].changes.contains { $0.field == "status" }, "GetSeatInfo blamed: \(entries[seatInfo].changes.map(\.text))")
        #expect(entries[seatInfo].changes.map(\.field) == ["apple"])
        let expiry = try #require(entries.firstIndex { $0.eventId == nil && $0.changes.contains { $0.field == "status" } })
        #expect(expiry < seatInfo, "the time-driven expiry comes before the event at the same instant")
        #expect(entries[expiry].effectiveAt == end)
    }

    @Test("replay: a DID_RENEW exactly at the period end shows no expiry and no status change")
    func renewalAtPeriodEndIsNotAnExpiry() throws {
        var b = devGroup()
        b.notification("DID_RENEW", at: end,
                       transaction: B.transaction(id: "2000000000000011", original: Self.p1, app: Self.p1App, quantity: 3,
                                                  purchase: end, expires: B.days(60), model: "DEVELOPER"),
                       renewal: B.renewal(original: Self.p1, quantity: 3, signed: end))
        let entries = GroupReplay.entries(membership: try membership(b), facts: b.facts, to: B.days(31), now: B.days(31))
        #expect(!entries.contains { $0.eventId == nil }, "\(entries.map { ($0.what, $0.changes.map(\.text)) })")
        let renew = try #require(entries.first { $0.what == "DID_RENEW" })
        #expect(!renew.changes.contains { $0.field == "status" || $0.field == "member.access" })
        #expect(renew.changes.contains { $0.field == "seats.total" })
    }

    @Test("replay: a DID_FAIL_TO_RENEW / GRACE_PERIOD exactly at the period end is the cause of the grace period")
    func gracePeriodAtPeriodEndBelongsToEvent() throws {
        var b = devGroup()
        b.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: end,
                       renewal: B.renewal(original: Self.p1, quantity: 5, grace: B.days(46), retry: true, signed: end))
        let entries = GroupReplay.entries(membership: try membership(b), facts: b.facts, to: B.days(31), now: B.days(31))
        #expect(!entries.contains { $0.eventId == nil }, "\(entries.map { ($0.what, $0.changes.map(\.text)) })")
        let grace = try #require(entries.first { $0.what.hasPrefix("DID_FAIL_TO_RENEW") })
        #expect(grace.changes.map(\.field) == ["status"])
        #expect(grace.changes.first?.after == .string(GroupStatus.gracePeriod.rawValue))
    }

    @Test("audit: missed_notification is still found when an unrelated event lands exactly at the period end")
    func missedNotificationWithEventAtPeriodEnd() throws {
        var b = devGroup()
        b.api("GetSeatInfo", path: "/groups/v1/transactions/\(Self.p1)/seats",
              body: ["totalSeatCount": 5, "availableSeatCount": 4, "assignedSeatClaimIds": []], at: end)
        let membership = try membership(b)
        let asOf = B.days(40)
        let state = GroupProjection.project(membership, facts: b.facts, asOf: asOf, knownAt: nil)
        let replay = GroupReplay.entries(membership: membership, facts: b.facts, to: asOf, now: asOf)
        let anomalies = GroupAnalysis.anomalies(state: state, membership: membership, facts: b.facts, replay: replay, context: context(now: asOf))
        #expect(anomalies.contains { $0.code == "missed_notification" }, "\(anomalies.map(\.code))")
    }

    @Test("audit: a period ending with no event at all is still a missed_notification")
    func missedNotificationWithoutEvents() throws {
        let b = devGroup()
        let membership = try membership(b)
        let asOf = B.days(40)
        let state = GroupProjection.project(membership, facts: b.facts, asOf: asOf, knownAt: nil)
        let replay = GroupReplay.entries(membership: membership, facts: b.facts, to: asOf, now: asOf)
        let expiry = try #require(replay.first { $0.eventId == nil })
        #expect(expiry.effectiveAt == end)
        let anomalies = GroupAnalysis.anomalies(state: state, membership: membership, facts: b.facts, replay: replay, context: context(now: asOf))
        #expect(anomalies.contains { $0.code == "missed_notification" })
    }

    // MARK: 7. Dating time-driven changes

    @Test("replay: an unlinked member's expiry is dated at its expiresDate, not at now")
    func unlinkedMemberExpiryDated() throws {
        var b = B()
        let m = "2000000000000301"
        b.assignedSeat(m, app: "704000000000000301", purchase: B.days(1), expires: B.days(10))
        let entries = GroupReplay.entries(membership: try membership(b, "unlinked:" + m), facts: b.facts, now: B.days(40))
        let lost = entries.first { $0.changes.contains { $0.field == "member.access" } }
        #expect(lost?.effectiveAt == B.days(10), "effectiveAt \(lost.map { Timestamp.iso8601($0.effectiveAt) } ?? "none")")
    }

    @Test("replay: an unlinked group does not start with the non-change status none → UNKNOWN")
    func unlinkedGroupNoUnknownStatusChange() throws {
        var b = B()
        let m = "2000000000000301"
        b.assignedSeat(m, app: "704000000000000301", purchase: B.days(1), expires: B.days(10))
        let entries = GroupReplay.entries(membership: try membership(b, "unlinked:" + m), facts: b.facts, now: B.days(5))
        #expect(!entries.contains { $0.changes.contains { $0.field == "status" } }, "\(entries.map { $0.changes.map(\.text) })")
        #expect(entries.first?.changes.contains { $0.field == "member.added" } == true)
    }

    @Test("replay: a linked member's own expiry before the purchaser's period end is dated at its expiresDate")
    func linkedMemberOwnExpiryDated() throws {
        var b = B()
        purchaser(&b, Self.p1, Self.p1App)
        let m = "2000000000000101"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1),
                       transaction: B.transaction(id: m, original: m, app: "704000000000000101", ownership: "ASSIGNED",
                                                  purchase: B.days(1), expires: B.days(10), model: "APPLE"))
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1",
              body: ["members": [["appTransactionId": .string(Self.p1App)], ["appTransactionId": "704000000000000101"]]], at: B.days(2))
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1",
              body: ["members": [["appTransactionId": .string(Self.p1App)]]], at: B.days(15))
        let entries = GroupReplay.entries(membership: try membership(b), facts: b.facts, to: B.days(20), now: B.days(20))
        let lost = entries.first { $0.changes.contains { $0.field == "member.access" && $0.after == .bool(false) } }
        #expect(lost?.effectiveAt == B.days(10), "effectiveAt \(lost.map { Timestamp.iso8601($0.effectiveAt) } ?? "none")")
        #expect(lost?.eventId == nil)
    }

    @Test("replay: a member's late-signed renewal leaves no lapse, entries stay inside --to and in order")
    func memberLapseInsideToKeptInOrder() throws {
        var b = B()
        purchaser(&b, Self.p1, Self.p1App)
        let m = "2000000000000101"
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(1),
                       transaction: B.transaction(id: m, original: m, app: "704000000000000101", ownership: "ASSIGNED",
                                                  purchase: B.days(1), expires: end, model: "APPLE"))
        b.api("GetGroupMembers", path: "/groups/v1/group/grp-1",
              body: ["members": [["appTransactionId": .string(Self.p1App)], ["appTransactionId": "704000000000000101"]]], at: B.days(2))
        b.notification("DID_RENEW", at: end,
                       transaction: B.transaction(id: "2000000000000011", original: Self.p1, app: Self.p1App, quantity: 5,
                                                  purchase: end, expires: B.days(60), model: "APPLE"))
        b.notification("DID_RENEW", at: end + 3_600_000,
                       transaction: B.transaction(id: "2000000000000111", original: m, app: "704000000000000101", ownership: "ASSIGNED",
                                                  purchase: end, expires: B.days(60), model: "APPLE"))
        let entries = GroupReplay.entries(membership: try membership(b), facts: b.facts, to: B.days(31), now: B.days(31))
        #expect(entries.allSatisfy { $0.effectiveAt <= B.days(31) })
        #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.effectiveAt <= $1.effectiveAt }, "entries out of order")
        // Valid time (rules version 4): the member's renewal, signed an hour late, is effective at its
        // purchaseDate (the period end), so there is no lapse at all (rules version 3 reported one).
        #expect(!entries.contains { $0.changes.contains { $0.field == "member.access" && $0.after == .bool(false) } },
                "\(entries.map { "\(Timestamp.iso8601($0.effectiveAt)) \($0.what): \($0.changes.map(\.text))" })")
        let renewals = entries.filter { $0.what == "DID_RENEW" }
        #expect(renewals.count == 2 && renewals.allSatisfy { $0.effectiveAt == end }, "both renewals at the period end")
        #expect(renewals.last?.signedAt == end + 3_600_000)
        #expect(!renewals.contains { $0.changes.contains { $0.field.hasPrefix("member.") || $0.field == "status" } },
                "\(renewals.map { $0.changes.map(\.text) })")
    }

    // MARK: 9. Member audit chain by identity

    @Test("audit member: the chain of a new claim does not include the loss of an old claim with the same memberRef")
    func chainByIdentityNotDisplayName() throws {
        var b = devGroup()
        b.claim("aaaaaaaa-0000-0000-0000-000000000001", purchaser: Self.p1, at: B.days(1), memberRef: "m4")
        let unclaimId = b.unclaim("aaaaaaaa-0000-0000-0000-000000000001", purchaser: Self.p1, at: B.days(2))
        let newClaim = b.claim("bbbbbbbb-0000-0000-0000-000000000002", purchaser: Self.p1, at: B.days(3), memberRef: "m4")
        let membership = try membership(b)
        let state = GroupProjection.project(membership, facts: b.facts, asOf: B.days(4), knownAt: nil)
        let member = try #require(state.member(claim: "bbbbbbbb-0000-0000-0000-000000000002"))
        let timeline = GroupReplay.entries(membership: membership, facts: b.facts, to: B.days(4), now: B.days(4))
        let chain = MemberAudit.chain(for: member, in: timeline)
        #expect(!chain.contains { $0.eventId == unclaimId }, "chain of claim bbbbbbbb cites the unclaim of claim aaaaaaaa")
        #expect(chain.contains { $0.eventId == newClaim })
    }

    // MARK: 10. audit group --as-of

    @Test("audit group --as-of: anomaly checks ignore events after the as-of moment")
    func anomaliesIgnoreLaterEvents() throws {
        var b = devGroup()
        b.notification("UNCLAIM_SEATS", at: B.days(5),
                       transaction: B.transaction(id: Self.p1, original: Self.p1, app: Self.p1App, quantity: 5, purchase: start,
                                                  expires: end, model: "DEVELOPER"),
                       unclaim: ["cccccccc-0000-0000-0000-000000000003"])
        let membership = try membership(b)
        let asOf = B.days(2)
        let state = GroupProjection.project(membership, facts: b.facts, asOf: asOf, knownAt: nil)
        let replay = GroupReplay.entries(membership: membership, facts: b.facts, to: asOf, now: B.days(10))
        let anomalies = GroupAnalysis.anomalies(state: state, membership: membership, facts: b.facts, replay: replay,
                                                context: context(now: B.days(10)))
        #expect(!anomalies.contains { $0.code == "unknown_unclaim" }, "\(anomalies.map(\.text))")
        let later = GroupProjection.project(membership, facts: b.facts, asOf: B.days(6), knownAt: nil)
        let laterAnomalies = GroupAnalysis.anomalies(state: later, membership: membership, facts: b.facts, replay: replay,
                                                     context: context(now: B.days(10)))
        #expect(laterAnomalies.contains { $0.code == "unknown_unclaim" })
    }
}

@Suite("Reports: review fixes (ledger)")
struct ReportFixLedgerTests {
    let factory: PayloadFactory
    init() throws { factory = try PayloadFactory() }

    @Test("audit member chain reports duplicate arrivals like replay does")
    func auditMemberDuplicateArrivals() throws {
        let test = try TestLedger()
        let purchaser = "2000000000000900"
        let line = try factory.notification(
            uuid: "purchase", transaction: factory.transaction(originalTransactionId: purchaser, transactionId: purchaser,
                                                               appTransactionId: "705000000000000900"))
        try test.append(line: line)
        try test.append(line: line)
        let now = PayloadFactory.defaultSignedDate + PayloadFactory.day
        let replay = try test.ledger.replay(purchaser, now: now)
        let audit = try test.ledger.auditMember(purchaser, asOf: now, now: now)
        #expect(replay.first?.duplicateArrivals == 1)
        #expect(audit.groups.first?.chain.first?.duplicateArrivals == 1)
    }

    @Test("audit group --as-of: an UNCLAIM_SEATS after the as-of moment is not an anomaly yet")
    func auditGroupAsOfIgnoresLaterEvents() throws {
        let test = try TestLedger()
        let purchaser = "2000000000000900"
        let transaction = factory.transaction(originalTransactionId: purchaser, transactionId: purchaser, appTransactionId: "705000000000000900")
        try test.append(line: factory.notification(uuid: "purchase", transaction: transaction))
        try test.append(line: factory.notification(
            type: "UNCLAIM_SEATS", uuid: "unclaim", signedDate: PayloadFactory.defaultSignedDate + 5 * PayloadFactory.day,
            transaction: transaction, unclaimInfo: ["unclaimSeatIds": ["cccccccc-0000-0000-0000-000000000003"]]))
        let now = PayloadFactory.defaultSignedDate + 10 * PayloadFactory.day
        let before = try test.ledger.auditGroup(purchaser, asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day, now: now)
        #expect(!before.anomalies.contains { $0.code == "unknown_unclaim" }, "\(before.anomalies.map(\.text))")
        let after = try test.ledger.auditGroup(purchaser, asOf: now, now: now)
        #expect(after.anomalies.contains { $0.code == "unknown_unclaim" })
    }

    @Test("an unlinked group without an Apple view points at the holder's transaction, not at reconciling the unlinked key (which asks nothing)")
    func unlinkedAdvice() {
        let unlinked = AppleComparison(groupKey: "unlinked:2000000000000777", differences: [], appleObservedAt: nil, oursLatestAt: 1,
                                       olderSide: "none")
        #expect(unlinked.text.contains("`seatledger reconcile 2000000000000777` asks Apple about the holder's subscription"), "\(unlinked.text)")
        #expect(!unlinked.text.contains("reconcile unlinked:"), "\(unlinked.text)")
        let purchaser = AppleComparison(groupKey: "2000000000000001", differences: [], appleObservedAt: nil, oursLatestAt: 1, olderSide: "none")
        #expect(purchaser.text.contains("run `seatledger reconcile 2000000000000001`"))
    }

    @Test("groups as of a moment before a group's first event leave it out instead of listing it as an empty UNKNOWN group")
    func groupsBeforeTheyExisted() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction()))
        // The transaction's purchaseDate (a day before it was signed) is when the group began: valid time.
        let signed = PayloadFactory.defaultSignedDate
        let purchased = signed - PayloadFactory.day
        #expect(try test.ledger.groups(asOf: purchased - 1).isEmpty)
        #expect(try test.ledger.groups(asOf: purchased).map(\.groupKey) == [PayloadFactory.defaultOriginalTransactionId])
        #expect(try test.ledger.groups(asOf: signed + 1, knownAt: signed - 1).isEmpty, "not yet recorded")
    }

    @Test("display text writes control characters and bidirectional overrides visibly, and leaves other text alone",
          arguments: [("a\u{1B}[31mb", "a\\u{1B}[31mb"), ("x\ny", "x\\u{A}y"), ("\u{7F}\u{85}", "\\u{7F}\\u{85}"),
                      ("abc\u{202E}fed", "abc\\u{202E}fed"), ("\u{2066}i", "\\u{2066}i"), ("é名 plain", "é名 plain")])
    func displayText(_ input: String, _ expected: String) {
        #expect(DisplayText.visible(input) == expected)
    }
}

/// The one HTML escaper (``AuditHTML/escape(_:)``), which every report and desk page uses.
@Suite("Reports: HTML escaping")
struct HTMLEscapeTests {
    @Test("a special character followed by a combining mark is escaped too: Swift makes them one Character, a browser reads the code points",
          arguments: ["\u{301}", "\u{338}", "\u{20D2}", "\u{200D}", "\u{FE0F}"])
    func combiningMarks(_ mark: String) {
        for special in ["&", "<", ">", "\"", "'"] {
            let escaped = AuditHTML.escape("m8\(special)\(mark) onfocus=alert(1) x=\(special)")
            #expect(!escaped.unicodeScalars.contains { "&<>\"'".unicodeScalars.contains($0) && $0 != "&" }, "\(special)\(mark): \(escaped)")
            // Each `&` left is the start of an entity this function wrote.
            // (Compared as bytes: `hasPrefix` on a String would compare `;` with `;` plus the mark.)
            let entities = ["amp;", "lt;", "gt;", "quot;", "#39;"].map { Array($0.utf8) }
            let pieces = Array(escaped.utf8).split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).dropFirst()
            #expect(pieces.allSatisfy { piece in entities.contains { piece.starts(with: $0) } }, "\(special)\(mark): \(escaped)")
            #expect(escaped.unicodeScalars.contains(mark.unicodeScalars.first!), "the mark itself is kept: \(escaped)")
        }
    }

    @Test("plain text is unchanged and each special character becomes its entity")
    func entities() {
        #expect(AuditHTML.escape("m1 ann-g17 é 🙂") == "m1 ann-g17 é 🙂")
        #expect(AuditHTML.escape(#"<a href="x" title='y'>&</a>"#) == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;")
    }
}
