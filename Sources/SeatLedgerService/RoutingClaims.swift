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
                  let first = offset(of: UInt8(ascii: "."), in: bytes, from: prefix.count),
                  let second = offset(of: UInt8(ascii: "."), in: bytes, from: first + 1) else { return nil }
            let segment = UnsafeBufferPointer(start: (base + first + 1).assumingMemoryBound(to: UInt8.self), count: second - first - 1)
            guard let payload = Base64URL.decodeBytes(buffer: segment) else { return nil }
            return payload.withUnsafeBytes { payload -> RoutingClaims? in
                guard let bundleId = value(after: bundleIdKey, in: payload) else { return nil }
                return RoutingClaims(bundleId: bundleId, environment: value(after: environmentKey, in: payload))
            }
        }
    }

    private static let prefix: [UInt8] = Array(#"{"signedPayload":""#.utf8)
    private static let bundleIdKey: [UInt8] = Array(#""bundleId":""#.utf8)
    private static let environmentKey: [UInt8] = Array(#""environment":""#.utf8)

    /// The string after the first `key` in `bytes` (up to the next `"`; one without escapes).
    private static func value(after key: [UInt8], in bytes: UnsafeRawBufferPointer) -> String? {
        var from = 0
        while let hit = offset(of: key[0], in: bytes, from: from) {
            if hit + key.count <= bytes.count, key.withUnsafeBytes({ memcmp(bytes.baseAddress! + hit, $0.baseAddress!, key.count) }) == 0 {
                let start = hit + key.count
                guard let end = offset(of: UInt8(ascii: "\""), in: bytes, from: start), end > start,
                      offset(of: UInt8(ascii: "\\"), in: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), from: 0) == nil else { return nil }
                return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            }
            from = hit + 1
        }
        return nil
    }

    /// The offset of the first `byte` in `bytes` at or after `from`.
    private static func offset(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let base = bytes.baseAddress, from < bytes.count, let hit = memchr(base + from, Int32(byte), bytes.count - from) else { return nil }
        return base.distance(to: UnsafeRawPointer(hit))
    }

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
