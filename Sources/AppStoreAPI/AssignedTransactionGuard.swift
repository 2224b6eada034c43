import AppStoreModels
import Foundation

/// Refuses, before any request is sent, the endpoints Apple rejects for `ASSIGNED` transactions
/// (Apple-hosted group members and organization seat holders):
///
/// | Endpoint | Apple's refusal |
/// |---|---|
/// | Extend a Subscription Renewal Date | 4030028 `AssignedSubscriptionExtensionIneligibleError`: an assigned seat renews on the purchaser's schedule |
/// | Send Consumption Information (and its V1) | 4000227 `InvalidAssignedTransactionNotSupportedError` |
/// | Set App Account Token | 4000227 `InvalidAssignedTransactionNotSupportedError`: members carry no appAccountToken and none can be set; key them on `appTransactionId` |
///
/// (Codes from the field notes, `/tmp/seeds-summary.md` §2; guard with `inAppOwnershipType != ASSIGNED`.)
/// The only way to build these calls is through this type, so every call path is guarded.
public enum AssignedTransactionGuard {
    /// Extend a Subscription Renewal Date.
    public static let extendSubscriptionRenewalDate = APIEndpoint(rawValue: "ExtendSubscriptionRenewalDate")
    /// Send Consumption Information.
    public static let sendConsumptionInformation = APIEndpoint(rawValue: "SendConsumptionInformation")
    /// Set App Account Token.
    public static let setAppAccountToken = APIEndpoint(rawValue: "SetAppAccountToken")

    /// The guarded endpoints with Apple's error code, error name and reason.
    public static let refusals: [APIEndpoint: (code: Int64, error: String, reason: String)] = [
        extendSubscriptionRenewalDate: (4_030_028, "AssignedSubscriptionExtensionIneligibleError",
                                        "an assigned seat renews on the purchaser's schedule, so its renewal date cannot be extended"),
        sendConsumptionInformation: (4_000_227, "InvalidAssignedTransactionNotSupportedError",
                                     "Apple does not accept consumption information for assigned transactions"),
        setAppAccountToken: (4_000_227, "InvalidAssignedTransactionNotSupportedError",
                             "members have no appAccountToken and none can be set; key the customer on appTransactionId instead"),
    ]

    /// Throws when `endpoint` is guarded and `transaction` is `ASSIGNED`; unguarded endpoints pass.
    public static func check(_ endpoint: APIEndpoint, transaction: TransactionPayload) throws(AssignedTransactionRefusal) {
        guard let refusal = refusals[endpoint], transaction.inAppOwnershipType == .assigned else { return }
        throw AssignedTransactionRefusal(endpoint: endpoint, transactionId: transaction.transactionId ?? transaction.originalTransactionId ?? "?",
                                         errorCode: refusal.code, errorName: refusal.error, reason: refusal.reason)
    }

    /// Extend a Subscription Renewal Date (`PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`),
    /// refused for an `ASSIGNED` transaction (4030028).
    ///
    /// - Parameter transaction: the verified transaction being extended (e.g. from the ledger).
    public static func extendSubscriptionRenewalDate(transaction: TransactionPayload, body: JSONValue) throws(AssignedTransactionRefusal) -> APICall {
        try check(extendSubscriptionRenewalDate, transaction: transaction)
        let id = transaction.originalTransactionId ?? transaction.transactionId ?? ""
        return APICall(endpoint: extendSubscriptionRenewalDate, method: "PUT", family: .classic,
                       relativePath: "/v1/subscriptions/extend/\(AppStoreAPIPaths.segment(id))", body: body, ownershipChecked: true)
    }

    /// Send Consumption Information (`PUT /inApps/v1/transactions/consumption/{transactionId}`),
    /// refused for an `ASSIGNED` transaction (4000227).
    public static func sendConsumptionInformation(transaction: TransactionPayload, body: JSONValue) throws(AssignedTransactionRefusal) -> APICall {
        try check(sendConsumptionInformation, transaction: transaction)
        let id = transaction.transactionId ?? transaction.originalTransactionId ?? ""
        return APICall(endpoint: sendConsumptionInformation, method: "PUT", family: .classic,
                       relativePath: "/v1/transactions/consumption/\(AppStoreAPIPaths.segment(id))", body: body, ownershipChecked: true)
    }

    /// Set App Account Token (`PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`),
    /// refused for an `ASSIGNED` transaction (4000227).
    public static func setAppAccountToken(transaction: TransactionPayload, appAccountToken: String) throws(AssignedTransactionRefusal) -> APICall {
        try check(setAppAccountToken, transaction: transaction)
        let id = transaction.originalTransactionId ?? transaction.transactionId ?? ""
        return APICall(endpoint: setAppAccountToken, method: "PUT", family: .classic,
                       relativePath: "/v1/transactions/\(AppStoreAPIPaths.segment(id))/appAccountToken",
                       body: ["appAccountToken": .string(appAccountToken)], ownershipChecked: true)
    }
}

/// A call refused because its transaction is `ASSIGNED`.
public struct AssignedTransactionRefusal: Error, Sendable, CustomStringConvertible {
    /// The refused endpoint.
    public let endpoint: APIEndpoint
    /// The transaction.
    public let transactionId: String
    /// The error code Apple would answer with.
    public let errorCode: Int64
    /// Apple's error name.
    public let errorName: String
    /// Why Apple refuses.
    public let reason: String

    /// "refusing to call … for ASSIGNED transaction …: Apple answers 4030028 …".
    public var description: String {
        "refusing to call \(endpoint.rawValue) for transaction \(transactionId): it is ASSIGNED (a group member or organization seat), "
            + "and Apple answers \(errorCode) \(errorName): \(reason)"
    }
}
