import AppStoreModels
import EventStore
import Foundation
import SeatLedger
import Testing

/// Assigned seat holders nothing links share one `unlinked:<product>` group; their own identifiers
/// do not name it, so each append must still find it (found by the bench's two-worker run).
@Suite("Incremental projections: unlinked assigned members")
struct IncrementalUnlinkedTests {
    @Test("assigned members of one product appended in separate batches all join unlinked:<product>; verify finds nothing stale")
    func separateBatches() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let otids = ["2000000000000701", "2000000000000702", "2000000000000703"]
        for (index, otid) in otids.enumerated() {
            try test.append(line: factory.notification(
                uuid: "unlinked-\(index)",
                transaction: factory.transaction(originalTransactionId: otid, appTransactionId: "70500000000000070\(index + 1)",
                                                 inAppOwnershipType: "ASSIGNED", quantity: nil,
                                                 multiSeatInfo: PayloadFactory.MultiSeatInfo(invitationManagement: nil, priceTiers: nil)),
                renewal: factory.renewal(originalTransactionId: otid, renewalQuantity: nil)))
        }
        let key = "unlinked:\(PayloadFactory.defaultProductId)"
        let state = try test.ledger.groupState(key, asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day)
        #expect(Set(state.members.compactMap(\.originalTransactionId)) == Set(otids))
        #expect(try test.ledger.staleProjections().isEmpty)
        let verify = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(verify.exitCode == 0, "\(verify)")
        #expect(try verify.json()["staleGroups"] == .array([]))
    }
}
