import AppStoreModels
import Foundation
import SeatLedger
import Testing

/// `member show`: every identifier of a member finds them, also as of moments before the evidence
/// that links them to their group.
@Suite("Member lookup")
struct MemberLookupTests {
    let factory: PayloadFactory
    init() throws { factory = try PayloadFactory() }

    static let purchaser = "2000000000000900", purchaserApp = "705000000000000900"
    static let member = "2000000000000901", memberApp = "705000000000000901"

    @Test("as of before the Get Group Members that links them, a seat holder is found in their unlinked group")
    func memberBeforeLink() throws {
        let test = try TestLedger()
        let t0 = PayloadFactory.defaultSignedDate
        try test.append(line: factory.notification(
            uuid: "purchase", transaction: factory.transaction(originalTransactionId: Self.purchaser, transactionId: Self.purchaser,
                                                               appTransactionId: Self.purchaserApp)))
        try test.append(line: factory.notification(uuid: "member",
            transaction: factory.transaction(originalTransactionId: Self.member, appTransactionId: Self.memberApp,
                                             inAppOwnershipType: "ASSIGNED", quantity: nil,
                                             multiSeatInfo: PayloadFactory.MultiSeatInfo(invitationManagement: nil, priceTiers: nil))))
        try test.append(line: factory.apiResponse(endpoint: "GetGroupMembers", path: "/groups/v1/group/100000000000000900",
                                                  body: ["members": [["appTransactionId": .string(Self.purchaserApp)],
                                                                     ["appTransactionId": .string(Self.memberApp)]], "hasMore": false],
                                                  respondedAt: .int(t0 + 5 * PayloadFactory.day)))
        let now = try test.ledger.memberAccess(Self.member, asOf: t0 + 6 * PayloadFactory.day)
        #expect(now.map(\.group.groupKey) == [Self.purchaser])
        for identifier in [Self.member, Self.memberApp] {
            let earlier = try test.ledger.memberAccess(identifier, asOf: t0 + 1000)
            #expect(earlier.map(\.group.groupKey) == ["unlinked:\(Self.member)"], "\(identifier)")
            #expect(earlier.first?.member.hasAccess == true && earlier.first?.member.originalTransactionId == Self.member)
        }
    }

    @Test("a renewal's transactionId finds the purchaser; an identifier with nothing visible exits 2")
    func renewalTransactionId() throws {
        let test = try TestLedger()
        let renewal = "2000000000000999"
        let t0 = PayloadFactory.defaultSignedDate
        try test.append(line: factory.notification(
            uuid: "purchase", transaction: factory.transaction(originalTransactionId: Self.purchaser, transactionId: Self.purchaser,
                                                               appTransactionId: Self.purchaserApp)))
        try test.append(line: factory.notification(type: "DID_RENEW", uuid: "renew", signedDate: t0 + 29 * PayloadFactory.day,
            transaction: factory.transaction(originalTransactionId: Self.purchaser, transactionId: renewal,
                                             appTransactionId: Self.purchaserApp, purchaseDate: t0 + 29 * PayloadFactory.day,
                                             expiresDate: t0 + 59 * PayloadFactory.day, signedDate: t0 + 29 * PayloadFactory.day)))
        let found = try test.ledger.memberAccess(renewal, asOf: t0 + 30 * PayloadFactory.day)
        #expect(found.map(\.member.role) == [.purchaser] && found.first?.member.originalTransactionId == Self.purchaser)

        let shown = try CLI.run(["member", "show", renewal, "--db", test.path, "--json", "--as-of", "\(t0 + 30 * PayloadFactory.day)"])
        #expect(shown.exitCode == 0 && shown.stdout.contains(Self.purchaser), "\(shown)")
        let before = try CLI.run(["member", "show", renewal, "--db", test.path, "--as-of", "\(t0 - 2 * PayloadFactory.day)"])
        #expect(before.exitCode == 2, "\(before)")
        #expect(before.stderr.contains("\(renewal) names no member of any group as of"), "\(before)")
    }
}
