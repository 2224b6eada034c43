import AppStoreModels
import Foundation

/// The app and environment a body says it belongs to, read without verifying anything: only to
/// choose which ledger verifies it. The chosen ledger verifies the signature and checks its own
/// bundle id and environment as for any input, so a false claim is quarantined there and never
/// appended to another app's chain.
struct RoutingClaims: Sendable, Equatable {
    /// The bundle id the body names (`nil`: an envelope naming only its environment).
    let bundleId: String?
    /// The environment it names, when it names one.
    let environment: String?

    /// The claims of Apple's `{"signedPayload": JWS}` (`data`, `summary` or
    /// `externalPurchaseToken`), of a StoreKit input (`{"storeKit": {…}}` or a bare JWS: the
    /// transaction's `bundleId` and `environment`, the AppTransaction's `bundleId` and
    /// `receiptType`), or of an `apiResponse` envelope (its `environment`, and `body.bundleId` when
    /// the body has one); `nil` when the body names neither.
    static func of(_ body: Data) -> RoutingClaims? {
        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let value = try? JSONValue.parse(bytes: Array(text.utf8)), case .object(let members) = value else {
            return payload(ofJWS: text).flatMap(ofStoreKitPayload)
        }
        if let jws = members["signedPayload"]?.stringValue, let payload = payload(ofJWS: jws) {
            for part in ["data", "summary", "externalPurchaseToken"] {
                if let bundleId = payload[part]?["bundleId"]?.stringValue {
                    return RoutingClaims(bundleId: bundleId, environment: payload[part]?["environment"]?.stringValue)
                }
            }
            return nil
        }
        if let storeKit = members["storeKit"] {
            let jws = storeKit["signedTransaction"]?.stringValue ?? storeKit["signedAppTransaction"]?.stringValue
            return jws.flatMap(payload(ofJWS:)).flatMap(ofStoreKitPayload)
        }
        if let envelope = members["apiResponse"] {
            let environment = envelope["environment"]?.stringValue
            let bundleId = envelope["body"]?["bundleId"]?.stringValue
            guard bundleId != nil || environment != nil else { return nil }
            return RoutingClaims(bundleId: bundleId, environment: environment)
        }
        return nil
    }

    /// A transaction's or AppTransaction's claims.
    private static func ofStoreKitPayload(_ payload: JSONValue) -> RoutingClaims? {
        guard let bundleId = payload["bundleId"]?.stringValue else { return nil }
        return RoutingClaims(bundleId: bundleId, environment: payload["environment"]?.stringValue ?? payload["receiptType"]?.stringValue)
    }

    /// The JSON payload of a compact JWS, unverified.
    private static func payload(ofJWS jws: String) -> JSONValue? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]) else { return nil }
        return try? JSONValue.parse(bytes: [UInt8](bytes))
    }
}
