import AppStoreModels
import Foundation
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

/// An assigned seat holder nothing links is a group of its own, `unlinked:<originalTransactionId>`:
/// appends about one holder never re-fold the others, and evidence that links a holder later
/// moves it into the linked group.
@Suite("Incremental projections: unlinked assigned members")
struct IncrementalUnlinkedTests {
    let factory: PayloadFactory

    init() throws { factory = try PayloadFactory() }

    private func assigned(_ otid: String, app: String, uuid: String) throws -> String {
        try factory.notification(
            uuid: uuid,
            transaction: factory.transaction(originalTransactionId: otid, appTransactionId: app,
                                             inAppOwnershipType: "ASSIGNED", quantity: nil,
                                             multiSeatInfo: PayloadFactory.MultiSeatInfo(invitationManagement: nil, priceTiers: nil)),
            renewal: factory.renewal(originalTransactionId: otid, renewalQuantity: nil))
    }

    @Test("assigned members appended in separate batches each get unlinked:<otid>; verify finds nothing stale")
    func separateBatches() throws {
        let test = try TestLedger()
        let otids = ["2000000000000701", "2000000000000702", "2000000000000703"]
        for (index, otid) in otids.enumerated() {
            try test.append(line: assigned(otid, app: "70500000000000070\(index + 1)", uuid: "unlinked-\(index)"))
        }
        for otid in otids {
            let key = "unlinked:" + otid
            #expect(try test.ledger.groupKeys(for: otid) == [key])
            let state = try test.ledger.groupState(key, asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day)
            #expect(state.members.compactMap(\.originalTransactionId) == [otid])
            #expect(state.productId == PayloadFactory.defaultProductId)
            #expect(state.seats.assigned == 0)
        }
        #expect(try test.ledger.staleProjections().isEmpty)
        let verify = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(verify.exitCode == 0, "\(verify)")
        #expect(try verify.json()["staleGroups"] == .array([]))
    }

    @Test("Get Customer Groups and Get Group Members appended later move an unlinked holder into the purchaser's group")
    func linkedLater() throws {
        let test = try TestLedger()
        let purchaser = "2000000000000900"
        let purchaserApp = "705000000000000900"
        let member = "2000000000000901"
        let memberApp = "705000000000000901"
        let groupId = "100000000000000900"
        try test.append(line: factory.notification(
            uuid: "purchase", transaction: factory.transaction(originalTransactionId: purchaser, transactionId: purchaser,
                                                               appTransactionId: purchaserApp)))
        try test.append(line: assigned(member, app: memberApp, uuid: "member"))
        #expect(try test.ledger.groupKeys(for: member) == ["unlinked:" + member])

        let groups = factory.apiResponse(endpoint: "GetCustomerGroups", path: "/groups/v1/currentGroups/\(purchaser)",
                                         body: ["groups": [["groupId": .string(groupId), "groupType": "FAMILY"]]])
        let members = factory.apiResponse(endpoint: "GetGroupMembers", path: "/groups/v1/group/\(groupId)",
                                          body: ["members": [["appTransactionId": .string(purchaserApp)],
                                                             ["appTransactionId": .string(memberApp)]], "hasMore": false])
        _ = try test.ledger.ingestBatch([InboundMessage(raw: Data(groups.utf8), source: "groups", origin: .file, acceptsAPIResponses: true),
                                         InboundMessage(raw: Data(members.utf8), source: "members", origin: .file, acceptsAPIResponses: true)])
        #expect(try test.ledger.groupKeys(for: member) == [purchaser])
        #expect(try test.ledger.groupKeys(for: "unlinked:" + member).isEmpty, "the unlinked group is gone")
        let state = try test.ledger.groupState(purchaser, asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day)
        #expect(state.members.contains { $0.originalTransactionId == member && $0.role == .assigned })
        #expect(try test.ledger.staleProjections().isEmpty)
    }
}
