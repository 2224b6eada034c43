import AppStoreModels
import Foundation
import Projections
import SeatLedger
import Testing

/// `Ledger.entitlements`: per product, group memberships and individual subscriptions alike.
@Suite("entitlements: per product, individual subscribers included")
struct EntitlementReadTests {
    static let day = PayloadFactory.day
    static let t0 = PayloadFactory.defaultSignedDate
    static let individualProduct = "com.example.reps.solo.monthly"

    /// An individual subscription (quantity 1, no `multiSeatInfo`) bought at `t0 - 1 day`, expiring at `t0 + 29 days`.
    static func individual(_ factory: PayloadFactory, otid: String = "3000000000000001", app: String = "706000000000000001",
                           expires: EpochMillis = t0 + 29 * day, transactionId: String? = nil, purchase: EpochMillis = t0 - day,
                           signed: EpochMillis = t0, type: String = "SUBSCRIBED", revocation: (EpochMillis, String)? = nil,
                           renewal: JSONValue? = nil) throws -> String {
        let tx = factory.transaction(originalTransactionId: otid, transactionId: transactionId, appTransactionId: app,
                                     productId: individualProduct, quantity: 1, purchaseDate: purchase, expiresDate: expires,
                                     revocationDate: revocation?.0, revocationType: revocation?.1, multiSeatInfo: nil, signedDate: signed)
        return try factory.notification(type: type, signedDate: signed, transaction: tx, renewal: renewal)
    }

    static func append(_ test: TestLedger, _ lines: [String]) throws {
        for line in lines {
            let outcome = try test.ledger.append(notificationBody: Data(line.utf8))
            guard case .appended = outcome else { throw FixtureFailure("not appended: \(outcome)") }
        }
    }

    /// The fast renderer writes exactly what the JSON tree pretty-prints.
    static func rendersAlike(_ answer: EntitlementAnswer, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(String(decoding: answer.prettyJSON(), as: UTF8.self) == answer.json.prettyString(), sourceLocation: sourceLocation)
    }

    struct FixtureFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test("an individual subscriber is entitled through PURCHASED with no group, until the period end; by any of their ids")
    func individualSubscriber() throws {
        let test = try TestLedger(), factory = try PayloadFactory()
        try Self.append(test, [try Self.individual(factory)])
        for id in ["3000000000000001", "706000000000000001"] {
            let answer = try test.ledger.entitlements(id, asOf: Self.t0 + Self.day)
            Self.rendersAlike(answer)
            let product = try #require(answer.entitlements.first)
            #expect(answer.entitlements.count == 1)
            #expect(product.productId == Self.individualProduct)
            #expect(product.entitled)
            #expect(product.until == Self.t0 + 29 * Self.day)
            #expect(product.since == Self.t0 - Self.day)
            #expect(product.grants.first?.source == .purchased)
            #expect(product.grants.first?.groupKey == nil)
            #expect(answer.bundleId == TestLedger.bundleId && answer.environment == "Sandbox")
        }
        // It forms no group: the group listing stays as it is.
        #expect(try test.ledger.groupKeys(for: "3000000000000001").isEmpty)
        // Before the purchase: known, not entitled (nothing was in force yet).
        let before = try test.ledger.entitlements("3000000000000001", asOf: Self.t0 - 2 * Self.day)
        Self.rendersAlike(before)
        #expect(before.entitlements.isEmpty)
        // After the period with no renewal: not entitled, EXPIRED at the period end.
        let after = try test.ledger.entitlements("3000000000000001", asOf: Self.t0 + 30 * Self.day)
        Self.rendersAlike(after)
        let lapsed = try #require(after.entitlements.first)
        #expect(!lapsed.entitled)
        #expect(lapsed.reason?.reason == .expired)
        #expect(lapsed.reason?.at == Self.t0 + 29 * Self.day)
        #expect(lapsed.until == Self.t0 + 29 * Self.day)
    }

    @Test("a renewal moves the end; a grace period keeps access until the grace end; a full refund ends it with its reason")
    func renewalGraceRefund() throws {
        let test = try TestLedger(), factory = try PayloadFactory()
        let end1 = Self.t0 + 29 * Self.day, end2 = end1 + 30 * Self.day
        try Self.append(test, [
            try Self.individual(factory),
            try Self.individual(factory, expires: end2, transactionId: "3000000000000002", purchase: end1, signed: end1, type: "DID_RENEW"),
        ])
        let renewed = try #require(try test.ledger.entitlements("3000000000000001", asOf: end1 + Self.day).entitlements.first)
        #expect(renewed.entitled && renewed.until == end2)
        #expect(renewed.since == Self.t0 - Self.day)  // one continuous run across the renewal

        // Grace: the renewal after end2 fails with a grace period of 16 days.
        let grace = end2 + 16 * Self.day
        let failed = try factory.notification(
            type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signedDate: end2 + 1000,
            transaction: factory.transaction(originalTransactionId: "3000000000000001", transactionId: "3000000000000002",
                                             appTransactionId: "706000000000000001", productId: Self.individualProduct, quantity: 1,
                                             purchaseDate: end1, expiresDate: end2, multiSeatInfo: nil, signedDate: end2 + 1000),
            renewal: factory.renewal(originalTransactionId: "3000000000000001", productId: Self.individualProduct, renewalQuantity: nil,
                                     gracePeriodExpiresDate: grace, signedDate: end2 + 1000, extra: ["isInBillingRetryPeriod": true]))
        try Self.append(test, [failed])
        let inGrace = try #require(try test.ledger.entitlements("3000000000000001", asOf: end2 + Self.day).entitlements.first)
        #expect(inGrace.entitled)
        #expect(inGrace.until == grace)
        #expect(inGrace.grants.first?.status == .gracePeriod)
        let afterGrace = try #require(try test.ledger.entitlements("3000000000000001", asOf: grace + Self.day).entitlements.first)
        #expect(!afterGrace.entitled)
        #expect(afterGrace.reason?.reason == .gracePeriodExpired)

        // A second subscriber refunded in full: not entitled from the revocation date, reason REFUND_FULL.
        let refundedAt = Self.t0 + 3 * Self.day
        try Self.append(test, [
            try Self.individual(factory, otid: "3000000000000009", app: "706000000000000009"),
            try Self.individual(factory, otid: "3000000000000009", app: "706000000000000009", signed: refundedAt, type: "REFUND",
                                revocation: (refundedAt, "REFUND_FULL")),
        ])
        let refunded = try #require(try test.ledger.entitlements("706000000000000009", asOf: refundedAt + 1).entitlements.first)
        #expect(!refunded.entitled)
        #expect(refunded.reason?.reason == .refundFull)
        #expect(refunded.reason?.at == refundedAt)
        let beforeRefund = try #require(try test.ledger.entitlements("706000000000000009", asOf: refundedAt - 1).entitlements.first)
        #expect(beforeRefund.entitled)
    }

    @Test("a group member and an individual subscription: one entitlement per product, entitled first, each through its source")
    func groupAndIndividual() throws {
        let test = try TestLedger(), factory = try PayloadFactory()
        // The group purchaser (default ids) bought a 5-seat team plan; the same person also holds an
        // individual subscription of another product that expired.
        let team = try factory.notification(type: "SUBSCRIBED", transaction: factory.transaction(), renewal: factory.renewal())
        let solo = try Self.individual(factory, otid: "3000000000000005", app: PayloadFactory.defaultAppTransactionId,
                                       expires: Self.t0 + 2 * Self.day)
        try Self.append(test, [team, solo])
        let answer = try test.ledger.entitlements(PayloadFactory.defaultAppTransactionId, asOf: Self.t0 + 10 * Self.day)
        Self.rendersAlike(answer)
        #expect(answer.entitlements.map(\.productId) == [PayloadFactory.defaultProductId, Self.individualProduct])
        #expect(answer.entitlements.map(\.entitled) == [true, false])
        let group = try #require(answer.entitlements.first?.grants.first)
        #expect(group.source == .purchased)
        #expect(group.groupKey == PayloadFactory.defaultOriginalTransactionId)
        #expect(group.status == .active)
        #expect(answer.entitlements.last?.grants.first?.groupKey == nil)
        #expect(answer.entitlements.last?.reason?.reason == .expired)
        // The same bytes through the JSON contract the CLI and the route print.
        let json = answer.json
        #expect(json["entitlements"]?.arrayValue?.first?["through"]?["source"]?.stringValue == "PURCHASED")
        #expect(json["entitlements"]?.arrayValue?.first?["bundleId"]?.stringValue == TestLedger.bundleId)
        #expect(json["entitlements"]?.arrayValue?.last?["reason"]?["reason"]?.stringValue == "EXPIRED")
    }

    @Test("an identifier nothing names is PersonNotFound")
    func unknown() throws {
        let test = try TestLedger()
        #expect(throws: PersonNotFound.self) { try test.ledger.entitlements("no-such-person", asOf: Self.t0) }
    }

    @Test("the snapshot path and the fold give the same entitlements (knownAt forces the fold)")
    func snapshotEqualsFold() throws {
        let test = try TestLedger(), factory = try PayloadFactory()
        let team = try factory.notification(type: "SUBSCRIBED", transaction: factory.transaction(), renewal: factory.renewal())
        try Self.append(test, [team, try Self.individual(factory)])
        try test.ledger.rebuildProjections()
        for id in [PayloadFactory.defaultAppTransactionId, PayloadFactory.defaultOriginalTransactionId, "3000000000000001"] {
            for asOf in [Self.t0, Self.t0 + 40 * Self.day] {
                let served = try test.ledger.entitlements(id, asOf: asOf)
                Self.rendersAlike(served)
                let folded = try test.ledger.entitlements(id, asOf: asOf, knownAt: .max)
                #expect(served.entitlements == folded.entitlements, "\(id) at \(asOf)")
            }
        }
    }

    @Test("on the sample streams, a person with many sources renders alike through both writers, at every moment asked")
    func manySources() throws {
        let test = try TestLedger()
        let files = try FileManager.default.contentsOfDirectory(at: TestPaths.repoRoot.appendingPathComponent("Events/scenarios"),
                                                                includingPropertiesForKeys: nil).filter { $0.pathExtension == "ndjson" }
        let ingest = try CLI.run(["ingest", "--api-responses", "--db", test.path] + files.map(\.path))
        #expect(ingest.exitCode == 0 || ingest.exitCode == 3, "\(ingest.stderr)")
        try test.reopen()
        var sources = 0
        for moment in ["2026-10-02T00:00:00Z", "2026-10-15T00:00:00Z", "2026-11-20T00:00:00Z"] {
            let asOf = try #require(Timestamp.parse(moment))
            for id in ["m1", "m2", "704000001000000002", "2000004000000001"] {
                let answer = try test.ledger.entitlements(id, asOf: asOf)
                Self.rendersAlike(answer)
                sources = max(sources, answer.entitlements.map(\.grants.count).max() ?? 0)
            }
        }
        #expect(sources > 3, "m1 holds claims in many groups")
    }

    @Test("a family member of an individual subscription is entitled through FAMILY_SHARED until their transaction's end")
    func familySharedIndividual() throws {
        let test = try TestLedger(), factory = try PayloadFactory()
        let family = factory.transaction(originalTransactionId: "3000000000000042", appTransactionId: "706000000000000042",
                                         productId: Self.individualProduct, inAppOwnershipType: "FAMILY_SHARED", quantity: 1,
                                         expiresDate: Self.t0 + 29 * Self.day, multiSeatInfo: nil)
        try Self.append(test, [try Self.individual(factory), try factory.notification(transaction: family)])
        let answer = try test.ledger.entitlements("706000000000000042", asOf: Self.t0 + Self.day)
        Self.rendersAlike(answer)
        let product = try #require(answer.entitlements.first)
        #expect(product.productId == Self.individualProduct && product.entitled)
        #expect(product.grants.first?.source == .familyShared)
        #expect(product.until == Self.t0 + 29 * Self.day)
        let lapsed = try #require(try test.ledger.entitlements("706000000000000042", asOf: Self.t0 + 30 * Self.day).entitlements.first)
        #expect(!lapsed.entitled && lapsed.grants.first?.source == .familyShared)
    }
}
