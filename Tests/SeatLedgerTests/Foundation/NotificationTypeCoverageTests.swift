import AppStoreModels
import Foundation
import SeatLedger
import Testing

/// Every `notificationType` and `subtype` Apple documents (App Store Server Notifications V2's
/// `notificationType` and `subtype` pages, Apple's App Store Server Library models), plus the
/// multiseat ones (`UNCLAIM_SEATS`, `REFUND`/`SEATS`, `INCREASE_QUANTITY`/`DECREASE_QUANTITY`),
/// signed with the test PKI in the shape Apple sends it: each is appended, none quarantined, and one
/// carrying no group information (no transaction of the group, no `unclaimInfo`) changes no group.
/// The table in `Events/README.md` lists the same rows.
@Suite("notification types: every type and subtype Apple documents is appended; the non-group ones change no group")
struct NotificationTypeCoverageTests {
    /// What a notification carries besides its type (Apple's `responseBodyV2DecodedPayload` holds one of these).
    enum Shape: String, Sendable {
        /// `data` with the group purchaser's signed transaction and renewal info.
        case groupTransaction
        /// `data` with the transaction of a consumable (no `multiSeatInfo`): no group's.
        case otherTransaction
        /// `data` with the app's identity only (`TEST`).
        case dataOnly
        /// `summary` (`RENEWAL_EXTENSION` / `SUMMARY`).
        case summary
        /// `externalPurchaseToken` (`EXTERNAL_PURCHASE_TOKEN`).
        case externalPurchaseToken
        /// `appData` (`RESCIND_CONSENT`).
        case appData
        /// `unclaimInfo` (`UNCLAIM_SEATS`).
        case unclaimInfo

        /// Whether a notification of this shape carries information about a group.
        var concernsGroup: Bool { self == .groupTransaction || self == .unclaimInfo }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let type: String
        let subtype: String?
        let shape: Shape
        var testDescription: String { type + (subtype.map { " / \($0)" } ?? "") + " (\(shape.rawValue))" }
    }

    static func rows(_ type: String, _ subtypes: [String?], _ shape: Shape) -> [Row] {
        subtypes.map { Row(type: type, subtype: $0, shape: shape) }
    }

    /// One row per type and subtype pair Apple documents, and the multiseat ones.
    static let all: [Row] = rows("SUBSCRIBED", ["INITIAL_BUY", "RESUBSCRIBE"], .groupTransaction)
        + rows("DID_CHANGE_RENEWAL_PREF", ["UPGRADE", "DOWNGRADE", nil, "INCREASE_QUANTITY", "DECREASE_QUANTITY"], .groupTransaction)
        + rows("DID_CHANGE_RENEWAL_STATUS", ["AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED"], .groupTransaction)
        + rows("OFFER_REDEEMED", ["UPGRADE", "DOWNGRADE", nil], .groupTransaction)
        + rows("DID_RENEW", [nil, "BILLING_RECOVERY"], .groupTransaction)
        + rows("EXPIRED", ["VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "PRODUCT_NOT_FOR_SALE", nil], .groupTransaction)
        + rows("DID_FAIL_TO_RENEW", ["GRACE_PERIOD", nil], .groupTransaction)
        + rows("GRACE_PERIOD_EXPIRED", [nil], .groupTransaction)
        + rows("PRICE_INCREASE", ["PENDING", "ACCEPTED"], .groupTransaction)
        + rows("REFUND", [nil, "SEATS"], .groupTransaction)
        + rows("REFUND_DECLINED", [nil], .groupTransaction)
        + rows("REFUND_REVERSED", [nil], .groupTransaction)
        + rows("CONSUMPTION_REQUEST", [nil], .otherTransaction)
        + rows("RENEWAL_EXTENDED", [nil], .groupTransaction)
        + rows("RENEWAL_EXTENSION", ["FAILURE"], .groupTransaction) + rows("RENEWAL_EXTENSION", ["SUMMARY"], .summary)
        + rows("REVOKE", [nil], .groupTransaction)
        + rows("ONE_TIME_CHARGE", [nil], .otherTransaction)
        + rows("METADATA_UPDATE", [nil], .groupTransaction)
        + rows("MIGRATION", [nil], .groupTransaction)
        + rows("PRICE_CHANGE", [nil], .groupTransaction)
        + rows("TEST", [nil], .dataOnly)
        + rows("EXTERNAL_PURCHASE_TOKEN", ["CREATED", "ACTIVE_TOKEN_REMINDER", "UNREPORTED"], .externalPurchaseToken)
        + rows("RESCIND_CONSENT", [nil], .appData)
        + rows("UNCLAIM_SEATS", [nil], .unclaimInfo)

    static let purchaser = PayloadFactory.defaultOriginalTransactionId
    static let signedDate = PayloadFactory.defaultSignedDate + PayloadFactory.day
    static let asOf = PayloadFactory.defaultSignedDate + 2 * PayloadFactory.day

    /// The notification of `row`, as Apple would sign it, about the default group.
    static func line(_ row: Row, factory: PayloadFactory, externalPurchaseId: String = "SANDBOX_0000000000000001",
                     appAppleId: Int64? = nil) throws -> String {
        let base = (type: row.type, subtype: row.subtype, uuid: UUID().uuidString, signedDate: signedDate)
        let app: [String: JSONValue] = ["bundleId": .string(factory.bundleId), "appAppleId": .int(appAppleId ?? 1_234_567_890)]
        switch row.shape {
        case .groupTransaction:
            return try factory.notification(type: base.type, subtype: base.subtype, uuid: base.uuid, signedDate: base.signedDate,
                                            transaction: factory.transaction(signedDate: signedDate),
                                            renewal: factory.renewal(signedDate: signedDate), appAppleId: appAppleId)
        case .otherTransaction:
            let coins = factory.transaction(originalTransactionId: "3000000000000001", appTransactionId: "705000000000000009",
                                            productId: "com.example.reps.coins", quantity: 1, expiresDate: nil,
                                            multiSeatInfo: nil, signedDate: signedDate, extra: ["type": "Consumable"])
            return try factory.notification(type: base.type, subtype: base.subtype, uuid: base.uuid, signedDate: base.signedDate,
                                            transaction: coins, appAppleId: appAppleId)
        case .dataOnly:
            return try factory.notification(type: base.type, subtype: base.subtype, uuid: base.uuid, signedDate: base.signedDate,
                                            appAppleId: appAppleId)
        case .summary:
            let summary = app.merging(["environment": .string(factory.environment), "requestIdentifier": "6f1c8e2a-0000-4000-8000-000000000001",
                                       "productId": .string(PayloadFactory.defaultProductId), "storefrontCountryCodes": ["USA"],
                                       "succeededCount": 3, "failedCount": 0]) { $1 }
            return try factory.notification(type: base.type, subtype: base.subtype, uuid: base.uuid, signedDate: base.signedDate,
                                            includeData: false, extra: ["summary": .object(summary)])
        case .externalPurchaseToken:
            let token = app.merging(["externalPurchaseId": .string(externalPurchaseId), "tokenCreationDate": .int(signedDate - 1000),
                                     "tokenType": "ACQUISITION", "tokenExpirationDate": .int(signedDate + 30 * PayloadFactory.day)]) { $1 }
            return try factory.notification(type: base.type, subtype: base.subtype, uuid: base.uuid, signedDate: base.signedDate,
                                            includeData: false, extra: ["externalPurchaseToken": .object(token)])
        case .appData:
            let appTransaction: JSONValue = ["bundleId": .string(factory.bundleId), "receiptType": .string(factory.environment),
                                             "appTransactionId": "705000000000000001", "signedDate": .int(signedDate)]
            let appData = app.merging(["environment": .string(factory.environment),
                                       "signedAppTransactionInfo": .string(try factory.sign(appTransaction))]) { $1 }
            return try factory.notification(type: base.type, subtype: base.subtype, uuid: base.uuid, signedDate: base.signedDate,
                                            includeData: false, extra: ["appData": .object(appData)])
        case .unclaimInfo:
            return try factory.notification(type: base.type, subtype: base.subtype, uuid: base.uuid, signedDate: base.signedDate,
                                            includeData: false,
                                            unclaimInfo: ["unclaimSeatIds": ["0f6d2d0a-8f0e-4b8e-b1a6-3c9d1e2f4a5b"],
                                                          "originalTransactionId": .string(purchaser)])
        }
    }

    @Test("appended, not quarantined; a notification carrying no group information changes no group", arguments: all)
    func appended(_ row: Row) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        // The group: a developer-hosted purchase of 5 seats.
        try test.append(line: try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: factory.transaction(),
                                                       renewal: factory.renewal()))
        let before = try test.ledger.groups(asOf: Self.asOf)
        #expect(before.map(\.groupKey) == [Self.purchaser])
        let outcome = try test.append(line: try Self.line(row, factory: factory))
        guard case .appended(let positions, _) = outcome else {
            Issue.record("\(row.testDescription): \(outcome)")
            return
        }
        let event = try #require(try test.store.event(at: positions[0]))
        #expect(event.type == row.type && event.subtype == row.subtype)
        if row.shape.concernsGroup {
            #expect(try test.ledger.positions(affecting: Self.purchaser).contains(positions[0]), "the group's events include it")
        } else {
            #expect(try test.ledger.groups(asOf: Self.asOf) == before, "\(row.testDescription) changed a group")
            #expect(try !test.ledger.positions(affecting: Self.purchaser).contains(positions[0]))
        }
    }

    @Test("EXTERNAL_PURCHASE_TOKEN: the environment is the externalPurchaseId's (SANDBOX_ prefix: Sandbox, else Production), as Apple's library reads it",
          arguments: ["CREATED", "ACTIVE_TOKEN_REMINDER", "UNREPORTED"])
    func externalPurchaseTokenEnvironment(_ subtype: String) throws {
        let row = Row(type: "EXTERNAL_PURCHASE_TOKEN", subtype: subtype, shape: .externalPurchaseToken)
        let sandbox = try TestLedger()
        let production = try TestLedger(environment: .production, appAppleId: 1_234_567_890)
        let factory = try PayloadFactory()
        for (ledger, id) in [(sandbox, "SANDBOX_0000000000000001"), (production, "0000000000000001")] {
            let outcome = try ledger.append(line: try Self.line(row, factory: factory, externalPurchaseId: id))
            guard case .appended = outcome else { Issue.record("\(id): \(outcome)"); continue }
        }
        // The other environment's token is refused, naming where the environment came from.
        for (ledger, id) in [(sandbox, "0000000000000002"), (production, "SANDBOX_0000000000000002")] {
            let outcome = try ledger.append(line: try Self.line(row, factory: factory, externalPurchaseId: id))
            guard case .quarantined(_, let rejection) = outcome else { Issue.record("\(id): \(outcome)"); continue }
            #expect(rejection.code == "environment_mismatch" && rejection.reason.contains("externalPurchaseToken"), "\(rejection)")
        }
    }
}
