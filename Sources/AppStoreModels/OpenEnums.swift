/// App Store enumerations as open string types.
///
/// Apple adds values without notice, so every enumeration here is a `RawRepresentable` struct:
/// known values are static members, an unknown value is kept verbatim and compares unequal to
/// all of them. Nothing crashes, nothing is silently mapped to a known value.
///
/// ```swift
/// let type = NotificationType(rawValue: "SOMETHING_NEW")
/// type == .subscribed   // false
/// type.rawValue         // "SOMETHING_NEW"
/// type.isKnown          // false
/// ```
public protocol OpenStringEnum: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible
where RawValue == String {
    /// Every value this version of SeatLedger understands.
    static var knownValues: Set<String> { get }
}

extension OpenStringEnum {
    /// Whether this value is one SeatLedger understands (else it is preserved verbatim).
    public var isKnown: Bool { Self.knownValues.contains(rawValue) }
    /// The raw value, verbatim.
    public var description: String { rawValue }
    /// Orders by raw value.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// `notificationType` of App Store Server Notifications V2.
public struct NotificationType: OpenStringEnum {
    /// The value exactly as Apple sent it.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `SUBSCRIBED`: a purchase or resubscription; for groups also an Apple-hosted member joining or a seat assigned.
    public static let subscribed = Self(rawValue: "SUBSCRIBED")
    /// `DID_RENEW`: the subscription renewed for a new period.
    public static let didRenew = Self(rawValue: "DID_RENEW")
    /// `DID_CHANGE_RENEWAL_PREF`: the next renewal changes (plan, or seat count by assumption).
    public static let didChangeRenewalPref = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")
    /// `DID_CHANGE_RENEWAL_STATUS`: auto-renew was turned on or off.
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    /// `DID_FAIL_TO_RENEW`: a renewal failed on billing (grace period if subtype `GRACE_PERIOD`).
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")
    /// `GRACE_PERIOD_EXPIRED`: the billing grace period ended without a renewal.
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    /// `EXPIRED`: the subscription expired.
    public static let expired = Self(rawValue: "EXPIRED")
    /// `REFUND`: the App Store refunded a transaction (subtype `SEATS`: a seat-based refund).
    public static let refund = Self(rawValue: "REFUND")
    /// `REFUND_DECLINED`: the App Store declined a refund request.
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")
    /// `REFUND_REVERSED`: a refund granted earlier was reversed.
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")
    /// `REVOKE`: access through Family Sharing, a group or an organization was revoked.
    public static let revoke = Self(rawValue: "REVOKE")
    /// `UNCLAIM_SEATS`: the App Store released seat claims (listed in `unclaimInfo`).
    public static let unclaimSeats = Self(rawValue: "UNCLAIM_SEATS")
    /// `OFFER_REDEEMED`: the customer redeemed a subscription offer.
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")
    /// `PRICE_INCREASE`: a price increase was announced (subtype `PENDING` or `ACCEPTED`).
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    /// `RENEWAL_EXTENDED`: the renewal date of one subscription was extended.
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")
    /// `RENEWAL_EXTENSION`: outcome of a mass renewal-date extension (`SUMMARY` or `FAILURE`).
    public static let renewalExtension = Self(rawValue: "RENEWAL_EXTENSION")
    /// `CONSUMPTION_REQUEST`: a refund was requested; Apple asks for consumption data.
    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")
    /// `ONE_TIME_CHARGE`: a one-time purchase (not an auto-renewable subscription).
    public static let oneTimeCharge = Self(rawValue: "ONE_TIME_CHARGE")
    /// `EXTERNAL_PURCHASE_TOKEN`: about an external purchase token (e.g. `UNREPORTED`).
    public static let externalPurchaseToken = Self(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    /// `TEST`: a test notification requested through the API.
    public static let test = Self(rawValue: "TEST")
    /// The values above plus other Apple-documented ones that have no static member here.
    public static let knownValues: Set<String> = [
        "SUBSCRIBED", "DID_RENEW", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "DID_FAIL_TO_RENEW",
        "GRACE_PERIOD_EXPIRED", "EXPIRED", "REFUND", "REFUND_DECLINED", "REFUND_REVERSED", "REVOKE", "UNCLAIM_SEATS",
        "OFFER_REDEEMED", "PRICE_INCREASE", "RENEWAL_EXTENDED", "RENEWAL_EXTENSION", "CONSUMPTION_REQUEST",
        "ONE_TIME_CHARGE", "EXTERNAL_PURCHASE_TOKEN", "TEST", "METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE",
        "RESCIND_CONSENT",
    ]
}

/// `subtype` of App Store Server Notifications V2.
public struct NotificationSubtype: OpenStringEnum {
    /// The value exactly as Apple sent it.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `INITIAL_BUY`: first purchase of the subscription (with `SUBSCRIBED`).
    public static let initialBuy = Self(rawValue: "INITIAL_BUY")
    /// `RESUBSCRIBE`: the customer subscribed again after it lapsed (with `SUBSCRIBED`).
    public static let resubscribe = Self(rawValue: "RESUBSCRIBE")
    /// `UPGRADE`: an upgrade that takes effect immediately.
    public static let upgrade = Self(rawValue: "UPGRADE")
    /// `DOWNGRADE`: a downgrade that takes effect at the next renewal.
    public static let downgrade = Self(rawValue: "DOWNGRADE")
    /// `AUTO_RENEW_ENABLED`: auto-renew was turned back on.
    public static let autoRenewEnabled = Self(rawValue: "AUTO_RENEW_ENABLED")
    /// `AUTO_RENEW_DISABLED`: auto-renew was turned off (cancelled).
    public static let autoRenewDisabled = Self(rawValue: "AUTO_RENEW_DISABLED")
    /// `VOLUNTARY`: expired after the customer turned off auto-renew.
    public static let voluntary = Self(rawValue: "VOLUNTARY")
    /// `BILLING_RETRY`: expired after the billing retry period ended without a renewal.
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    /// `PRICE_INCREASE`: expired because the customer did not consent to a price increase.
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    /// `GRACE_PERIOD`: a renewal failed and the subscription is in its billing grace period.
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    /// `BILLING_RECOVERY`: renewed after an earlier billing failure (with `DID_RENEW`).
    public static let billingRecovery = Self(rawValue: "BILLING_RECOVERY")
    /// `PENDING`: the customer has not yet answered a price increase.
    public static let pending = Self(rawValue: "PENDING")
    /// `ACCEPTED`: the customer consented to a price increase (or did not need to).
    public static let accepted = Self(rawValue: "ACCEPTED")
    /// `PRODUCT_NOT_FOR_SALE`: expired because the product was not for sale at renewal.
    public static let productNotForSale = Self(rawValue: "PRODUCT_NOT_FOR_SALE")
    /// `SUMMARY`: a mass renewal-date extension finished (with `RENEWAL_EXTENSION`).
    public static let summary = Self(rawValue: "SUMMARY")
    /// `FAILURE`: a renewal-date extension failed for one subscription.
    public static let failure = Self(rawValue: "FAILURE")
    /// `SEATS`: a seat-based refund (with `REFUND`); the transaction stays valid for the other seats.
    public static let seats = Self(rawValue: "SEATS")
    /// `INCREASE_QUANTITY`: seats were added (type assumed `DID_CHANGE_RENEWAL_PREF`).
    public static let increaseQuantity = Self(rawValue: "INCREASE_QUANTITY")
    /// `DECREASE_QUANTITY`: fewer seats from the next renewal (type assumed `DID_CHANGE_RENEWAL_PREF`).
    public static let decreaseQuantity = Self(rawValue: "DECREASE_QUANTITY")
    /// The values above plus other Apple-documented ones that have no static member here.
    public static let knownValues: Set<String> = [
        "INITIAL_BUY", "RESUBSCRIBE", "UPGRADE", "DOWNGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED",
        "VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD", "BILLING_RECOVERY", "PENDING", "ACCEPTED",
        "PRODUCT_NOT_FOR_SALE", "SUMMARY", "FAILURE", "UNREPORTED", "ACTIVE_TOKEN_REMINDER", "CREATED",
        "SEATS", "INCREASE_QUANTITY", "DECREASE_QUANTITY",
    ]
}

/// `inAppOwnershipType` of a transaction.
public struct InAppOwnershipType: OpenStringEnum {
    /// The value exactly as Apple sent it.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `PURCHASED`: the customer bought the transaction themselves.
    public static let purchased = Self(rawValue: "PURCHASED")
    /// `FAMILY_SHARED`: access shared by a family member through Family Sharing.
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")
    /// Access through an organization or a group (Apple-hosted invitee or organization assignee).
    public static let assigned = Self(rawValue: "ASSIGNED")
    /// The values listed above.
    public static let knownValues: Set<String> = ["PURCHASED", "FAMILY_SHARED", "ASSIGNED"]
}

/// `revocationType` of a transaction.
public struct RevocationType: OpenStringEnum {
    /// The value exactly as Apple sent it.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `REFUND_FULL`: the transaction was refunded in full.
    public static let refundFull = Self(rawValue: "REFUND_FULL")
    /// `REFUND_PRORATED`: a partial refund, prorated by `revocationPercentage`.
    public static let refundProrated = Self(rawValue: "REFUND_PRORATED")
    /// `FAMILY_REVOKE`: Family Sharing access was withdrawn.
    public static let familyRevoke = Self(rawValue: "FAMILY_REVOKE")
    /// Removed by the purchaser or the organization (field-notes name; StoreKit: assignmentRevocation).
    public static let assignmentRevoke = Self(rawValue: "ASSIGNMENT_REVOKE")
    /// The values listed above.
    public static let knownValues: Set<String> = ["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE", "ASSIGNMENT_REVOKE"]
}

/// `multiSeatInfo.invitationManagement`: who hosts a group's invitations.
public struct InvitationManagement: OpenStringEnum {
    /// The value exactly as Apple sent it.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Apple-hosted invitations: every member gets an `ASSIGNED` transaction.
    public static let apple = Self(rawValue: "APPLE")
    /// Developer-hosted invitations: members have seat claims, no transaction.
    public static let developer = Self(rawValue: "DEVELOPER")
    /// The values listed above.
    public static let knownValues: Set<String> = ["APPLE", "DEVELOPER"]
}

/// `environment` of a payload or ledger.
public struct AppStoreEnvironment: OpenStringEnum {
    /// The value verbatim (as Apple sent it, or as a ledger is configured).
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `Production`: the live App Store.
    public static let production = Self(rawValue: "Production")
    /// `Sandbox`: Apple's sandbox test environment.
    public static let sandbox = Self(rawValue: "Sandbox")
    /// `Xcode`: StoreKit testing in Xcode.
    public static let xcode = Self(rawValue: "Xcode")
    /// `LocalTesting`: Apple's local testing environment.
    public static let localTesting = Self(rawValue: "LocalTesting")
    /// The values listed above.
    public static let knownValues: Set<String> = ["Production", "Sandbox", "Xcode", "LocalTesting"]
}

/// `additionalTransactionReason` of a transaction.
public struct AdditionalTransactionReason: OpenStringEnum {
    /// The value exactly as Apple sent it.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The period has more than one transaction because seats were added.
    public static let seatAddition = Self(rawValue: "SEAT_ADDITION")
    /// The values listed above.
    public static let knownValues: Set<String> = ["SEAT_ADDITION"]
}

/// Apple's name for an App Store Server API endpoint, without spaces.
public struct APIEndpoint: OpenStringEnum {
    /// The `endpoint` name exactly as recorded in the envelope.
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `GetSeatInfo`: `GET /groups/v1/transactions/{id}/seats`, seat counts and active claims.
    public static let getSeatInfo = Self(rawValue: "GetSeatInfo")
    /// `ClaimSeat`: `POST /groups/v1/transactions/{id}/seats`, claims a seat for a member.
    public static let claimSeat = Self(rawValue: "ClaimSeat")
    /// `UnclaimSeat`: `DELETE …/seats/{seatClaimId}`, releases a seat claim.
    public static let unclaimSeat = Self(rawValue: "UnclaimSeat")
    /// `AssociateSeat`: `POST …/seats/{seatClaimId}/associate`, links a claim to an `appTransactionId`.
    public static let associateSeat = Self(rawValue: "AssociateSeat")
    /// `GetCustomerGroups`: `GET /groups/v1/currentGroups/{id}`, the groups a customer belongs to.
    public static let getCustomerGroups = Self(rawValue: "GetCustomerGroups")
    /// `GetGroupMembers`: `GET /groups/v1/group/{groupId}`, a page of a group's members.
    public static let getGroupMembers = Self(rawValue: "GetGroupMembers")
    /// `GetNotificationHistory`: `POST /inApps/v1/notifications/history`, past notifications.
    public static let getNotificationHistory = Self(rawValue: "GetNotificationHistory")
    /// `GetTransactionHistory`: `GET /inApps/v2/history/{transactionId}`, a customer's signed transactions.
    public static let getTransactionHistory = Self(rawValue: "GetTransactionHistory")
    /// `GetAllSubscriptionStatuses`: `GET /inApps/v1/subscriptions/{transactionId}`, latest statuses.
    public static let getAllSubscriptionStatuses = Self(rawValue: "GetAllSubscriptionStatuses")
    /// `GetTransactionInfo`: `GET /inApps/v1/transactions/{transactionId}`, one signed transaction.
    public static let getTransactionInfo = Self(rawValue: "GetTransactionInfo")
    /// The values listed above.
    public static let knownValues: Set<String> = [
        "GetSeatInfo", "ClaimSeat", "UnclaimSeat", "AssociateSeat", "GetCustomerGroups", "GetGroupMembers",
        "GetNotificationHistory", "GetTransactionHistory", "GetAllSubscriptionStatuses", "GetTransactionInfo",
    ]
}
