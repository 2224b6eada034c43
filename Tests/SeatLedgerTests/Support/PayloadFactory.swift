import AppStoreModels
import Dispatch
import Foundation
import JWSSigning

/// Mints App Store–style signed messages with the committed test PKI (`Tools/pki`).
///
/// Payload builders return plain `JSONValue`s so a test can tweak any field; `notification(…)`
/// signs the nested transaction / renewal info with the same chain and returns the NDJSON line
/// Apple would POST (`{"signedPayload":"…"}`). Field overrides use `.null` to *remove* a key.
///
/// ```swift
/// let factory = try PayloadFactory()                       // main chain
/// let rogue = try PayloadFactory(prefix: "rogue-")         // untrusted impostor chain
/// let tx = factory.transaction(quantity: 5)
/// let line = try factory.notification(type: "SUBSCRIBED", transaction: tx, renewal: factory.renewal())
/// ```
struct PayloadFactory: Sendable {
    /// 2025-06-01T12:00:00Z — inside every test certificate's validity (except `expired-`).
    static let defaultSignedDate: EpochMillis = 1_748_779_200_000
    static let defaultOriginalTransactionId = "2000000000000001"
    static let defaultAppTransactionId = "705000000000000001"
    static let defaultProductId = "com.example.reps.team.monthly"
    static let day: EpochMillis = 86_400_000

    /// The test-PKI prefix: `""`, `no-leaf-oid-`, `no-int-oid-`, `expired-`, `rogue-`, `p256-`.
    let prefix: String
    /// Signs with `<prefix>leaf.key`; `x5c` holds leaf, intermediate and root.
    let signer: JWSSigner
    /// Default `bundleId` of payloads.
    let bundleId: String
    /// Default `environment` of payloads.
    let environment: String

    /// Loads the signer for `prefix` from `Tools/pki`.
    init(prefix: String = "", bundleId: String = TestLedger.bundleId, environment: String = "Sandbox") throws {
        self.prefix = prefix
        self.signer = try JWSSigner.loadTestPKI(directory: TestPaths.pki, prefix: prefix)
        self.bundleId = bundleId
        self.environment = environment
    }

    // MARK: Signing

    /// The compact JWS of `payload` (canonical JSON), signed by this factory's chain.
    func sign(_ payload: JSONValue) throws -> String {
        try signer.sign(payload: payload)
    }

    /// `{"signedPayload":"<jws>"}`, exactly the body Apple POSTs.
    static func body(signedPayload jws: String) -> String {
        JSONValue.object(["signedPayload": .string(jws)]).canonicalString()
    }

    /// Signs many payloads on all cores (results in input order).
    func signAll(_ payloads: [JSONValue]) throws -> [String] {
        let slots = ResultBox<String>(count: payloads.count)
        let signer = self.signer
        DispatchQueue.concurrentPerform(iterations: payloads.count) { index in
            slots.set(index, Result { try signer.sign(payload: payloads[index]) })
        }
        return try slots.values()
    }

    // MARK: Notifications

    /// A decoded `ResponseBodyV2DecodedPayload` (unsigned); nested `transaction` / `renewal` are
    /// signed with this factory's chain and placed in `data`.
    ///
    /// - Parameters:
    ///   - bundleId, environment: `nil` means the factory default.
    ///   - includeData: `false` leaves out `data` (e.g. `unclaimInfo`-only or `summary` payloads).
    ///   - dataExtra: merged into `data` last (`.null` removes a key), e.g. a tampered `signedTransactionInfo`.
    ///   - extra: merged into the top level last (`.null` removes a key).
    func notificationPayload(
        type: String = "SUBSCRIBED", subtype: String? = nil, uuid: String = UUID().uuidString,
        signedDate: EpochMillis = PayloadFactory.defaultSignedDate, transaction: JSONValue? = nil,
        renewal: JSONValue? = nil, bundleId: String? = nil, environment: String? = nil, appAppleId: Int64? = nil,
        includeData: Bool = true, dataExtra: [String: JSONValue] = [:], unclaimInfo: JSONValue? = nil,
        extra: [String: JSONValue] = [:]
    ) throws -> JSONValue {
        var fields: [String: JSONValue] = [
            "notificationType": .string(type), "notificationUUID": .string(uuid), "signedDate": .int(signedDate),
            "version": "2.0",
        ]
        if let subtype { fields["subtype"] = .string(subtype) }
        if includeData {
            var data: [String: JSONValue] = [
                "bundleId": .string(bundleId ?? self.bundleId), "environment": .string(environment ?? self.environment),
                "bundleVersion": "1.0", "status": 1,
            ]
            if let appAppleId { data["appAppleId"] = .int(appAppleId) }
            if let transaction { data["signedTransactionInfo"] = .string(try sign(transaction)) }
            if let renewal { data["signedRenewalInfo"] = .string(try sign(renewal)) }
            fields["data"] = .object(Self.merge(data, dataExtra))
        }
        if let unclaimInfo { fields["unclaimInfo"] = unclaimInfo }
        return .object(Self.merge(fields, extra))
    }

    /// The signed notification JWS (see ``notificationPayload(type:subtype:uuid:signedDate:transaction:renewal:bundleId:environment:appAppleId:includeData:dataExtra:unclaimInfo:extra:)``).
    func signedNotification(
        type: String = "SUBSCRIBED", subtype: String? = nil, uuid: String = UUID().uuidString,
        signedDate: EpochMillis = PayloadFactory.defaultSignedDate, transaction: JSONValue? = nil,
        renewal: JSONValue? = nil, bundleId: String? = nil, environment: String? = nil, appAppleId: Int64? = nil,
        includeData: Bool = true, dataExtra: [String: JSONValue] = [:], unclaimInfo: JSONValue? = nil,
        extra: [String: JSONValue] = [:]
    ) throws -> String {
        try sign(notificationPayload(type: type, subtype: subtype, uuid: uuid, signedDate: signedDate,
                                     transaction: transaction, renewal: renewal, bundleId: bundleId,
                                     environment: environment, appAppleId: appAppleId, includeData: includeData,
                                     dataExtra: dataExtra, unclaimInfo: unclaimInfo, extra: extra))
    }

    /// The NDJSON line `{"signedPayload":"<jws>"}` of a signed notification.
    func notification(
        type: String = "SUBSCRIBED", subtype: String? = nil, uuid: String = UUID().uuidString,
        signedDate: EpochMillis = PayloadFactory.defaultSignedDate, transaction: JSONValue? = nil,
        renewal: JSONValue? = nil, bundleId: String? = nil, environment: String? = nil, appAppleId: Int64? = nil,
        includeData: Bool = true, dataExtra: [String: JSONValue] = [:], unclaimInfo: JSONValue? = nil,
        extra: [String: JSONValue] = [:]
    ) throws -> String {
        Self.body(signedPayload: try signedNotification(
            type: type, subtype: subtype, uuid: uuid, signedDate: signedDate, transaction: transaction,
            renewal: renewal, bundleId: bundleId, environment: environment, appAppleId: appAppleId,
            includeData: includeData, dataExtra: dataExtra, unclaimInfo: unclaimInfo, extra: extra))
    }

    // MARK: Transactions and renewal info

    /// One multiseat price tier (`price` in milliunits, seats at that price).
    struct PriceTier: Sendable, Hashable {
        var price: Int64
        var quantity: Int64
        var json: JSONValue { ["price": .int(price), "quantity": .int(quantity)] }
    }

    /// `multiSeatInfo` of a transaction.
    struct MultiSeatInfo: Sendable, Hashable {
        var invitationManagement: String? = "DEVELOPER"
        var priceTiers: [PriceTier]? = [PriceTier(price: 9990, quantity: 5)]
        var revokedSeatQuantity: Int64? = nil

        var json: JSONValue {
            var fields: [String: JSONValue] = [:]
            if let invitationManagement { fields["invitationManagement"] = .string(invitationManagement) }
            if let priceTiers { fields["priceTiers"] = .array(priceTiers.map(\.json)) }
            if let revokedSeatQuantity { fields["revokedSeatQuantity"] = .int(revokedSeatQuantity) }
            return .object(fields)
        }
    }

    /// A `JWSTransactionDecodedPayload` with the multiseat fields. `nil` optionals are left out;
    /// `bundleId` / `environment` `nil` mean the factory default.
    func transaction(
        originalTransactionId: String = PayloadFactory.defaultOriginalTransactionId, transactionId: String? = nil,
        appTransactionId: String? = PayloadFactory.defaultAppTransactionId,
        productId: String = PayloadFactory.defaultProductId, inAppOwnershipType: String = "PURCHASED",
        quantity: Int64? = 5, purchaseDate: EpochMillis = PayloadFactory.defaultSignedDate - PayloadFactory.day,
        expiresDate: EpochMillis? = PayloadFactory.defaultSignedDate + 29 * PayloadFactory.day,
        revocationDate: EpochMillis? = nil, revocationType: String? = nil, revocationReason: Int64? = nil,
        multiSeatInfo: MultiSeatInfo? = MultiSeatInfo(), additionalTransactionReason: String? = nil,
        bundleId: String? = nil, environment: String? = nil,
        signedDate: EpochMillis = PayloadFactory.defaultSignedDate, extra: [String: JSONValue] = [:]
    ) -> JSONValue {
        var fields: [String: JSONValue] = [
            "originalTransactionId": .string(originalTransactionId),
            "transactionId": .string(transactionId ?? originalTransactionId),
            "productId": .string(productId), "inAppOwnershipType": .string(inAppOwnershipType),
            "purchaseDate": .int(purchaseDate), "originalPurchaseDate": .int(purchaseDate),
            "bundleId": .string(bundleId ?? self.bundleId), "environment": .string(environment ?? self.environment),
            "signedDate": .int(signedDate), "type": "Auto-Renewable Subscription",
            "subscriptionGroupIdentifier": "21000001", "storefront": "USA", "storefrontId": "143441",
            "transactionReason": "PURCHASE", "currency": "USD", "price": 9990,
        ]
        if let appTransactionId { fields["appTransactionId"] = .string(appTransactionId) }
        if let quantity { fields["quantity"] = .int(quantity) }
        if let expiresDate { fields["expiresDate"] = .int(expiresDate) }
        if let revocationDate { fields["revocationDate"] = .int(revocationDate) }
        if let revocationType { fields["revocationType"] = .string(revocationType) }
        if let revocationReason { fields["revocationReason"] = .int(revocationReason) }
        if let multiSeatInfo { fields["multiSeatInfo"] = multiSeatInfo.json }
        if let additionalTransactionReason { fields["additionalTransactionReason"] = .string(additionalTransactionReason) }
        return .object(Self.merge(fields, extra))
    }

    /// A `JWSRenewalInfoDecodedPayload` with the seat fields. `nil` optionals are left out.
    func renewal(
        originalTransactionId: String = PayloadFactory.defaultOriginalTransactionId,
        productId: String = PayloadFactory.defaultProductId, autoRenewProductId: String? = nil,
        autoRenewStatus: Int64 = 1, renewalQuantity: Int64? = 5, renewalPriceTiers: [PriceTier]? = nil,
        appTransactionId: String? = PayloadFactory.defaultAppTransactionId,
        renewalDate: EpochMillis? = PayloadFactory.defaultSignedDate + 29 * PayloadFactory.day,
        gracePeriodExpiresDate: EpochMillis? = nil, environment: String? = nil,
        signedDate: EpochMillis = PayloadFactory.defaultSignedDate, extra: [String: JSONValue] = [:]
    ) -> JSONValue {
        var fields: [String: JSONValue] = [
            "originalTransactionId": .string(originalTransactionId), "productId": .string(productId),
            "autoRenewProductId": .string(autoRenewProductId ?? productId), "autoRenewStatus": .int(autoRenewStatus),
            "environment": .string(environment ?? self.environment), "signedDate": .int(signedDate),
            "recentSubscriptionStartDate": .int(signedDate - PayloadFactory.day), "currency": "USD",
        ]
        if let renewalQuantity { fields["renewalQuantity"] = .int(renewalQuantity) }
        if let renewalPriceTiers { fields["multiSeatInfo"] = ["renewalPriceTiers": .array(renewalPriceTiers.map(\.json))] }
        if let appTransactionId { fields["appTransactionId"] = .string(appTransactionId) }
        if let renewalDate { fields["renewalDate"] = .int(renewalDate) }
        if let gracePeriodExpiresDate { fields["gracePeriodExpiresDate"] = .int(gracePeriodExpiresDate) }
        return .object(Self.merge(fields, extra))
    }

    // MARK: API responses

    /// The `{"apiResponse": {…}}` envelope object. `environment` `nil` means the factory default;
    /// `extra` is merged into the inner object (`.null` removes a key).
    func apiResponseEnvelope(
        endpoint: String = "GetSeatInfo", method: String = "GET",
        path: String = "/groups/v1/transactions/\(PayloadFactory.defaultOriginalTransactionId)/seats",
        requestBody: JSONValue = .null, status: Int64 = 200, body: JSONValue = [:],
        respondedAt: JSONValue = "2025-06-01T12:00:00.000Z", environment: String? = nil, context: JSONValue? = nil,
        extra: [String: JSONValue] = [:]
    ) -> JSONValue {
        var inner: [String: JSONValue] = [
            "endpoint": .string(endpoint), "method": .string(method), "path": .string(path),
            "requestBody": requestBody, "status": .int(status), "body": body, "respondedAt": respondedAt,
            "environment": .string(environment ?? self.environment),
        ]
        if let context { inner["context"] = context }
        return ["apiResponse": .object(Self.merge(inner, extra))]
    }

    /// The NDJSON line of an `apiResponse` envelope (canonical JSON).
    func apiResponse(
        endpoint: String = "GetSeatInfo", method: String = "GET",
        path: String = "/groups/v1/transactions/\(PayloadFactory.defaultOriginalTransactionId)/seats",
        requestBody: JSONValue = .null, status: Int64 = 200, body: JSONValue = [:],
        respondedAt: JSONValue = "2025-06-01T12:00:00.000Z", environment: String? = nil, context: JSONValue? = nil,
        extra: [String: JSONValue] = [:]
    ) -> String {
        apiResponseEnvelope(endpoint: endpoint, method: method, path: path, requestBody: requestBody, status: status,
                            body: body, respondedAt: respondedAt, environment: environment, context: context,
                            extra: extra).canonicalString()
    }

    // MARK: Hand-made and damaged JWS

    /// A compact JWS with an arbitrary header (e.g. `alg` ES384, no `x5c`), signed with this chain's leaf key.
    func compact(header: JSONValue, payload: JSONValue) throws -> String {
        let input = Base64URL.encode(header.canonicalData()) + "." + Base64URL.encode(payload.canonicalData())
        return input + "." + Base64URL.encode(try signer.signer.sign(Data(input.utf8)))
    }

    /// The header this factory's JWS carry, with `overrides` applied (`.null` removes a key).
    func header(overrides: [String: JSONValue] = [:]) -> JSONValue {
        .object(Self.merge(["alg": "ES256", "x5c": .array(signer.certificateChain.map { .string($0.base64EncodedString()) })],
                           overrides))
    }

    /// `jws` with its payload replaced by `change(payload)` and the original signature kept,
    /// so the signature no longer matches.
    static func tamperingPayload(of jws: String, _ change: (inout [String: JSONValue]) -> Void) throws -> String {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]),
              var object = try JSONValue.parse(bytes).objectValue else {
            throw TestSupportError("not a compact JWS with a JSON object payload")
        }
        change(&object)
        return [parts[0], Base64URL.encode(JSONValue.object(object).canonicalData()), parts[2]].joined(separator: ".")
    }

    /// `a` with `b` merged over it; `.null` values in `b` remove the key.
    static func merge(_ a: [String: JSONValue], _ b: [String: JSONValue]) -> [String: JSONValue] {
        var result = a
        for (key, value) in b {
            if value.isNull { result[key] = nil } else { result[key] = value }
        }
        return result
    }
}

/// Result slots for `concurrentPerform`.
///
/// `@unchecked Sendable`: every slot is written by exactly one iteration under the lock and read
/// only after `concurrentPerform` returned.
private final class ResultBox<T>: @unchecked Sendable {
    private var slots: [Result<T, any Error>?]
    private let lock = NSLock()
    init(count: Int) { slots = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: Result<T, any Error>) { lock.withLock { slots[index] = value } }
    func values() throws -> [T] {
        try lock.withLock { slots }.map { slot in
            guard let slot else { throw TestSupportError("a concurrent slot was never filled") }
            return try slot.get()
        }
    }
}
