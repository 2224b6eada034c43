import AppStoreModels
import Foundation
import LedgerEvents
import LedgerIntake
import Projections
import SeatLedger
import Testing

/// The app's user ids, linked by StoreKit inputs, answer every read of a person.
@Suite("user-id links: entitlements, member show, the desk's search; conflicts kept, knownAt and retractions honoured")
struct UserIdLinkTests {
    static let t0 = PayloadFactory.defaultSignedDate
    static let day = PayloadFactory.day
    /// An Apple-hosted member of the default group (`ASSIGNED`, its own transaction).
    static let memberOTID = "2000000000000077"
    static let memberApp = "705000000000000077"

    static func line(_ test: TestLedger, _ text: String, origin: EventOrigin = .file) throws -> MessageOutcome {
        try test.ledger.ingestBatch([InboundMessage(raw: Data(text.utf8), source: "app.ndjson:1", origin: origin)]).1[0]
    }

    /// A group bought by the default purchaser, with an Apple-hosted member who joined.
    static func groupWithMember(_ factory: PayloadFactory, _ test: TestLedger) throws -> JSONValue {
        _ = try test.ledger.append(notificationBody: Data(try factory.notification(transaction: factory.transaction(), renewal: factory.renewal()).utf8))
        let member = factory.transaction(originalTransactionId: memberOTID, appTransactionId: memberApp, inAppOwnershipType: "ASSIGNED",
                                         quantity: nil)
        _ = try test.ledger.append(notificationBody: Data(try factory.notification(transaction: member).utf8))
        return member
    }

    @Test("a member's transaction sent with a user id: entitlements, member show --json and audit member answer for the user id")
    func memberByUserId() throws {
        let test = try TestLedger(), factory = try PayloadFactory()
        let member = try Self.groupWithMember(factory, test)
        #expect(throws: PersonNotFound.self) { try test.ledger.entitlements("user-42", asOf: Self.t0) }
        let linked = try Self.line(test, PayloadFactory.storeKit(userId: "user-42", signedTransaction: try factory.sign(member)))
        guard case .appended = linked else { Issue.record("not appended: \(linked)"); return }

        let answer = try test.ledger.entitlements("user-42", asOf: Self.t0 + Self.day)

        EntitlementReadTests.rendersAlike(answer)
        #expect(answer.userIds == ["user-42"])
        #expect(answer.identifiers.contains(Self.memberApp) && answer.identifiers.contains(Self.memberOTID))
        let product = try #require(answer.entitlements.first)
        #expect(product.entitled)
        #expect(product.grants.first?.source == .assignedSeat)
        // Nothing links the seat holder to the purchaser's group yet (no Get Group Members): their own group.
        #expect(product.grants.first?.groupKey == GroupIdentityResolver.unlinkedKey(for: Self.memberOTID))
        #expect(answer.links.count == 1 && answer.links.first?.appTransactionId == Self.memberApp)
        #expect(answer.conflicts.isEmpty)
        // The same answer as asking with Apple's id (but the links and the ids searched).
        let byApple = try test.ledger.entitlements(Self.memberApp, asOf: Self.t0 + Self.day)
        EntitlementReadTests.rendersAlike(byApple)
        #expect(byApple.entitlements == answer.entitlements)
        #expect(byApple.userIds == ["user-42"])

        // member show --json and /v1/members answer for the user id: the member's own entry.
        let memberships = try test.ledger.memberAccessJSON("user-42", asOf: Self.t0 + Self.day)
        #expect(memberships == (try test.ledger.memberAccessJSON(Self.memberApp, asOf: Self.t0 + Self.day)))
        #expect(memberships.arrayValue?.count == 1)
        let audit = try test.ledger.auditMember("user-42", asOf: Self.t0 + Self.day, now: Self.t0 + Self.day)
        #expect(audit.groups.count == 1)
        #expect(audit.links.map(\.userId) == ["user-42"])
        #expect(audit.render(.text).contains("Linked by the app server: user id user-42 ↔ appTransactionId \(Self.memberApp)"))
        #expect(audit.json["links"]?.arrayValue?.count == 1)
        // A person nobody linked keeps the report's contract: no links member.
        let purchaser = try test.ledger.auditMember(PayloadFactory.defaultOriginalTransactionId, asOf: Self.t0, now: Self.t0)
        #expect(purchaser.json["links"] == nil)

        // Known at a moment before the link was recorded: the user id names nobody then.
        let before = try #require(try test.store.event(at: 3)).recordedAt - 1
        #expect(throws: PersonNotFound.self) { try test.ledger.entitlements("user-42", asOf: Self.t0 + Self.day, knownAt: before) }
        #expect(try test.ledger.linkedIdentifiers(of: "user-42", knownAt: before).isEmpty)
    }

    @Test("an AppTransaction links the user id to the appTransactionId; an individual subscription answers through it")
    func appTransactionLink() throws {
        let test = try TestLedger(), factory = try PayloadFactory()
        let solo = factory.transaction(originalTransactionId: "3000000000000001", appTransactionId: "706000000000000001",
                                       productId: "com.example.reps.solo.monthly", quantity: 1, multiSeatInfo: nil)
        _ = try test.ledger.append(notificationBody: Data(try factory.notification(transaction: solo).utf8))
        let app = try factory.sign(factory.appTransaction(appTransactionId: "706000000000000001"))
        guard case .appended = try Self.line(test, PayloadFactory.storeKit(userId: "user-7", signedAppTransaction: app)) else {
            Issue.record("AppTransaction not appended"); return
        }
        let answer = try test.ledger.entitlements("user-7", asOf: Self.t0 + Self.day)
        EntitlementReadTests.rendersAlike(answer)
        #expect(answer.entitlements.map(\.productId) == ["com.example.reps.solo.monthly"])
        #expect(answer.entitlements.first?.entitled == true)
        #expect(answer.entitlements.first?.grants.first?.groupKey == nil)
        #expect(answer.links.first?.appTransactionId == "706000000000000001")
        #expect(answer.links.first?.originalTransactionId == nil)
    }

    @Test("two Apple Accounts for one user id, and one Apple identity for two user ids: both links kept, answered and named")
    func conflicts() throws {
        let test = try TestLedger(), factory = try PayloadFactory()
        let member = try Self.groupWithMember(factory, test)
        let otherAccount = try factory.sign(factory.appTransaction(appTransactionId: "705000000000000099"))
        for text in [PayloadFactory.storeKit(userId: "user-42", signedTransaction: try factory.sign(member)),
                     PayloadFactory.storeKit(userId: "user-42", signedAppTransaction: otherAccount),
                     PayloadFactory.storeKit(userId: "tablet-user", signedTransaction: try factory.sign(member))] {
            guard case .appended = try Self.line(test, text) else { Issue.record("not appended"); return }
        }
        let answer = try test.ledger.entitlements("user-42", asOf: Self.t0 + Self.day)
        EntitlementReadTests.rendersAlike(answer)
        #expect(answer.entitlements.first?.entitled == true)   // never overwritten: the first link still answers
        let kinds = Set(answer.conflicts.map(\.kind))
        #expect(kinds == ["USER_HAS_SEVERAL_APPLE_ACCOUNTS", "APPLE_IDENTITY_HAS_SEVERAL_USERS"])
        #expect(answer.conflicts.first { $0.kind == "USER_HAS_SEVERAL_APPLE_ACCOUNTS" }?.linkedTo == ["705000000000000077", "705000000000000099"])
        #expect(answer.conflicts.first { $0.kind == "APPLE_IDENTITY_HAS_SEVERAL_USERS" }?.linkedTo == ["tablet-user", "user-42"])
        // The other user id answers the same entitlement.
        let tablet = try test.ledger.entitlements("tablet-user", asOf: Self.t0 + Self.day)
        EntitlementReadTests.rendersAlike(tablet)
        #expect(tablet.entitlements == answer.entitlements)
        let text = try test.ledger.auditMember("user-42", asOf: Self.t0 + Self.day, now: Self.t0 + Self.day).render(.text)
        #expect(text.contains("Note: user id user-42 is linked to several Apple Accounts: 705000000000000077, 705000000000000099 (all kept and answered)"))
    }

    @Test("a retracted link no longer resolves the user id")
    func retractedLink() throws {
        let test = try TestLedger(), factory = try PayloadFactory()
        let member = try Self.groupWithMember(factory, test)
        guard case .appended(let positions, _) = try Self.line(test, PayloadFactory.storeKit(userId: "user-42", signedTransaction: try factory.sign(member))),
              let position = positions.first else { Issue.record("not appended"); return }
        let eventId = try #require(try test.store.event(at: position)).eventId
        #expect(Set(try test.ledger.linkedIdentifiers(of: "user-42")).isSuperset(of: [Self.memberApp, Self.memberOTID]))
        _ = try test.ledger.retract(eventId, reason: "sent for the wrong account", by: "test")
        #expect(try test.ledger.linkedIdentifiers(of: "user-42").isEmpty)
        #expect(throws: PersonNotFound.self) { try test.ledger.entitlements("user-42", asOf: Self.t0 + Self.day) }
    }
}
