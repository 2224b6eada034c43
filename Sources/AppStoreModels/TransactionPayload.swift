/// One seat tier of a multiseat price: `price`/`quantity` or `tierPrice`/`tierQuantity` (both accepted).
public struct MultiSeatPriceTier: Sendable, Hashable {
    /// Price per seat in milliunits of the transaction's currency.
    public let price: Int64?
    /// Seats at that price.
    public let quantity: Int64?

    /// Reads a tier object, accepting either spelling of its fields.
    public init(json: JSONValue) {
        price = (json["price"] ?? json["tierPrice"])?.int64Value
        quantity = (json["quantity"] ?? json["tierQuantity"])?.int64Value
    }

    /// Creates a tier.
    public init(price: Int64?, quantity: Int64?) {
        self.price = price
        self.quantity = quantity
    }
}

/// A decoded `JWSTransactionDecodedPayload`, multiseat fields included.
///
/// Every field is optional: Apple omits what does not apply. The full JSON stays in ``json`` so
/// unknown fields are never lost.
public struct TransactionPayload: Sendable, Hashable {
    /// The payload exactly as decoded, every field kept.
    public let json: JSONValue
    public let transactionId: String?
    public let originalTransactionId: String?
    public let webOrderLineItemId: String?
    public let bundleId: String?
    public let productId: String?
    public let subscriptionGroupIdentifier: String?
    public let purchaseDate: EpochMillis?
    public let originalPurchaseDate: EpochMillis?
    public let expiresDate: EpochMillis?
    /// Seats this transaction covers for a multiseat purchase.
    public let quantity: Int64?
    public let type: String?
    public let appAccountToken: String?
    public let inAppOwnershipType: InAppOwnershipType?
    public let signedDate: EpochMillis?
    public let revocationReason: Int64?
    public let revocationDate: EpochMillis?
    public let revocationType: RevocationType?
    public let revocationPercentage: Int64?
    public let isUpgraded: Bool?
    public let offerType: Int64?
    public let offerIdentifier: String?
    public let environment: AppStoreEnvironment?
    public let storefront: String?
    public let storefrontId: String?
    public let transactionReason: String?
    public let currency: String?
    /// For multiseat: the average price per seat.
    public let price: Int64?
    public let appTransactionId: String?
    public let additionalTransactionReason: AdditionalTransactionReason?
    /// Seats removed by a seat-based refund (top level or inside `multiSeatInfo`).
    public let revokedSeatQuantity: Int64?
    /// `multiSeatInfo.invitationManagement`; `nil` when the purchase is not multiseat.
    public let invitationManagement: InvitationManagement?
    /// `multiSeatInfo.priceTiers`.
    public let priceTiers: [MultiSeatPriceTier]
    /// Whether `multiSeatInfo` is present (a multiseat purchase).
    public let isMultiSeat: Bool

    /// Reads every known field from a decoded transaction payload.
    public init(json: JSONValue) {
        self.json = json
        transactionId = json["transactionId"]?.stringValue
        originalTransactionId = json["originalTransactionId"]?.stringValue
        webOrderLineItemId = json["webOrderLineItemId"]?.stringValue
        bundleId = json["bundleId"]?.stringValue
        productId = json["productId"]?.stringValue
        subscriptionGroupIdentifier = json["subscriptionGroupIdentifier"]?.stringValue
        purchaseDate = Timestamp.parse(json["purchaseDate"])
        originalPurchaseDate = Timestamp.parse(json["originalPurchaseDate"])
        expiresDate = Timestamp.parse(json["expiresDate"])
        quantity = json["quantity"]?.int64Value
        type = json["type"]?.stringValue
        appAccountToken = json["appAccountToken"]?.stringValue
        inAppOwnershipType = json["inAppOwnershipType"]?.stringValue.map(InAppOwnershipType.init(rawValue:))
        signedDate = Timestamp.parse(json["signedDate"])
        revocationReason = json["revocationReason"]?.int64Value
        revocationDate = Timestamp.parse(json["revocationDate"])
        revocationType = json["revocationType"]?.stringValue.map(RevocationType.init(rawValue:))
        revocationPercentage = json["revocationPercentage"]?.int64Value
        isUpgraded = json["isUpgraded"]?.boolValue
        offerType = json["offerType"]?.int64Value
        offerIdentifier = json["offerIdentifier"]?.stringValue
        environment = json["environment"]?.stringValue.map(AppStoreEnvironment.init(rawValue:))
        storefront = json["storefront"]?.stringValue
        storefrontId = json["storefrontId"]?.stringValue
        transactionReason = json["transactionReason"]?.stringValue
        currency = json["currency"]?.stringValue
        price = json["price"]?.int64Value
        appTransactionId = json["appTransactionId"]?.stringValue
        let multiSeat = json["multiSeatInfo"]
        additionalTransactionReason = (json["additionalTransactionReason"] ?? multiSeat?["additionalTransactionReason"])?
            .stringValue.map(AdditionalTransactionReason.init(rawValue:))
        revokedSeatQuantity = (json["revokedSeatQuantity"] ?? multiSeat?["revokedSeatQuantity"])?.int64Value
        invitationManagement = multiSeat?["invitationManagement"]?.stringValue.map(InvitationManagement.init(rawValue:))
        priceTiers = multiSeat?["priceTiers"]?.arrayValue?.map(MultiSeatPriceTier.init(json:)) ?? []
        isMultiSeat = multiSeat.map { !$0.isNull } ?? false
    }

    /// Total charged for a multiseat transaction: Σ tier price × tier quantity (milliunits).
    public var totalTierPrice: Int64? {
        guard !priceTiers.isEmpty else { return nil }
        var total: Int64 = 0
        for tier in priceTiers {
            guard let p = tier.price, let q = tier.quantity else { return nil }
            total += p * q
        }
        return total
    }
}

/// A decoded `JWSRenewalInfoDecodedPayload`, seat fields included.
public struct RenewalInfoPayload: Sendable, Hashable {
    /// The payload exactly as decoded, every field kept.
    public let json: JSONValue
    public let originalTransactionId: String?
    public let autoRenewProductId: String?
    public let productId: String?
    public let autoRenewStatus: Int64?
    public let expirationIntent: Int64?
    public let gracePeriodExpiresDate: EpochMillis?
    public let isInBillingRetryPeriod: Bool?
    public let signedDate: EpochMillis?
    public let environment: AppStoreEnvironment?
    public let recentSubscriptionStartDate: EpochMillis?
    public let renewalDate: EpochMillis?
    public let renewalPrice: Int64?
    public let currency: String?
    public let appTransactionId: String?
    /// Seats at the next renewal.
    public let renewalQuantity: Int64?
    /// `multiSeatInfo.renewalPriceTiers`.
    public let renewalPriceTiers: [MultiSeatPriceTier]

    /// Reads every known field from a decoded renewal-info payload.
    public init(json: JSONValue) {
        self.json = json
        originalTransactionId = json["originalTransactionId"]?.stringValue
        autoRenewProductId = json["autoRenewProductId"]?.stringValue
        productId = json["productId"]?.stringValue
        autoRenewStatus = json["autoRenewStatus"]?.int64Value
        expirationIntent = json["expirationIntent"]?.int64Value
        gracePeriodExpiresDate = Timestamp.parse(json["gracePeriodExpiresDate"])
        isInBillingRetryPeriod = json["isInBillingRetryPeriod"]?.boolValue
        signedDate = Timestamp.parse(json["signedDate"])
        environment = json["environment"]?.stringValue.map(AppStoreEnvironment.init(rawValue:))
        recentSubscriptionStartDate = Timestamp.parse(json["recentSubscriptionStartDate"])
        renewalDate = Timestamp.parse(json["renewalDate"])
        renewalPrice = json["renewalPrice"]?.int64Value
        currency = json["currency"]?.stringValue
        appTransactionId = json["appTransactionId"]?.stringValue
        let multiSeat = json["multiSeatInfo"]
        renewalQuantity = (json["renewalQuantity"] ?? multiSeat?["renewalQuantity"])?.int64Value
        renewalPriceTiers = multiSeat?["renewalPriceTiers"]?.arrayValue?.map(MultiSeatPriceTier.init(json:)) ?? []
    }
}
