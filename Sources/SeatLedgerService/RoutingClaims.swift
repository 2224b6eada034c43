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
        if let claims = ofCompactNotification(body) { return claims }
        var bytes = [UInt8](body)
        while let last = bytes.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { bytes.removeLast() }
        let start = bytes.firstIndex { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF || $0 == 0xBB || $0 == 0xBF) } ?? bytes.endIndex
        let trimmed = Array(bytes[start...])
        guard let value = try? JSONValue.parse(bytes: trimmed), case .object(let members) = value else {
            return payload(ofJWS: String(decoding: trimmed, as: UTF8.self)).flatMap(ofStoreKitPayload)
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

    /// Apple's compact form, `{"signedPayload":"<JWS>"}`, read with byte scans: the payload (the
    /// JWS's second segment, between its first two dots) decoded, and its first `"bundleId":"…"`
    /// and `"environment":"…"` taken (nested JWS strings are base64url, so they hold neither).
    /// `nil` when the body is another form, or the payload spells them otherwise (then the
    /// parse decides). Every notification to a service of several ledgers passes here.
    private static func ofCompactNotification(_ body: Data) -> RoutingClaims? {
        body.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> RoutingClaims? in
            guard bytes.count > prefix.count, let base = bytes.baseAddress,
                  prefix.withUnsafeBytes({ memcmp(base, $0.baseAddress!, prefix.count) }) == 0,
                  let payload = ByteScan.jwsPayload(in: bytes, from: prefix.count) else { return nil }
            return payload.withUnsafeBytes { payload -> RoutingClaims? in
                guard let bundleId = ByteScan.stringValue(after: bundleIdKey, in: payload) else { return nil }
                return RoutingClaims(bundleId: bundleId, environment: ByteScan.stringValue(after: environmentKey, in: payload))
            }
        }
    }

    private static let prefix: [UInt8] = Array(#"{"signedPayload":""#.utf8)
    private static let bundleIdKey: [UInt8] = Array(#""bundleId":""#.utf8)
    private static let environmentKey: [UInt8] = Array(#""environment":""#.utf8)

    /// A transaction's or AppTransaction's claims.
    private static func ofStoreKitPayload(_ payload: JSONValue) -> RoutingClaims? {
        guard let bundleId = payload["bundleId"]?.stringValue else { return nil }
        return RoutingClaims(bundleId: bundleId, environment: payload["environment"]?.stringValue ?? payload["receiptType"]?.stringValue)
    }

    /// The JSON payload of a compact JWS, unverified.
    private static func payload(ofJWS jws: String) -> JSONValue? {
        let parts = jws.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(bytes: ArraySlice(parts[1])) else { return nil }
        return try? JSONValue.parse(bytes: [UInt8](bytes))
    }
}
