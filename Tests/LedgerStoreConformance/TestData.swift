import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage

/// Events, rejections and configuration for the store tests: synthetic (the store does not verify
/// signatures; the pipeline did that before), but shaped like the real ones, including a
/// notification whose nested JWS strings the store strips from `decoded` and restores from `raw`.
public enum TestData {
    public static func configuration() throws -> LedgerConfiguration {
        try LedgerConfiguration(bundleId: "com.example.seats", environment: .sandbox, appAppleId: nil)
    }

    public static let root = StoredTrustRoot(fingerprint: String(repeating: "ab", count: 32), der: [0x30, 0x82, 0x01, 0x0A],
                                      subject: "CN=SeatLedger Test Root", addedAt: 1_000)

    public static func verification(_ n: Int) -> [VerificationRecord] {
        [VerificationRecord(path: "signedPayload", rootFingerprint: root.fingerprint,
                            intermediateFingerprint: String(repeating: "cd", count: 32),
                            leafFingerprint: String(format: "%064x", n))]
    }

    /// An `apiResponse` event mentioning `originalTransactionId` (and a transaction id of its own).
    public static func apiEvent(_ n: Int, id: String? = nil, originalTransactionId: String = "1000", source: String? = nil,
                         payloadBytes: Int = 0) -> NewEvent {
        let eventId = id ?? "api-\(n)"
        let padding = String(repeating: "x", count: payloadBytes)
        let decoded: JSONValue = [
            "apiResponse": [
                "endpoint": "getTransactionInfo", "status": 200,
                "body": ["originalTransactionId": .string(originalTransactionId), "transactionId": .string("t\(n)"),
                         "note": .string("quote \" backslash \\ tab \t unicode é ✓ \(padding)")],
            ],
        ]
        let raw = Data(#"{"apiResponse":{"n":\#(n),"pad":"\#(padding)"}}"#.utf8)
        return NewEvent(eventId: eventId, kind: .apiResponse, type: "getTransactionInfo", subtype: nil, status: 200,
                        occurredAt: 1_700_000_000_000 + Int64(n) * 1_000, raw: raw, decoded: decoded,
                        identifiers: [EventIdentifier(.originalTransactionId, originalTransactionId),
                                      EventIdentifier(.transactionId, "t\(n)"),
                                      EventIdentifier(.transactionId, "t\(n)")],  // a repeat: indexed once
                        verification: verification(n), source: source ?? "test.ndjson:\(n)", origin: .live)
    }

    /// A notification whose decoded form holds the nested `signedTransactionInfo` JWS string, as the
    /// decoder produces it; the store keeps it only in `raw`.
    public static func notification(_ n: Int, uuid: String? = nil, originalTransactionId: String = "1000") -> NewEvent {
        let transactionJWS = "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(Data(#"{"transactionId":"n\#(n)"}"#.utf8)) + ".c2lnbmF0dXJl"
        let notificationUUID = uuid ?? "00000000-0000-4000-8000-\(String(format: "%012d", n))"
        let payload: JSONValue = [
            "notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY", "notificationUUID": .string(notificationUUID),
            "signedDate": .int(1_700_000_000_000 + Int64(n)),
            "data": ["bundleId": "com.example.seats", "environment": "Sandbox", "signedTransactionInfo": .string(transactionJWS)],
        ]
        let signedPayload = "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(payload.canonicalData()) + ".c2lnbmF0dXJl"
        let raw = Data(#"{"signedPayload":"\#(signedPayload)"}"#.utf8)
        let decoded: JSONValue = [
            "notification": payload,
            "transactionInfo": ["transactionId": .string("n\(n)"), "originalTransactionId": .string(originalTransactionId),
                                "signedDate": .int(1_700_000_000_000 + Int64(n))],
        ]
        return NewEvent(eventId: notificationUUID, kind: .notification, type: "SUBSCRIBED", subtype: "INITIAL_BUY",
                        status: nil, occurredAt: 1_700_000_000_000 + Int64(n), raw: raw, decoded: decoded,
                        identifiers: [EventIdentifier(.notificationUUID, notificationUUID),
                                      EventIdentifier(.originalTransactionId, originalTransactionId),
                                      EventIdentifier(.transactionId, "n\(n)")],
                        verification: verification(n), source: "spool/\(n).json", origin: .live)
    }

    /// A rejected input.
    public static func rejection(_ text: String, code: RejectionCode = .badSignature, source: String = "test.ndjson:99") -> QuarantineItem {
        QuarantineItem(source: source, errorCode: code, reason: "\(code): \(text)", raw: Data(text.utf8))
    }
}

extension LedgerEvent {
    /// Every stored field, for comparing events across stores.
    public var comparable: String {
        [String(position), eventId, kind.rawValue, type ?? "-", subtype ?? "-", status.map(String.init) ?? "-",
         String(occurredAt), String(recordedAt), source, origin.rawValue, raw.base64EncodedString(),
         decoded.canonicalString(), verification.map { $0.json.canonicalString() }.joined(separator: ","),
         hash.base64EncodedString()].joined(separator: "|")
    }
}

extension QuarantineRecord {
    /// Every field, for comparing records across stores.
    public var comparable: String {
        [String(id), String(recordedAt), source, errorCode.rawValue, reason, raw.base64EncodedString(), state,
         resolvedAt.map(String.init) ?? "-", resolution ?? "-"].joined(separator: "|")
    }
}
