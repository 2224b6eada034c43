import AppStoreModels
import Projections
import Testing

/// The pure rules of `Projections` that need no store: built and run without PostgreSQL, Redis,
/// SQLite or the CLI (issue #25 item 6).
@Suite("Projections: transaction roles and seat arithmetic")
struct TransactionRulesTests {
    /// A transaction payload with a multiseat block, as Apple signs a group purchase.
    static func payload(ownership: String?, multiSeat: Bool = true, quantity: Int64 = 5) -> TransactionPayload {
        var fields: [String: JSONValue] = [
            "transactionId": "2000000000000101", "originalTransactionId": "2000000000000100",
            "appTransactionId": "705000000000000100", "productId": "com.example.reps.team", "quantity": .int(quantity),
            "purchaseDate": .int(1_790_000_000_000), "expiresDate": .int(1_792_592_000_000), "signedDate": .int(1_790_000_000_000),
        ]
        if let ownership { fields["inAppOwnershipType"] = .string(ownership) }
        if multiSeat { fields["multiSeatInfo"] = ["priceTiers": [["price": 9990, "quantity": .int(quantity)]]] }
        return TransactionPayload(json: .object(fields))
    }

    @Test("who is a group's purchaser: the customer's own multiseat purchase only (seed 001: only the purchaser shares with family)",
          arguments: [("PURCHASED", true), (nil, true), ("FAMILY_SHARED", false), ("ASSIGNED", false), ("GUEST_PASS", false)] as [(String?, Bool)])
    func purchaserByOwnership(_ ownership: String?, _ isPurchaser: Bool) throws {
        let fact = try #require(TransactionFact(Self.payload(ownership: ownership)))
        #expect(fact.isPurchaser == isPurchaser)
        #expect(fact.isHeldAccess == !isPurchaser)
    }

    @Test("an undocumented ownership value is kept verbatim, never defaulted (seed 000: access comes from the transaction)")
    func unknownOwnershipKept() throws {
        let fact = try #require(TransactionFact(Self.payload(ownership: "GUEST_PASS")))
        #expect(fact.ownership?.rawValue == "GUEST_PASS")
        #expect(fact.ownership.map { InAppOwnershipType.knownValues.contains($0.rawValue) } == false)
    }

    @Test("a transaction without multiSeatInfo is no group purchase, whatever its quantity")
    func noMultiSeatNoPurchaser() throws {
        let fact = try #require(TransactionFact(Self.payload(ownership: "PURCHASED", multiSeat: false, quantity: 9)))
        #expect(!fact.isPurchaser)
    }

    @Test("seat sums and differences saturate at Int64's edges instead of trapping", arguments: [
        (Int64.max, 1, Int64.max, Int64.max - 1), (Int64.min, 1, Int64.min + 1, Int64.min),
        (Int64.min, -1, Int64.min, Int64.min + 1), (0, Int64.min, Int64.min, Int64.max), (5, 3, 8, 2),
    ] as [(Int64, Int64, Int64, Int64)])
    func saturating(_ a: Int64, _ b: Int64, _ sum: Int64, _ difference: Int64) {
        #expect(a.saturatingAdd(b) == sum)
        #expect(a.saturatingSubtract(b) == difference)
    }

    @Test("a sum over Apple's quantities cannot overflow, and out-of-range counts are outside the plausible range")
    func sums() {
        #expect([Int64.max, Int64.max, -5].saturatingSum() == Int64.max - 5)
        #expect([Int64.min, -1].saturatingSum() == Int64.min)
        for implausible in [Int64.min, -1, Int64(Int32.max) + 1, Int64.max] { #expect(!SeatQuantity.plausibleRange.contains(implausible)) }
        for plausible in [Int64(0), 100, Int64(Int32.max)] { #expect(SeatQuantity.plausibleRange.contains(plausible)) }
    }
}
