import AppStoreModels
import Foundation

/// How an event's decoded payload is stored: without what its raw bytes already hold.
///
/// A notification's decoded payload repeats the nested `data.signedTransactionInfo` and
/// `data.signedRenewalInfo` JWS strings (about 10 KB of the 15 KB) next to their decoded forms
/// (`transactionInfo`, `renewalInfo`). The stored form leaves those two strings out; reading the
/// event puts them back from `raw` (the truth), so every reader sees the same decoded payload as
/// before. Facts and projections only need the decoded forms, which stay in the stored text.
///
/// A string is left out only when its decoded sibling is present (the decoder adds the sibling
/// exactly when it verified that string), so ``restore(_:kind:raw:)`` knows what to put back, and
/// decoded payloads stored in full (by older versions) read unchanged.
///
/// ```swift
/// let stored = StoredDecoded.strip(decoded, kind: .notification)        // what event_decoded keeps
/// StoredDecoded.restore(stored, kind: .notification, raw: raw) == decoded  // true
/// ```
public enum StoredDecoded {
    /// Version of the decoder that wrote a store's `event_decoded` rows; bump to re-derive the cache.
    ///
    /// 2: `decoded` is stored without a notification's nested JWS strings (``strip(_:kind:)``);
    /// reads put them back from `raw`. Rows of version 1 hold them and read unchanged.
    public static let decoderVersion: Int64 = 2

    /// The nested JWS members of a notification's `data` that are stored only in `raw`, each with
    /// the top-level member holding its decoded payload.
    static let nested: [(jws: String, decoded: String)] = [
        ("signedTransactionInfo", "transactionInfo"), ("signedRenewalInfo", "renewalInfo"),
    ]

    /// The canonical JSON text to store for an event of `kind`: `strip(decoded, kind:)` rendered,
    /// without building the stripped copy.
    public static func storedText(_ decoded: JSONValue, kind: EventKind) -> String {
        guard kind == .notification, case .object(let top) = decoded, case .object(let notification)? = top["notification"],
              case .object(let data)? = notification["data"] else { return decoded.canonicalString() }
        var paths: [[String]] = []
        for member in nested where top[member.decoded] != nil {
            if case .string? = data[member.jws] { paths.append(["notification", "data", member.jws]) }
        }
        return paths.isEmpty ? decoded.canonicalString() : decoded.canonicalString(omitting: paths)
    }

    /// The form of `decoded` to store for an event of `kind`.
    public static func strip(_ decoded: JSONValue, kind: EventKind) -> JSONValue {
        guard kind == .notification, case .object(var top) = decoded, case .object(var notification)? = top["notification"],
              case .object(var data)? = notification["data"] else { return decoded }
        var changed = false
        for member in nested where top[member.decoded] != nil {
            if case .string? = data[member.jws] {
                data.removeValue(forKey: member.jws)
                changed = true
            }
        }
        guard changed else { return decoded }
        notification["data"] = .object(data)
        top["notification"] = .object(notification)
        return .object(top)
    }

    /// The decoded payload of an event of `kind` from its stored form and its raw bytes (the
    /// inverse of ``strip(_:kind:)``). Returns `stored` unchanged when nothing was left out, or
    /// when `raw` is not available (e.g. empty because only facts are being derived).
    public static func restore(_ stored: JSONValue, kind: EventKind, raw: Data) -> JSONValue {
        guard kind == .notification, !raw.isEmpty, case .object(var top) = stored,
              case .object(var notification)? = top["notification"], case .object(var data)? = notification["data"]
        else { return stored }
        let missing = nested.filter { top[$0.decoded] != nil && data[$0.jws] == nil }
        guard !missing.isEmpty, let original = notificationPayload(raw: raw)?["data"] else { return stored }
        for member in missing {
            if let jws = original[member.jws] { data[member.jws] = jws }
        }
        notification["data"] = .object(data)
        top["notification"] = .object(notification)
        return .object(top)
    }

    /// The payload of the notification JWS in `raw` (`{"signedPayload": "…"}` or a bare JWS),
    /// decoded but not verified: it was verified when the event was appended.
    static func notificationPayload(raw: Data) -> JSONValue? {
        let bytes = [UInt8](raw)
        var start = 0, end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        let jws: [UInt8]
        if bytes[start] == UInt8(ascii: "{") {
            guard let envelope = try? JSONValue.parse(bytes: Array(bytes[start..<end])),
                  let text = envelope["signedPayload"]?.stringValue else { return nil }
            jws = Array(text.utf8)
        } else {
            jws = Array(bytes[start..<end])
        }
        guard let firstDot = jws.firstIndex(of: UInt8(ascii: ".")),
              let secondDot = jws[(firstDot + 1)...].firstIndex(of: UInt8(ascii: ".")),
              let payload = Base64URL.decode(bytes: jws[(firstDot + 1)..<secondDot]) else { return nil }
        return try? JSONValue.parse(payload)
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}
