import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents

/// Which StoreKit value a StoreKit input carries: what the app sends its server after the person
/// signs in or buys.
///
/// An input is `{"storeKit": {"userId": "u-42", "signedTransaction": "<JWS>"}}` (a transaction's
/// `jwsRepresentation`), or the same with `"signedAppTransaction"` (a signed `AppTransaction`);
/// `userId` is optional. A bare compact JWS whose payload is evidently one of the two
/// (``evident(in:)``) is the same input without a user id: the same event, the same event id.
public enum StoreKitForm: String, Sendable, CaseIterable {
    /// A StoreKit transaction (`JWSTransactionDecodedPayload`, e.g. a purchase's `jwsRepresentation`).
    case transaction
    /// A signed `AppTransaction` (the app's download: `appTransactionId`, `receiptType`, `receiptCreationDate`).
    case appTransaction

    /// The member of the `storeKit` object that holds its JWS.
    public var member: String { self == .transaction ? "signedTransaction" : "signedAppTransaction" }
    /// Where its JWS sits, as verification records and refusals name it (`storeKit.signedTransaction`).
    public var path: String { "storeKit." + member }
    /// The payload member the chain is validated at and the event occurs at: a transaction's
    /// `signedDate`; an `AppTransaction`'s `receiptCreationDate`, as Apple's App Store Server
    /// Library reads it (`AppTransaction.signedDateOptional`), whatever else the payload holds.
    public var dateMember: String { self == .transaction ? "signedDate" : "receiptCreationDate" }
    /// The payload member that names its environment (`environment`; an `AppTransaction`'s `receiptType`).
    var environmentMember: String { self == .transaction ? "environment" : "receiptType" }
    /// "a signed transaction", "a signed AppTransaction".
    var article: String { self == .transaction ? "a signed transaction" : "a signed AppTransaction" }
    /// How `check` and the rejections name it: "a StoreKit transaction", "an AppTransaction".
    public var displayName: String { self == .transaction ? "a StoreKit transaction" : "an AppTransaction" }

    /// The form a verified (or, to route a bare JWS, a decoded) payload evidently is, from its
    /// fields alone; `nil` for a notification (`notificationType` or `notificationUUID`) and for a
    /// payload that names neither form, which stays a notification as before.
    ///
    /// - `transactionId` or `originalTransactionId`: a transaction;
    /// - `receiptType` and `bundleId`, and no transaction id: an `AppTransaction`;
    /// - else a top-level `bundleId` (which no notification has: a notification names its app in
    ///   `data`, `summary`, …) without `receiptType`: a transaction that lacks its ids, refused as
    ///   `missing_transaction_id` rather than read as a notification naming no app.
    public static func evident(in payload: JSONValue) -> StoreKitForm? {
        if payload["notificationType"] != nil || payload["notificationUUID"] != nil { return nil }
        if payload["transactionId"] != nil || payload["originalTransactionId"] != nil { return .transaction }
        guard payload["bundleId"] != nil else { return nil }
        return payload["receiptType"] != nil ? .appTransaction : .transaction
    }
}

extension MessageDecoder {
    /// The longest `storeKit.userId`, in Unicode scalars: at most 1,024 UTF-8 bytes, what the
    /// ledger indexes on every backend (``maxIndexedTextBytes``).
    static let maxUserIdScalars = 256

    /// The members a `storeKit` object may hold.
    private static let storeKitMembers: Set<String> = ["userId", "signedTransaction", "signedAppTransaction"]

    /// Decodes the `storeKit` member of an input (its only member, checked by the caller).
    ///
    /// Refused unless ``InboundMessage/acceptsStoreKit`` (`storekit_not_accepted_here`), then
    /// unless the object holds exactly one JWS member and at most a valid `userId`.
    func decodeStoreKitEnvelope(_ inner: JSONValue, message: InboundMessage) throws(IngestRejection) -> NewEvent {
        guard message.acceptsStoreKit else {
            throw .storeKitNotAcceptedHere(origin: message.origin, source: message.source, what: "a {\"storeKit\": …} input")
        }
        guard case .object(let members) = inner else {
            throw .invalidStoreKit("storeKit is \(Self.describe(inner)), not an object")
        }
        let unexpected = members.keys.filter { !Self.storeKitMembers.contains($0) }
        if !unexpected.isEmpty { throw .unexpectedStoreKitMembers(unexpected) }
        let present = StoreKitForm.allCases.filter { members[$0.member] != nil }
        guard present.count == 1, let form = present.first else {
            throw .invalidStoreKit(present.isEmpty ? "storeKit has neither signedTransaction nor signedAppTransaction"
                                                   : "storeKit has both signedTransaction and signedAppTransaction")
        }
        // Strictly a string, as `signedPayload` is: `stringValue` would also read a number as its digits.
        guard case .string(let jws)? = members[form.member] else {
            throw IngestRejection(code: .notJWS, reason: "not a JWS: \(form.path) is not a string")
        }
        let userId = try Self.userId(members["userId"])
        return try decodeStoreKit(form, jws: jws, userId: userId, raw: message.raw, source: message.source, origin: message.origin)
    }

    /// Decodes a bare JWS that ``bareStoreKitForm(_:)`` routed here: the envelope without a user id.
    func decodeBareStoreKit(_ form: StoreKitForm, jws: String, message: InboundMessage) throws(IngestRejection) -> NewEvent {
        guard message.acceptsStoreKit else {
            throw .storeKitNotAcceptedHere(origin: message.origin, source: message.source, what: "\(form.displayName) (a bare JWS)")
        }
        return try decodeStoreKit(form, jws: jws, userId: nil, raw: message.raw, source: message.source, origin: message.origin)
    }

    /// The StoreKit form of a bare compact JWS, read from its payload **without verifying it**:
    /// only to choose the path (and the date the chain is validated at), which verifies it in full.
    /// `nil` for a notification, a payload naming neither form, or text that is not a readable JWS
    /// (which the notification path then refuses as before).
    static func bareStoreKitForm(_ jws: String) -> StoreKitForm? {
        peekPayload(jws).flatMap(StoreKitForm.evident(in:))
    }

    /// The payload of a compact JWS, decoded but **not verified**; `nil` when it is not readable
    /// (the verifier then refuses the JWS with its precise code).
    static func peekPayload(_ jws: String) -> JSONValue? {
        let parts = jws.utf8.split(separator: UInt8(ascii: "."), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(bytes: ArraySlice(parts[1])),
              let payload = try? JSONValue.parse(bytes), payload.objectValue != nil else { return nil }
        return payload
    }

    /// Refuses a payload that is evidently not `form` (`kind_mismatch`): a notification, or the other form.
    private static func requireForm(_ form: StoreKitForm, of payload: JSONValue, at path: String) throws(IngestRejection) {
        if payload["notificationType"] != nil || payload["notificationUUID"] != nil {
            throw .storeKitKindMismatch(at: path, expected: form, found: "a signed notification")
        }
        if let evident = StoreKitForm.evident(in: payload), evident != form {
            throw .storeKitKindMismatch(at: path, expected: form, found: evident.article)
        }
    }

    /// `storeKit.userId`: absent, or a non-empty string of at most ``maxUserIdScalars`` scalars.
    static func userId(_ value: JSONValue?) throws(IngestRejection) -> String? {
        guard let value else { return nil }
        guard case .string(let text) = value else { throw .invalidUserId("is \(describe(value)), not a string") }
        guard !text.isEmpty else { throw .invalidUserId("is empty") }
        let count = text.unicodeScalars.count
        guard count <= maxUserIdScalars else { throw .invalidUserId("is \(count) characters long") }
        return text
    }

    /// The one event of a StoreKit input.
    ///
    /// The JWS must evidently be the form its member names (`kind_mismatch`), is verified like any
    /// of Apple's (chain to the ledger's roots at the form's ``StoreKitForm/dateMember``, a missing
    /// one refused as `missing_signed_date`; Apple's OIDs; the signature), and must name the
    /// ledger's bundle id and environment (an `AppTransaction` in Production also its app Apple id).
    ///
    /// - Event id: the SHA-256 (lowercase hex) of the canonical JSON of the envelope form,
    ///   `{"storeKit": {"userId"?, "<member>": "<JWS>"}}`, so a bare JWS and the envelope without a
    ///   user id are one event, and posting the same input twice is a duplicate.
    /// - Decoded: `{"storeKit": {"form", "userId"?}, "transactions": [{"path", "payload"}]}` for a
    ///   transaction (projections read it as they read an API response's), or
    ///   `{"storeKit": {"form", "userId"?}, "appTransaction": {…}}`. No JWS string is in it: `raw` holds it.
    /// - Identifiers: `appUserId` when given, the transaction's `originalTransactionId`,
    ///   `transactionId`, `appTransactionId` and `appAccountToken`, or the `AppTransaction`'s `appTransactionId`.
    func decodeStoreKit(_ form: StoreKitForm, jws: String, userId: String?, raw: Data, source: String,
                        origin: EventOrigin) throws(IngestRejection) -> NewEvent {
        let path = form.path
        // The form first, from the payload as written: a value in the wrong member is refused as
        // that (not as, say, the missing date of the form it is not), before any signature check.
        // The verified payload below is parsed from the same bytes, so it is the same form.
        if let peeked = Self.peekPayload(jws) { try Self.requireForm(form, of: peeked, at: path) }
        let verified: VerifiedJWS
        do {
            verified = try verifier.verify(jws, dateMember: form.dateMember, fallbackDate: nil)
        } catch {
            throw IngestRejection(code: RejectionCode(error.failure), reason: "\(path): \(error.description)")
        }
        let payload = verified.payload
        try checkStoreKitIdentity(form, payload, at: path)
        // Verified at this member, so it is present and an integer; typed, not assumed.
        guard let occurredAt = payload[form.dateMember]?.int64Value else {
            throw IngestRejection(code: .missingSignedDate, reason: "\(path): the payload has no \(form.dateMember)")
        }

        var identifiers: Set<EventIdentifier> = []
        if let userId { identifiers.insert(EventIdentifier(.appUserId, userId)) }
        var input: [String: JSONValue] = ["form": .string(form.rawValue)]
        if let userId { input["userId"] = .string(userId) }
        var decoded: [String: JSONValue] = ["storeKit": .object(input)]
        switch form {
        case .transaction:
            let transaction = TransactionPayload(json: payload)
            guard transaction.transactionId != nil || transaction.originalTransactionId != nil else {
                throw .missingTransactionId(at: path)
            }
            identifiers.formUnion(Self.identifiers(of: transaction))
            if let token = transaction.appAccountToken, !token.isEmpty {
                identifiers.insert(EventIdentifier(.appAccountToken, token))
            }
            decoded["transactions"] = .array([.object(["path": .string(path), "payload": payload])])
        case .appTransaction:
            guard let id = payload["appTransactionId"]?.stringValue, !id.isEmpty else { throw .missingAppTransactionId(at: path) }
            identifiers.insert(EventIdentifier(.appTransactionId, id))
            decoded["appTransaction"] = payload
        }

        var envelope: [String: JSONValue] = [form.member: .string(jws)]
        if let userId { envelope["userId"] = .string(userId) }
        let eventId = SHA256Digest.hex(JSONValue.object(["storeKit": .object(envelope)]).canonicalData())
        return NewEvent(eventId: eventId, kind: .storeKit, type: form.rawValue, subtype: nil, status: nil, occurredAt: occurredAt,
                        raw: raw, decoded: .object(decoded), identifiers: identifiers.sorted(),
                        verification: [record(verified, path: path)], source: source, origin: origin)
    }

    /// Bundle id and environment must be present and match the ledger (as Apple's library checks
    /// a transaction and an `AppTransaction`: a missing one does not match); an `AppTransaction`'s
    /// environment is its `receiptType`, and in Production its `appAppleId` must be the ledger's
    /// when the ledger has one.
    private func checkStoreKitIdentity(_ form: StoreKitForm, _ payload: JSONValue, at path: String) throws(IngestRejection) {
        let bundle = payload["bundleId"]?.stringValue
        if bundle != configuration.bundleId {
            throw .bundleMismatch(found: bundle, expected: configuration.bundleId, at: path)
        }
        let environment = payload[form.environmentMember]?.stringValue
        if environment != configuration.environment.rawValue {
            throw .environmentMismatch(found: environment, expected: configuration.environment.rawValue,
                                       at: form == .transaction ? path : "\(path) (\(form.environmentMember))")
        }
        if form == .appTransaction, configuration.environment == .production, let expected = configuration.appAppleId,
           payload["appAppleId"]?.int64Value != expected {
            throw IngestRejection(code: .appAppleIdMismatch,
                                  reason: "app Apple id mismatch: \(path) names \(payload["appAppleId"]?.int64Value.map(String.init) ?? "none"), "
                                      + "ledger expects \(expected)")
        }
    }

    /// "a number", "null", "an array" … for a refusal naming what a member was instead.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

extension MessageDecoder {
    /// Whether `raw` is a StoreKit input, and if so the event `seatledger ingest FILE` would append
    /// for it, or the rejection it would quarantine it with (`seatledger check`); `nil` for anything
    /// else (a notification, an `apiResponse` envelope, text that is neither).
    ///
    /// A StoreKit input is a JSON object with a `storeKit` member, or a bare JWS whose payload is
    /// evidently a StoreKit transaction or `AppTransaction` (``StoreKitForm/evident(in:)``).
    public func checkStoreKit(_ raw: Data, source: String) -> Result<NewEvent, IngestRejection>? {
        let text = String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines.union(["\u{FEFF}"]))
        if text.hasPrefix("{") {
            guard case .object(let members)? = try? JSONValue.parse(Data(text.utf8)), members["storeKit"] != nil else { return nil }
        } else if Self.bareStoreKitForm(text) == nil {
            return nil
        }
        return decode(InboundMessage(raw: raw, source: source, origin: .file)).flatMap { events in
            guard let first = events.first else { return .failure(IngestRejection(code: .emptyMessage, reason: "no event")) }
            return .success(first)
        }
    }
}
