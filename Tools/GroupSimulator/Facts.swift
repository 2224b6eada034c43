import AppStoreModels
import Foundation

/// One price tier of a transaction: `quantity` seats at `price` milliunits each.
struct Tier: Sendable, Hashable {
    var price: Int64
    var quantity: Int

    var json: JSONValue { ["price": .int(price), "quantity": .count(quantity)] }
}

/// The truth about one version of a transaction; ``json(signedDate:)`` renders the
/// `JWSTransactionDecodedPayload` and the truth model reads the same values.
struct TxFacts: Sendable, Hashable {
    var transactionId: String
    var originalTransactionId: String
    var productId: String
    var purchaseDate: EpochMillis
    var originalPurchaseDate: EpochMillis
    var expiresDate: EpochMillis
    var quantity: Int
    /// `PURCHASED` or `ASSIGNED`.
    var ownership: String
    /// `PURCHASE` or `RENEWAL`.
    var transactionReason: String
    /// Average price per seat, milliunits.
    var price: Int64
    var appTransactionId: String
    /// `nil` = no `multiSeatInfo` (organization seats).
    var invitationManagement: String?
    var priceTiers: [Tier] = []
    var seatAddition = false
    var revokedSeatQuantity = 0
    var revokedSeatPlacement: RevokedSeatPlacement = .multiSeatInfo
    var revocationDate: EpochMillis?
    var revocationReason: Int64?
    var revocationType: String?

    var isMultiSeat: Bool { invitationManagement != nil }
    var isAssigned: Bool { ownership == "ASSIGNED" }
    /// Access held from someone else's purchase (ASSIGNED, FAMILY_SHARED, any other value): the
    /// holder's own transaction, never a purchaser's.
    var isHeld: Bool { ownership != "PURCHASED" }
    /// Seats this transaction still covers.
    var netSeats: Int { quantity - revokedSeatQuantity }

    func json(signedDate: EpochMillis) -> JSONValue {
        var o: [String: JSONValue] = [
            "transactionId": .string(transactionId),
            "originalTransactionId": .string(originalTransactionId),
            "bundleId": .string(SimulatedApp.bundleId),
            "productId": .string(productId),
            "subscriptionGroupIdentifier": .string(SimulatedApp.subscriptionGroupIdentifier),
            "purchaseDate": .int(purchaseDate),
            "originalPurchaseDate": .int(originalPurchaseDate),
            "expiresDate": .int(expiresDate),
            "quantity": .count(quantity),
            "type": "Auto-Renewable Subscription",
            "inAppOwnershipType": .string(ownership),
            "signedDate": .int(signedDate),
            "environment": .string(SimulatedApp.environment),
            "transactionReason": .string(transactionReason),
            "storefront": .string(SimulatedApp.storefront),
            "storefrontId": .string(SimulatedApp.storefrontId),
            "currency": .string(SimulatedApp.currency),
            "price": .int(price),
            "appTransactionId": .string(appTransactionId),
        ]
        if let invitationManagement {
            var seat: [String: JSONValue] = [
                "invitationManagement": .string(invitationManagement),
                "priceTiers": .array(priceTiers.map(\.json)),
            ]
            if revokedSeatQuantity > 0, revokedSeatPlacement == .multiSeatInfo { seat["revokedSeatQuantity"] = .count(revokedSeatQuantity) }
            o["multiSeatInfo"] = .object(seat)
        }
        if revokedSeatQuantity > 0, revokedSeatPlacement == .topLevel || invitationManagement == nil {
            o["revokedSeatQuantity"] = .count(revokedSeatQuantity)
        }
        if seatAddition { o["additionalTransactionReason"] = "SEAT_ADDITION" }
        if let revocationDate { o["revocationDate"] = .int(revocationDate) }
        if let revocationReason { o["revocationReason"] = .int(revocationReason) }
        if let revocationType { o["revocationType"] = .string(revocationType) }
        return .object(o)
    }
}

/// The truth about one version of a subscription's renewal info (`JWSRenewalInfoDecodedPayload`).
struct RenewalFacts: Sendable, Hashable {
    var originalTransactionId: String
    var productId: String
    var autoRenewStatus: Bool
    /// Seats at the next renewal (purchaser only).
    var renewalQuantity: Int?
    var renewalPriceTiers: [Tier] = []
    var renewalPrice: Int64?
    var isInBillingRetryPeriod = false
    var gracePeriodExpiresDate: EpochMillis?
    var renewalDate: EpochMillis?
    var recentSubscriptionStartDate: EpochMillis?
    var expirationIntent: Int64?
    var appTransactionId: String

    func json(signedDate: EpochMillis) -> JSONValue {
        var o: [String: JSONValue] = [
            "originalTransactionId": .string(originalTransactionId),
            "autoRenewProductId": .string(productId),
            "productId": .string(productId),
            "autoRenewStatus": .int(autoRenewStatus ? 1 : 0),
            "isInBillingRetryPeriod": .bool(isInBillingRetryPeriod),
            "signedDate": .int(signedDate),
            "environment": .string(SimulatedApp.environment),
            "appTransactionId": .string(appTransactionId),
            "currency": .string(SimulatedApp.currency),
        ]
        if let renewalQuantity {
            o["renewalQuantity"] = .count(renewalQuantity)
            o["multiSeatInfo"] = .object(["renewalPriceTiers": .array(renewalPriceTiers.map(\.json))])
        }
        if let renewalPrice { o["renewalPrice"] = .int(renewalPrice) }
        if let gracePeriodExpiresDate { o["gracePeriodExpiresDate"] = .int(gracePeriodExpiresDate) }
        if let renewalDate { o["renewalDate"] = .int(renewalDate) }
        if let recentSubscriptionStartDate { o["recentSubscriptionStartDate"] = .int(recentSubscriptionStartDate) }
        if let expirationIntent { o["expirationIntent"] = .int(expirationIntent) }
        return .object(o)
    }
}

// MARK: - Truth records (what each event revealed, and when)

struct TxVersion: Sendable {
    let tx: TxFacts
    let signedDate: EpochMillis
    let occurredAt: EpochMillis
    let eventId: String
}

struct RenewalVersion: Sendable {
    let renewal: RenewalFacts
    let signedDate: EpochMillis
    let occurredAt: EpochMillis
    let eventId: String
}

struct NotificationFact: Sendable {
    let eventId: String
    let type: String
    let subtype: String?
    let signedDate: EpochMillis
    /// The purchaser's original transaction id when the notification concerns the purchaser.
    let purchaserOTID: String?
    let unclaimSeatIds: [String]
}

struct ClaimFact: Sendable {
    let seatClaimId: String
    let purchaserOTID: String
    let appTransactionId: String?
    let memberRef: String?
    let at: EpochMillis
    let eventId: String
}

struct AssociationFact: Sendable {
    let seatClaimId: String
    let appTransactionId: String
    let at: EpochMillis
    let eventId: String
}

struct UnclaimFact: Sendable {
    let seatClaimId: String
    let purchaserOTID: String
    let at: EpochMillis
    let eventId: String
}

struct SeatInfoFact: Sendable {
    let purchaserOTID: String
    let total: Int
    let available: Int
    let seatClaimIds: [String]
    let at: EpochMillis
    let eventId: String
}

struct CustomerGroupsFact: Sendable {
    let customerId: String
    let groupIds: [String]
    let at: EpochMillis
    let eventId: String
}

struct GroupMembersFact: Sendable {
    let groupId: String
    let appTransactionIds: [String]
    let at: EpochMillis
    let eventId: String
}

/// Everything the scenario revealed, each fact stamped with the event that revealed it.
struct TruthLog: Sendable {
    var transactions: [TxVersion] = []
    var renewals: [RenewalVersion] = []
    var notifications: [NotificationFact] = []
    var claims: [ClaimFact] = []
    var associations: [AssociationFact] = []
    var unclaims: [UnclaimFact] = []
    var seatInfos: [SeatInfoFact] = []
    var customerGroups: [CustomerGroupsFact] = []
    var groupMembers: [GroupMembersFact] = []
}
