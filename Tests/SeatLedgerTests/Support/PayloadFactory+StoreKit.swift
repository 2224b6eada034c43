import AppStoreModels
import Foundation

/// StoreKit inputs: what an app sends its server after the person signs in or buys.
extension PayloadFactory {
    /// The `appAccountToken` a purchaser's transaction carries in these tests.
    static let defaultAppAccountToken = "6f1c2b1e-7d0a-4c4e-9a43-3d5c0f7b2a10"

    /// A signed `AppTransaction`'s payload. `nil` optionals are left out; `bundleId` /
    /// `receiptType` `nil` mean the factory's bundle id and environment.
    func appTransaction(
        appTransactionId: String? = PayloadFactory.defaultAppTransactionId, bundleId: String? = nil, receiptType: String? = nil,
        receiptCreationDate: EpochMillis? = PayloadFactory.defaultSignedDate, appAppleId: Int64? = nil,
        extra: [String: JSONValue] = [:]
    ) -> JSONValue {
        var fields: [String: JSONValue] = [
            "bundleId": .string(bundleId ?? self.bundleId), "receiptType": .string(receiptType ?? environment),
            "applicationVersion": "1.2.3", "originalApplicationVersion": "1.0", "originalPurchaseDate": .int(PayloadFactory.defaultSignedDate - 30 * PayloadFactory.day),
            "originalPlatform": "iOS", "deviceVerificationNonce": "48ccfa42-7431-4f22-9908-7e88983e105a",
        ]
        if let appTransactionId { fields["appTransactionId"] = .string(appTransactionId) }
        if let receiptCreationDate { fields["receiptCreationDate"] = .int(receiptCreationDate) }
        if let appAppleId { fields["appAppleId"] = .int(appAppleId) }
        return .object(Self.merge(fields, extra))
    }

    /// The `{"storeKit": {…}}` input (canonical JSON): `userId` when given, and whichever JWS are
    /// given; `extra` is merged into the `storeKit` object (`.null` removes a key), `beside` next to it.
    static func storeKit(userId: String? = nil, signedTransaction: String? = nil, signedAppTransaction: String? = nil,
                         extra: [String: JSONValue] = [:], beside: [String: JSONValue] = [:]) -> String {
        var inner: [String: JSONValue] = [:]
        if let userId { inner["userId"] = .string(userId) }
        if let signedTransaction { inner["signedTransaction"] = .string(signedTransaction) }
        if let signedAppTransaction { inner["signedAppTransaction"] = .string(signedAppTransaction) }
        return JSONValue.object(merge(["storeKit": .object(merge(inner, extra))], beside)).canonicalString()
    }
}
