import AppStoreModels
import Testing

/// `TransactionPayload`'s derived values over Apple's numbers, which may be any Int64.
@Suite("TransactionPayload: multiseat price tiers")
struct TransactionPayloadTests {
    static func payload(tiers: [(price: Int64, quantity: Int64)]) -> TransactionPayload {
        let json: JSONValue = ["originalTransactionId": "2000000000000001", "multiSeatInfo": [
            "invitationManagement": "DEVELOPER",
            "priceTiers": .array(tiers.map { ["price": .int($0.price), "quantity": .int($0.quantity)] }),
        ]]
        return TransactionPayload(json: json)
    }

    @Test("the total is the sum of price × quantity over the tiers")
    func total() {
        #expect(Self.payload(tiers: [(9_990, 5), (7_990, 3)]).totalTierPrice == 73_920)
        #expect(Self.payload(tiers: []).totalTierPrice == nil)
    }

    @Test("a product or a sum beyond Int64 is nil, not a trap", arguments: [
        [(Int64.max, 2)], [(Int64.min, -1)], [(Int64.max / 2 + 1, 1), (Int64.max / 2 + 1, 1)], [(-Int64.max, 1), (-Int64.max, 1)],
    ] as [[(Int64, Int64)]])
    func overflow(_ tiers: [(Int64, Int64)]) {
        #expect(Self.payload(tiers: tiers.map { (price: $0.0, quantity: $0.1) }).totalTierPrice == nil)
    }
}
