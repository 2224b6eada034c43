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
    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// `notificationType` of App Store Server Notifications V2.
public struct NotificationType: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let subscribed = Self(rawValue: "SUBSCRIBED")
    public static let didRenew = Self(rawValue: "DID_RENEW")
    public static let didChangeRenewalPref = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let expired = Self(rawValue: "EXPIRED")
    public static let refund = Self(rawValue: "REFUND")
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")
    public static let revoke = Self(rawValue: "REVOKE")
    public static let unclaimSeats = Self(rawValue: "UNCLAIM_SEATS")
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")
    public static let renewalExtension = Self(rawValue: "RENEWAL_EXTENSION")
    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")
    public static let oneTimeCharge = Self(rawValue: "ONE_TIME_CHARGE")
    public static let externalPurchaseToken = Self(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    public static let test = Self(rawValue: "TEST")
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
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let initialBuy = Self(rawValue: "INITIAL_BUY")
    public static let resubscribe = Self(rawValue: "RESUBSCRIBE")
    public static let upgrade = Self(rawValue: "UPGRADE")
    public static let downgrade = Self(rawValue: "DOWNGRADE")
    public static let autoRenewEnabled = Self(rawValue: "AUTO_RENEW_ENABLED")
    public static let autoRenewDisabled = Self(rawValue: "AUTO_RENEW_DISABLED")
    public static let voluntary = Self(rawValue: "VOLUNTARY")
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    public static let billingRecovery = Self(rawValue: "BILLING_RECOVERY")
    public static let pending = Self(rawValue: "PENDING")
    public static let accepted = Self(rawValue: "ACCEPTED")
    public static let productNotForSale = Self(rawValue: "PRODUCT_NOT_FOR_SALE")
    public static let summary = Self(rawValue: "SUMMARY")
    public static let failure = Self(rawValue: "FAILURE")
    public static let seats = Self(rawValue: "SEATS")
    public static let increaseQuantity = Self(rawValue: "INCREASE_QUANTITY")
    public static let decreaseQuantity = Self(rawValue: "DECREASE_QUANTITY")
    public static let knownValues: Set<String> = [
        "INITIAL_BUY", "RESUBSCRIBE", "UPGRADE", "DOWNGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED",
        "VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD", "BILLING_RECOVERY", "PENDING", "ACCEPTED",
        "PRODUCT_NOT_FOR_SALE", "SUMMARY", "FAILURE", "UNREPORTED", "ACTIVE_TOKEN_REMINDER", "CREATED",
        "SEATS", "INCREASE_QUANTITY", "DECREASE_QUANTITY",
    ]
}

/// `inAppOwnershipType` of a transaction.
public struct InAppOwnershipType: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let purchased = Self(rawValue: "PURCHASED")
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")
    /// Access through an organization or a group (Apple-hosted invitee or organization assignee).
    public static let assigned = Self(rawValue: "ASSIGNED")
    public static let knownValues: Set<String> = ["PURCHASED", "FAMILY_SHARED", "ASSIGNED"]
}

/// `revocationType` of a transaction.
public struct RevocationType: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let refundFull = Self(rawValue: "REFUND_FULL")
    public static let refundProrated = Self(rawValue: "REFUND_PRORATED")
    public static let familyRevoke = Self(rawValue: "FAMILY_REVOKE")
    /// Removed by the purchaser or the organization (field-notes name; StoreKit: assignmentRevocation).
    public static let assignmentRevoke = Self(rawValue: "ASSIGNMENT_REVOKE")
    public static let knownValues: Set<String> = ["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE", "ASSIGNMENT_REVOKE"]
}

/// `multiSeatInfo.invitationManagement`: who hosts a group's invitations.
public struct InvitationManagement: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Apple-hosted invitations: every member gets an `ASSIGNED` transaction.
    public static let apple = Self(rawValue: "APPLE")
    /// Developer-hosted invitations: members have seat claims, no transaction.
    public static let developer = Self(rawValue: "DEVELOPER")
    public static let knownValues: Set<String> = ["APPLE", "DEVELOPER"]
}

/// `environment` of a payload or ledger.
public struct AppStoreEnvironment: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let production = Self(rawValue: "Production")
    public static let sandbox = Self(rawValue: "Sandbox")
    public static let xcode = Self(rawValue: "Xcode")
    public static let localTesting = Self(rawValue: "LocalTesting")
    public static let knownValues: Set<String> = ["Production", "Sandbox", "Xcode", "LocalTesting"]
}

/// `additionalTransactionReason` of a transaction.
public struct AdditionalTransactionReason: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The period has more than one transaction because seats were added.
    public static let seatAddition = Self(rawValue: "SEAT_ADDITION")
    public static let knownValues: Set<String> = ["SEAT_ADDITION"]
}

/// Apple's name for an App Store Server API endpoint, without spaces.
public struct APIEndpoint: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let getSeatInfo = Self(rawValue: "GetSeatInfo")
    public static let claimSeat = Self(rawValue: "ClaimSeat")
    public static let unclaimSeat = Self(rawValue: "UnclaimSeat")
    public static let associateSeat = Self(rawValue: "AssociateSeat")
    public static let getCustomerGroups = Self(rawValue: "GetCustomerGroups")
    public static let getGroupMembers = Self(rawValue: "GetGroupMembers")
    public static let getNotificationHistory = Self(rawValue: "GetNotificationHistory")
    public static let getTransactionHistory = Self(rawValue: "GetTransactionHistory")
    public static let getAllSubscriptionStatuses = Self(rawValue: "GetAllSubscriptionStatuses")
    public static let getTransactionInfo = Self(rawValue: "GetTransactionInfo")
    public static let knownValues: Set<String> = [
        "GetSeatInfo", "ClaimSeat", "UnclaimSeat", "AssociateSeat", "GetCustomerGroups", "GetGroupMembers",
        "GetNotificationHistory", "GetTransactionHistory", "GetAllSubscriptionStatuses", "GetTransactionInfo",
    ]
}
