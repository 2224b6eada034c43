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
    /// Apple's `transactionId`: the id of this transaction (a purchase, renewal or seat addition).
    public let transactionId: String?
    /// Apple's `originalTransactionId`: the first transaction of the subscription, which every renewal keeps.
    public let originalTransactionId: String?
    /// Apple's `webOrderLineItemId`: the id of a subscription purchase event (a period), across devices.
    public let webOrderLineItemId: String?
    /// Apple's `bundleId`: the bundle identifier of the app.
    public let bundleId: String?
    /// Apple's `productId`: the in-app product purchased.
    public let productId: String?
    /// Apple's `subscriptionGroupIdentifier`: the subscription group the product belongs to.
    public let subscriptionGroupIdentifier: String?
    /// Apple's `purchaseDate`: when the App Store charged for this transaction (a period's start).
    public let purchaseDate: EpochMillis?
    /// Apple's `originalPurchaseDate`: the purchase date of the original transaction.
    public let originalPurchaseDate: EpochMillis?
    /// Apple's `expiresDate`: when the subscription period ends (expires or renews).
    public let expiresDate: EpochMillis?
    /// Seats this transaction covers for a multiseat purchase.
    public let quantity: Int64?
    /// Apple's `type`: the product type, e.g. `Auto-Renewable Subscription`; verbatim.
    public let type: String?
    /// Apple's `appAccountToken`: the UUID the app attached at purchase to link its own account.
    public let appAccountToken: String?
    /// Apple's `inAppOwnershipType`: purchased, family shared, or assigned through a group or organization.
    public let inAppOwnershipType: InAppOwnershipType?
    /// Apple's `signedDate`: when the App Store signed this payload; the latest version of a transaction wins.
    public let signedDate: EpochMillis?
    /// Apple's `revocationReason`: why the App Store refunded or revoked it (0 other, 1 an app issue).
    public let revocationReason: Int64?
    /// Apple's `revocationDate`: when it was refunded or revoked; for multiseat only when every seat is.
    public let revocationDate: EpochMillis?
    /// Apple's `revocationType`: the kind of refund or revocation; verbatim, unknown values kept.
    public let revocationType: RevocationType?
    /// Apple's `revocationPercentage`: the share refunded or revoked, in milliunits of a percent.
    public let revocationPercentage: Int64?
    /// Apple's `isUpgraded`: the customer upgraded to another subscription (adding seats does not set it).
    public let isUpgraded: Bool?
    /// Apple's `offerType`: the kind of offer redeemed (1 introductory, 2 promotional, 3 offer code, 4 win-back).
    public let offerType: Int64?
    /// Apple's `offerIdentifier`: the id of the offer or offer code redeemed.
    public let offerIdentifier: String?
    /// Apple's `environment`: the environment that signed the transaction; verbatim.
    public let environment: AppStoreEnvironment?
    /// Apple's `storefront`: the three-letter country code of the App Store storefront.
    public let storefront: String?
    /// Apple's `storefrontId`: Apple's id of the App Store storefront.
    public let storefrontId: String?
    /// Apple's `transactionReason`: `PURCHASE` or `RENEWAL`; verbatim, unknown values kept.
    public let transactionReason: String?
    /// Apple's `currency`: the ISO 4217 currency of `price` and of every tier price.
    public let currency: String?
    /// For multiseat: the average price per seat.
    public let price: Int64?
    /// Apple's `appTransactionId`: the customer's app-download id, used by Claim and Associate Seat.
    public let appTransactionId: String?
    /// Apple's `additionalTransactionReason` (top level or in `multiSeatInfo`): why a period has more transactions.
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

    /// Total charged for a multiseat transaction: Σ tier price × tier quantity (milliunits);
    /// `nil` without tiers, when a tier lacks its price or quantity, or when the total does not
    /// fit in 64 bits (the numbers are Apple's, any Int64: never a trap).
    public var totalTierPrice: Int64? {
        guard !priceTiers.isEmpty else { return nil }
        var total: Int64 = 0
        for tier in priceTiers {
            guard let p = tier.price, let q = tier.quantity else { return nil }
            let (product, productOverflow) = p.multipliedReportingOverflow(by: q)
            let (sum, sumOverflow) = total.addingReportingOverflow(product)
            guard !productOverflow, !sumOverflow else { return nil }
            total = sum
        }
        return total
    }
}

/// A decoded `JWSRenewalInfoDecodedPayload`, seat fields included.
public struct RenewalInfoPayload: Sendable, Hashable {
    /// The payload exactly as decoded, every field kept.
    public let json: JSONValue
    /// Apple's `originalTransactionId`: the subscription (purchaser) this renewal info belongs to.
    public let originalTransactionId: String?
    /// Apple's `autoRenewProductId`: the product that renews at the next billing date.
    public let autoRenewProductId: String?
    /// Apple's `productId`: the product currently subscribed to.
    public let productId: String?
    /// Apple's `autoRenewStatus`: 1 when auto-renew is on, 0 when the customer turned it off.
    public let autoRenewStatus: Int64?
    /// Apple's `expirationIntent`: why the subscription expired (1 cancelled, 2 billing error, …).
    public let expirationIntent: Int64?
    /// Apple's `gracePeriodExpiresDate`: when the billing grace period ends.
    public let gracePeriodExpiresDate: EpochMillis?
    /// Apple's `isInBillingRetryPeriod`: the App Store is still retrying a failed renewal charge.
    public let isInBillingRetryPeriod: Bool?
    /// Apple's `signedDate`: when the App Store signed this payload; the latest renewal info wins.
    public let signedDate: EpochMillis?
    /// Apple's `environment`: the environment that signed the renewal info; verbatim.
    public let environment: AppStoreEnvironment?
    /// Apple's `recentSubscriptionStartDate`: start of the current run of paid periods (lapses < 60 days ignored).
    public let recentSubscriptionStartDate: EpochMillis?
    /// Apple's `renewalDate`: when the subscription next renews (or would have).
    public let renewalDate: EpochMillis?
    /// Apple's `renewalPrice`: next renewal's price in milliunits of `currency`; for multiseat, per seat on average.
    public let renewalPrice: Int64?
    /// Apple's `currency`: the ISO 4217 currency of `renewalPrice`.
    public let currency: String?
    /// Apple's `appTransactionId`: the customer's app-download id.
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
