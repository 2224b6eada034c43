import AppStoreModels
import Foundation
import LedgerEvents
import LedgerIntake
import LedgerStorage
import Projections
@testable import SeatLedger
import Testing

/// Apps reuse their own member ids across groups (`m1` in every team). A claim's `memberRef`
/// resolves a REF to the group but never ties groups together: reads fold one group's own events
/// and an append re-folds only the groups it touches (issue #25 item 2: reads were quadratic).
@Suite("Member refs shared by many groups")
struct SharedMemberRefTests {
    static let groups = 6

    static func purchaser(_ g: Int) -> String { String(format: "20000000000009%02d", g) }

    /// `groups` purchases, each with claims for `m1` and `m2`, the same refs in every group.
    static func ledger() throws -> TestLedger {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        for g in 1...groups {
            var info = PayloadFactory.MultiSeatInfo()
            info.priceTiers = [PayloadFactory.PriceTier(price: 9990, quantity: 5)]
            let tx = factory.transaction(originalTransactionId: purchaser(g), appTransactionId: String(format: "7050000000000009%02d", g),
                                         quantity: 5, expiresDate: PayloadFactory.defaultSignedDate + 29 * PayloadFactory.day,
                                         multiSeatInfo: info)
            _ = try test.append(line: factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "purchase-\(g)", transaction: tx,
                                                           renewal: factory.renewal(originalTransactionId: purchaser(g), renewalQuantity: 5)))
            for m in 1...2 {
                _ = try test.append(line: claim(group: g, member: m, factory))
            }
        }
        return test
    }

    static func claim(group g: Int, member m: Int, _ factory: PayloadFactory) -> String {
        factory.apiResponse(endpoint: "ClaimSeat", method: "POST", path: "/groups/v1/transactions/\(purchaser(g))/seats",
                            requestBody: ["requestIdentifier": .string("req-\(g)-\(m)")],
                            body: ["seatClaimId": .string(String(format: "bbbbbbbb-0000-4000-8000-%06d%06d", g, m))],
                            respondedAt: .string(Timestamp.iso8601(PayloadFactory.defaultSignedDate + EpochMillis(g * 10 + m) * 60_000)),
                            context: ["memberRef": .string("m\(m)")])
    }

    @Test("a shared member ref is indexed as a reference of every group holding it, and still resolves to them all")
    func indexedAsReference() throws {
        let test = try Self.ledger()
        let rows = try test.store.groupIndexRows(groupKeys: Set((1...Self.groups).map(Self.purchaser)))
        let m1 = rows.filter { $0.identifier == "m1" }
        #expect(Set(m1.map(\.groupKey)) == Set((1...Self.groups).map(Self.purchaser)))
        #expect(m1.allSatisfy { $0.role == "memberRef" }, "\(m1)")
        #expect(try test.ledger.groupKeys(for: "m1").count == Self.groups)
        let asOf = PayloadFactory.defaultSignedDate + PayloadFactory.day
        let entries = try test.ledger.memberAccess("m1", asOf: asOf)
        #expect(entries.count == Self.groups && entries.allSatisfy { $0.member.hasAccess && $0.member.memberRef == "m1" })
    }

    @Test("each group folds its own events only: as many facts as its purchase and claims, whatever other groups hold m1")
    func readsFoldOwnEvents() throws {
        let test = try Self.ledger()
        let asOf = PayloadFactory.defaultSignedDate + PayloadFactory.day
        for g in 1...Self.groups {
            let state = try test.ledger.groupState(Self.purchaser(g), asOf: asOf)
            #expect(state.seats.claimed == 2, "group \(g): \(state.seats)")
            #expect(Set(state.members.compactMap(\.memberRef)) == ["m1", "m2"])
        }
        // What a read loads: the positions the group's routing identifiers mention (no other group's).
        let membership = try #require(ProjectionMaintainer.memberships(from: try test.store.groupIndexRows(groupKeys: [Self.purchaser(1)]))[Self.purchaser(1)])
        #expect(!membership.identifiers.union(membership.aliases).contains("m1"))
        #expect(membership.references == ["m1", "m2"])
        let positions = try test.store.positions(mentioningAny: membership.identifiers.union(membership.aliases))
        #expect(positions.count == 3, "group 1's purchase and two claims, not the other groups' claims: \(positions.sorted())")
    }

    @Test("a claim in one group re-resolves that group only, not every group sharing its member ref")
    func appendTouchesOneGroup() throws {
        let test = try Self.ledger()
        let factory = try PayloadFactory()
        let line = Self.claim(group: 3, member: 1, factory).replacingOccurrences(of: "req-3-1", with: "req-3-1b")
            .replacingOccurrences(of: "000003000001", with: "000003000009")
        let events = try test.ledger.decoder.decode(InboundMessage(raw: Data(line.utf8), source: "test", origin: .file, acceptsAPIResponses: true)).get()
        var touched: Set<String> = []
        try test.store.write {
            touched = try ProjectionMaintainer(store: test.store).update(after: try test.store.append(events: events).appended)
        }
        #expect(touched == [Self.purchaser(3)], "\(touched.sorted())")
        #expect(try test.ledger.groupState(Self.purchaser(3), asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day).seats.claimed == 3)
        #expect(try test.ledger.staleProjections().isEmpty)
    }
}
