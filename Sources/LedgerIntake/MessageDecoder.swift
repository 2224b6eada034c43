import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerStorage

/// Turns one inbound message into verified, decoded events, or a rejection.
///
/// Pure apart from signature checks: no store access, safe to run on many threads at once.
/// A notification yields one event; an `apiResponse` envelope yields its own event plus, for
/// Get Notification History, one event per notification it carries; a StoreKit input
/// (`MessageDecoder+StoreKit.swift`) yields one event.
public struct MessageDecoder: Sendable {
    /// The verifier holding the ledger's trust roots.
    public let verifier: SignedPayloadVerifier
    /// The ledger's bundle id / environment / app Apple id.
    public let configuration: LedgerConfiguration

    /// Creates a decoder.
    public init(verifier: SignedPayloadVerifier, configuration: LedgerConfiguration) {
        self.verifier = verifier
        self.configuration = configuration
    }

    /// Decodes `message`: the events it yields (first is its own), or why it was refused.
    public func decode(_ message: InboundMessage) -> Result<[NewEvent], IngestRejection> {
        if let rejection = message.preRejection { return .failure(rejection) }
        do {
            // Facts-only identifiers are checked by `prepare`, which derives the facts.
            return Self.refusingUnstorableText(.success(try decodeThrowing(message)), facts: nil)
        } catch {
            return .failure(error)
        }
    }

    private func decodeThrowing(_ message: InboundMessage) throws(IngestRejection) -> [NewEvent] {
        // The form Apple posts, read in place: no copy of the (often 15 KB) body before the JWS string.
        if let jws = Self.plainSignedPayload(in: message.raw) {
            return [try decodeNotification(jws: jws, raw: message.raw, source: message.source, origin: message.origin)]
        }
        let bytes = [UInt8](message.raw)
        var start = bytes.withUnsafeBufferPointer { Self.byteOrderMarkLength($0) }, end = bytes.count
        while start < end, Self.isSpace(bytes[start]) { start += 1 }
        while end > start, Self.isSpace(bytes[end - 1]) { end -= 1 }
        guard start < end else { throw IngestRejection(code: .emptyMessage, reason: "empty message") }
        // A compact JWS is base64url and dots: a first `{` or `[` can only be JSON.
        if bytes[start] == UInt8(ascii: "{") || bytes[start] == UInt8(ascii: "[") {
            let json: JSONValue
            do {
                json = try JSONValue.parse(bytes: Array(bytes[start..<end]))
            } catch {
                throw .malformedJSON(error.reason)
            }
            guard let members = json.objectValue else {
                throw IngestRejection(code: .unrecognizedMessage,
                                      reason: "a JSON array, not an object with \"signedPayload\", \"apiResponse\" or \"storeKit\"")
            }
            // Exactly one accepted form, or nothing is applied: an object that is both a
            // notification and an envelope (or carries anything else) would otherwise be stored
            // as a verified notification whose raw bytes hold unsigned, never-applied data.
            if members.count > 1, members["signedPayload"] != nil || members["apiResponse"] != nil || members["storeKit"] != nil {
                throw .unexpectedMembers(members.keys)
            }
            if let signed = json["signedPayload"] {
                // Strictly a string: `stringValue` would also read a number as its digits.
                guard case .string(let jws) = signed else {
                    throw IngestRejection(code: .notJWS, reason: "not a JWS: signedPayload is not a string")
                }
                return [try decodeNotification(jws: jws, raw: message.raw, source: message.source, origin: message.origin)]
            }
            if let inner = json["apiResponse"] {
                // An envelope is unsigned: only a path the operator trusts may apply it.
                guard message.acceptsAPIResponses else { throw .untrustedAPIResponse(origin: message.origin, source: message.source) }
                return try decodeAPIResponse(outer: json, inner: inner, message: message)
            }
            if let inner = json["storeKit"] {
                // From the app (through its server), not from Apple's webhook: only a path that
                // takes StoreKit inputs applies it (`MessageDecoder+StoreKit.swift`).
                return [try decodeStoreKitEnvelope(inner, message: message)]
            }
            throw .unrecognized
        }
        guard let text = String(bytes: bytes[start..<end], encoding: .utf8) else {
            throw IngestRejection(code: .notJWS, reason: "not a JWS: input is not UTF-8 text")
        }
        // A bare JWS whose payload is a StoreKit transaction or AppTransaction, not a notification,
        // is that StoreKit input without a user id.
        if let form = Self.bareStoreKitForm(text) {
            return [try decodeBareStoreKit(form, jws: text, message: message)]
        }
        return [try decodeNotification(jws: text, raw: message.raw, source: message.source, origin: message.origin)]
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// 3 when `bytes` starts with a UTF-8 byte order mark (EF BB BF), else 0.
    ///
    /// Editors on Windows often write one at the start of a file; it is skipped for decoding only
    /// (the raw bytes stored or quarantined keep it), so such a line decodes like the line without it.
    static func byteOrderMarkLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }

    /// The JWS of `raw` when it is Apple's form (``plainSignedPayload(_:)``), ignoring a byte
    /// order mark and surrounding white space; `nil` for any other text.
    package static func plainSignedPayload(in raw: Data) -> String? {
        raw.withUnsafeBytes { bytes -> String? in
            let all = bytes.bindMemory(to: UInt8.self)
            var start = byteOrderMarkLength(all), end = all.count
            while start < end, Self.isSpace(all[start]) { start += 1 }
            while end > start, Self.isSpace(all[end - 1]) { end -= 1 }
            return plainSignedPayload(UnsafeBufferPointer(rebasing: all[start..<end]))
        }
    }

    private static let signedPayloadPrefix = Array(#"{"signedPayload":""#.utf8)
    private static let signedPayloadSuffix = Array(#""}"#.utf8)

    /// The JWS of a body that is exactly `{"signedPayload":"…"}` with a string free of escapes
    /// and quotes (the form Apple posts), without a general JSON parse; `nil` for any other text,
    /// which then takes the general path (and gives the same result for this form).
    package static func plainSignedPayload(_ body: UnsafeBufferPointer<UInt8>) -> String? {
        let prefix = signedPayloadPrefix, suffix = signedPayloadSuffix
        guard body.count > prefix.count + suffix.count, body.starts(with: prefix),
              body[(body.count - suffix.count)...].elementsEqual(suffix) else { return nil }
        let value = UnsafeBufferPointer(rebasing: body[prefix.count..<(body.count - suffix.count)])
        // A quote, backslash or control character inside means another shape: parse it in full.
        guard JSONValue.plainPrefixLength(value) == value.count else { return nil }
        // Invalid UTF-8 takes the general path too, which refuses it as malformed JSON.
        guard JSONValue.isValidUTF8(value) else { return nil }
        return String(decoding: value, as: UTF8.self)
    }

    // MARK: Notifications

    private func verify(_ jws: String, at path: String, fallback: Date) throws(IngestRejection) -> VerifiedJWS {
        do {
            return try verifier.verify(jws, fallbackDate: fallback)
        } catch {
            let prefix = path == "signedPayload" ? "" : "\(path): "
            throw IngestRejection(code: RejectionCode(error.failure), reason: prefix + error.description)
        }
    }

    /// The verification record of a JWS verified at `path`.
    func record(_ verified: VerifiedJWS, path: String) -> VerificationRecord {
        VerificationRecord(path: path, rootFingerprint: verified.rootFingerprint,
                           intermediateFingerprint: verified.intermediateFingerprint,
                           leafFingerprint: verified.leafFingerprint)
    }

    func decodeNotification(jws: String, raw: Data, source: String, origin: EventOrigin) throws(IngestRejection) -> NewEvent {
        let verified = try verify(jws, at: "signedPayload", fallback: Date())
        let payload = NotificationPayload(json: verified.payload)
        try checkAppIdentity(payload)
        guard let uuid = payload.notificationUUID, !uuid.isEmpty else {
            throw IngestRejection(code: .missingNotificationUUID, reason: "notification has no notificationUUID")
        }
        guard let signedDate = payload.signedDate else {
            throw IngestRejection(code: .missingSignedDate, reason: "notification has no signedDate")
        }
        var verification = [record(verified, path: "signedPayload")]
        var decoded: [String: JSONValue] = ["notification": verified.payload]
        var identifiers: Set<EventIdentifier> = [EventIdentifier(.notificationUUID, uuid)]
        let fallback = Timestamp.date(signedDate)
        if let jws = payload.data?.signedTransactionInfo {
            let path = "data.signedTransactionInfo"
            let tx = try verify(jws, at: path, fallback: fallback)
            let transaction = TransactionPayload(json: tx.payload)
            try checkTransactionIdentity(transaction, at: path)
            verification.append(record(tx, path: path))
            decoded["transactionInfo"] = tx.payload
            identifiers.formUnion(Self.identifiers(of: transaction))
        }
        if let jws = payload.data?.signedRenewalInfo {
            let path = "data.signedRenewalInfo"
            let ri = try verify(jws, at: path, fallback: fallback)
            let renewal = RenewalInfoPayload(json: ri.payload)
            if let env = renewal.environment, env != configuration.environment {
                throw .environmentMismatch(found: env.rawValue, expected: configuration.environment.rawValue, at: path)
            }
            verification.append(record(ri, path: path))
            decoded["renewalInfo"] = ri.payload
            if let id = renewal.originalTransactionId { identifiers.insert(EventIdentifier(.originalTransactionId, id)) }
            if let id = renewal.appTransactionId { identifiers.insert(EventIdentifier(.appTransactionId, id)) }
        }
        if let unclaim = payload.unclaimInfo {
            for id in unclaim.unclaimSeatIds { identifiers.insert(EventIdentifier(.seatClaimId, id)) }
            if let id = unclaim.originalTransactionId { identifiers.insert(EventIdentifier(.originalTransactionId, id)) }
        }
        return NewEvent(eventId: uuid, kind: .notification, type: payload.notificationType?.rawValue,
                        subtype: payload.subtype?.rawValue, status: nil, occurredAt: signedDate, raw: raw,
                        decoded: .object(decoded), identifiers: identifiers.sorted(), verification: verification,
                        source: source, origin: origin)
    }

    /// Bundle, environment and (Production) app Apple id must match the ledger.
    ///
    /// The identity comes from the first member of ``NotificationPayload/identityMembers`` the
    /// payload has (`data`, `summary`, `appData`, `externalPurchaseToken`, `unclaimInfo`). The one
    /// exemption: an `UNCLAIM_SEATS` whose only such member is an `unclaimInfo` naming no app at
    /// all is accepted on its trusted signature alone (Apple documents no identity fields there;
    /// see `Events/notifications/UNCLAIM_SEATS.md`). Any other type, or any other identity-bearing
    /// member, is checked as usual.
    private func checkAppIdentity(_ payload: NotificationPayload) throws(IngestRejection) {
        let identity = payload.appIdentity
        if payload.notificationType == .unclaimSeats, let identity, identity.member == "unclaimInfo", identity.namesNoApp {
            return
        }
        let where_ = identity?.member ?? "payload"
        if identity?.bundleId != configuration.bundleId {
            throw .bundleMismatch(found: identity?.bundleId, expected: configuration.bundleId, at: where_)
        }
        if identity?.environment != configuration.environment {
            throw .environmentMismatch(found: identity?.environment?.rawValue, expected: configuration.environment.rawValue,
                                       at: where_)
        }
        if configuration.environment == .production, let expected = configuration.appAppleId,
           identity?.appAppleId != expected {
            throw IngestRejection(code: .appAppleIdMismatch,
                                  reason: "app Apple id mismatch: \(where_) names \(identity?.appAppleId.map(String.init) ?? "none"), ledger expects \(expected)")
        }
    }

    private func checkTransactionIdentity(_ transaction: TransactionPayload, at path: String) throws(IngestRejection) {
        if let bundle = transaction.bundleId, bundle != configuration.bundleId {
            throw .bundleMismatch(found: bundle, expected: configuration.bundleId, at: path)
        }
        if let env = transaction.environment, env != configuration.environment {
            throw .environmentMismatch(found: env.rawValue, expected: configuration.environment.rawValue, at: path)
        }
    }

    static func identifiers(of transaction: TransactionPayload) -> [EventIdentifier] {
        var ids: [EventIdentifier] = []
        if let id = transaction.originalTransactionId { ids.append(EventIdentifier(.originalTransactionId, id)) }
        if let id = transaction.transactionId { ids.append(EventIdentifier(.transactionId, id)) }
        if let id = transaction.appTransactionId { ids.append(EventIdentifier(.appTransactionId, id)) }
        return ids
    }
}
