import AppStoreModels
import Foundation
import Projections
import ProjectionTestSupport
import Reports
import Testing

/// The access timeline of `audit --format html` and the support desk: intervals, marks and their
/// causes from a replay; the time axis; the one-sentence explanation.
@Suite("Reports: access timeline, time axis, access explanation")
struct AccessTimelineTests {
    typealias B = ScenarioBuilder
    static let p1 = "2000000000000001", p1App = "704000000000000001"

    /// A developer-hosted group of 5 seats for 30 days: c1 claimed on day 1 and unclaimed on day 5, c2 claimed on day 2.
    func group() throws -> (state: GroupState, replay: [ReplayEntry], unclaim: String, claim2: String) {
        var b = B()
        b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(0),
                       transaction: B.transaction(id: Self.p1, original: Self.p1, app: Self.p1App, quantity: 5, purchase: B.days(0),
                                                  expires: B.days(30), model: "DEVELOPER"),
                       renewal: B.renewal(original: Self.p1, quantity: 5, signed: B.days(0)))
        b.claim("c1", purchaser: Self.p1, at: B.days(1), memberRef: "m1")
        let claim2 = b.claim("c2", purchaser: Self.p1, at: B.days(2), memberRef: "m2")
        let unclaim = b.unclaim("c1", purchaser: Self.p1, at: B.days(5))
        let membership = try #require(GroupIdentityResolver.resolve(b.facts)[Self.p1])
        let asOf = B.days(20)
        let replay = GroupReplay.entries(membership: membership, facts: b.facts, to: asOf, now: asOf)
        return (try #require(b.state(Self.p1, asOf: asOf)), replay, unclaim, claim2)
    }

    @Test("one row per member; a closed interval ended by the unclaim, open ones to the end; each mark names its event and reason")
    func rowsIntervalsMarks() throws {
        let (state, replay, unclaim, claim2) = try group()
        let timeline = AccessTimeline(state: state, replay: replay)
        #expect(timeline.rows.map(\.role) == [.purchaser, .claim, .claim])
        let c1 = try #require(timeline.rows.first { $0.identity.contains("|c1|") })
        #expect(c1.intervals == [AccessTimeline.Interval(start: B.days(1), end: B.days(5), isOpen: false)])
        #expect(c1.changes.map(\.kind) == [.gained, .lost])
        #expect(c1.changes.last?.eventId == unclaim && c1.changes.last?.reasonCode == "UNCLAIMED_BY_DEVELOPER")
        #expect(!c1.hasAccess)
        let c2 = try #require(timeline.rows.first { $0.identity.contains("|c2|") })
        #expect(c2.intervals == [AccessTimeline.Interval(start: B.days(2), end: B.days(20), isOpen: true)])
        #expect(c2.changes.map(\.eventId) == [claim2] && c2.hasAccess)
        #expect(timeline.start == B.days(0) && timeline.end == B.days(20))
        #expect(timeline.allChanges.map(\.change.at) == timeline.allChanges.map(\.change.at).sorted())

        let svg = AccessTimelineSVG.render(timeline)
        #expect(svg.contains("class=\"mark mark-lost\" data-event-id=\"\(unclaim)\" data-reason=\"UNCLAIMED_BY_DEVELOPER\""))
        #expect(svg.components(separatedBy: "<text class=\"tick\"").count - 1 >= 3)
        #expect(svg.contains("<td data-label=\"Reason\">UNCLAIMED_BY_DEVELOPER: unclaimed by our server</td>"))
        #expect(!svg.contains("http"), "no namespace or other URL in the inline SVG")

        let member = try #require(state.member(claim: "c1"))
        let explanation = AccessExplanation(member: member, group: state, row: timeline.row(for: member), replay: replay)
        #expect(explanation.sentence == "m1 (claim c1…) has had no access in group \(Self.p1) since \(Timestamp.iso8601(B.days(5))) because our server "
            + "unclaimed the seat (UNCLAIMED_BY_DEVELOPER, event \(unclaim): UnclaimSeat → 204).")
        #expect(explanation.evidence.first == AccessExplanation.Cited(role: "revoked by", eventId: unclaim, what: "UnclaimSeat → 204"))
    }

    @Test("after the period ends time alone takes access: the mark cites the event that set the period, with the cause one level up")
    func timeDrivenLoss() throws {
        var b = B()
        let subscribed = b.notification("SUBSCRIBED", "INITIAL_BUY", at: B.days(0),
                                        transaction: B.transaction(id: Self.p1, original: Self.p1, app: Self.p1App, quantity: 5,
                                                                   purchase: B.days(0), expires: B.days(30), model: "DEVELOPER"))
        b.claim("c2", purchaser: Self.p1, at: B.days(2), memberRef: "m2")
        let membership = try #require(GroupIdentityResolver.resolve(b.facts)[Self.p1])
        let replay = GroupReplay.entries(membership: membership, facts: b.facts, to: B.days(40), now: B.days(40))
        let state = try #require(b.state(Self.p1, asOf: B.days(40)))
        let row = try #require(AccessTimeline(state: state, replay: replay).rows.first { $0.identity.contains("|c2|") })
        let loss = try #require(row.changes.last)
        #expect(loss.kind == .lost && loss.entryEventId == nil && loss.eventId == subscribed && loss.reasonCode == "GROUP_EXPIRED")
        // The cause is the change's own event at the change's own moment: neither is repeated.
        #expect(loss.causeText == "EXPIRED (subscription expired), the same event")
        let member = try #require(state.member(claim: "c2"))
        let sentence = AccessExplanation(member: member, group: state, row: row, replay: replay).sentence
        #expect(sentence.hasSuffix("because the group subscription expired (GROUP_EXPIRED), caused one level up by the purchaser's subscription "
            + "expiring (EXPIRED) on \(Timestamp.iso8601(B.days(30))): the period that event \(subscribed) (SUBSCRIBED / INITIAL_BUY) set ended."), "\(sentence)")
    }

    @Test("time axis: 3 to 8 round ticks for spans from seconds to a century, labels by step, Int64's extremes without a trap")
    func timeAxis() {
        let start: EpochMillis = 1_790_000_000_000
        for span: EpochMillis in [1_500, 90_000, 3_600_000, 86_400_000, 7 * 86_400_000, 46 * 86_400_000, 400 * 86_400_000, 36_500 * 86_400_000] {
            let ticks = TimeAxis.ticks(from: start, to: start + span)
            #expect((3...9).contains(ticks.count), "span \(span): \(ticks.count) ticks")
            #expect(ticks.allSatisfy { $0.at >= start && $0.at <= start + span }, "span \(span)")
            #expect(Set(ticks.map(\.label)).count == ticks.count, "span \(span): labels repeat: \(ticks.map(\.label))")
        }
        #expect(TimeAxis.ticks(from: start, to: start + 46 * 86_400_000).first?.label.count == 10, "day steps show the date")
        let extreme = TimeAxis.ticks(from: .min, to: .max)
        #expect(extreme.count >= 3)
        #expect(TimeAxis.ticks(from: start, to: start).count == 1)
    }
}
