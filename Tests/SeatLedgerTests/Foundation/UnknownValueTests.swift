import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import SeatLedger
import Testing

/// Unknown enum values and unknown fields are accepted and preserved verbatim, never mapped to a
/// known value.
@Suite("Decoding: unknown values are preserved")
struct UnknownValueTests {
    @Test("unknown notificationType / subtype / inAppOwnershipType / revocationType and unknown fields")
    func unknownEverything() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let futureObject: JSONValue = ["nested": [1, "two", ["three": true]], "big": 9_007_199_254_740_993]
        let transaction = factory.transaction(
            inAppOwnershipType: "FUTURE_TYPE", revocationDate: PayloadFactory.defaultSignedDate, revocationType: "X",
            revocationReason: 7, multiSeatInfo: .init(invitationManagement: "SOMEONE_ELSE", priceTiers: [.init(price: 1, quantity: 2)]),
            additionalTransactionReason: "SEAT_SUBTRACTION",
            extra: ["futureTransactionField": futureObject, "multiSeatInfo": ["invitationManagement": "SOMEONE_ELSE",
                                                                               "tierShape": "new", "priceTiers": [["tierPrice": 5, "tierQuantity": 1]]]])
        let renewal = factory.renewal(extra: ["futureRenewalField": "kept", "autoRenewStatus": 9])
        let payload = try factory.notificationPayload(
            type: "SOMETHING_NEW", subtype: "EVEN_NEWER", uuid: "unknown-1", transaction: transaction, renewal: renewal,
            dataExtra: ["futureDataField": ["a": 1]], extra: ["futureTopLevel": futureObject, "version": "9.9"])
        let line = PayloadFactory.body(signedPayload: try factory.sign(payload))

        #expect(try test.append(line: line) == .appended(positions: [1], duplicatesCarried: 0))
        let event = try #require(try test.store.event(at: 1))
        #expect(event.type == "SOMETHING_NEW")
        #expect(event.subtype == "EVEN_NEWER")
        // Verbatim: the decoded JSON equals what was signed, unknown members included.
        #expect(event.decoded["notification"] == payload)
        #expect(event.decoded["transactionInfo"] == transaction)
        #expect(event.decoded["renewalInfo"] == renewal)
        #expect(event.decoded["notification"]?["futureTopLevel"] == futureObject)
        #expect(event.decoded["transactionInfo"]?["futureTransactionField"]?["big"] == .int(9_007_199_254_740_993))

        // Typed views keep the unknown raw values and do not pretend they are known.
        let typed = TransactionPayload(json: try #require(event.decoded["transactionInfo"]))
        #expect(typed.inAppOwnershipType?.rawValue == "FUTURE_TYPE")
        #expect(typed.inAppOwnershipType?.isKnown == false)
        #expect(typed.revocationType?.rawValue == "X")
        #expect(typed.revocationType?.isKnown == false)
        #expect(typed.additionalTransactionReason?.rawValue == "SEAT_SUBTRACTION")
        #expect(typed.invitationManagement?.rawValue == "SOMEONE_ELSE")
        #expect(typed.priceTiers == [MultiSeatPriceTier(price: 5, quantity: 1)])
        let notification = NotificationPayload(json: try #require(event.decoded["notification"]))
        #expect(notification.notificationType?.rawValue == "SOMETHING_NEW")
        #expect(notification.notificationType?.isKnown == false)

        // The stored decoded column survives a re-open (it is read back from SQLite, not memory).
        try test.reopen()
        #expect(try test.store.event(at: 1)?.decoded["notification"] == payload)
    }

    @Test("known values of each open enum are recognised", arguments: ["PURCHASED", "FAMILY_SHARED", "ASSIGNED"])
    func knownOwnership(_ value: String) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: factory.notification(transaction: factory.transaction(inAppOwnershipType: value)))
        let typed = TransactionPayload(json: try #require(try test.store.event(at: 1)?.decoded["transactionInfo"]))
        #expect(typed.inAppOwnershipType?.rawValue == value)
        #expect(typed.inAppOwnershipType?.isKnown == true)
    }
}
