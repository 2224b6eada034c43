import AppStoreModels
import EventStore
import Foundation
import HTTPServer
import HTTPTestSupport
import JWSSigning
import JWSVerification
import LedgerEvents
import SeatLedger
@testable import SeatLedgerService
import Testing

/// `POST /v1/storekit` (issue #50 item 2): the app server posts what the app sent it; only a token
/// of scope `link` may, and only this route applies StoreKit inputs.
@Suite("serve: POST /v1/storekit", .serialized)
struct StoreKitRouteTests {
    static let signedDate: EpochMillis = 1_748_779_200_000
    static let day: EpochMillis = 86_400_000
    static let purchaser = "2100000000000777"
    static let appTransactionId = "706000000000000777"
    static let token = "0c7d5a9e-5c61-4b7a-9d1e-2f0d1a6b8c3e"

    /// A group purchaser's transaction (5 seats, developer-hosted) with an `appAccountToken`, signed by the test PKI.
    static func signedPurchase() throws -> String {
        let transaction: JSONValue = [
            "originalTransactionId": .string(purchaser), "transactionId": .string(purchaser), "appTransactionId": .string(appTransactionId),
            "appAccountToken": .string(token), "productId": "com.example.reps.team.monthly", "inAppOwnershipType": "PURCHASED", "quantity": 5,
            "purchaseDate": .int(signedDate - day), "originalPurchaseDate": .int(signedDate - day), "expiresDate": .int(signedDate + 29 * day),
            "bundleId": "com.example.reps", "environment": "Sandbox", "signedDate": .int(signedDate), "type": "Auto-Renewable Subscription",
            "transactionReason": "PURCHASE", "multiSeatInfo": ["invitationManagement": "DEVELOPER", "priceTiers": [["price": 9990, "quantity": 5]]],
        ]
        return try JWSSigner.loadTestPKI(directory: Repository.pki).sign(payload: transaction)
    }

    static func body(userId: String?, signedTransaction: String) -> Data {
        var inner: [String: JSONValue] = ["signedTransaction": .string(signedTransaction)]
        if let userId { inner["userId"] = .string(userId) }
        return Data(JSONValue.object(["storeKit": .object(inner)]).canonicalString().utf8)
    }

    @Test("a real serve: 401 without a token, 403 with a read token; 201 appended with the links; 200 duplicate; 400 with the code and quarantine id; the webhook quarantines it; the group is read back with its seats")
    func route() throws {
        let fixture = try LedgerFixture()
        let appServer = try addToken("app-server", scope: "link", db: fixture.path)
        let reader = try addToken("reader", scope: "read", db: fixture.path)
        let serve = try ServeProcess(db: fixture.path, extra: ["--max-body", "65536"], environment: ["SEATLEDGER_NOW": "2025-06-02T12:00:00Z"])
        let client = try RawHTTPClient(port: serve.port)
        let jws = try Self.signedPurchase()
        let purchase = Self.body(userId: "u-42", signedTransaction: jws)
        func post(_ body: Data, token: String?) throws -> RawHTTPResponse {
            try client.request("POST", "/v1/storekit", headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [], body: body)
        }

        let anonymous = try post(purchase, token: nil)
        #expect(try anonymous.status == 401 && json(anonymous)["error"] == "unauthorized", "\(anonymous.text)")
        let wrongScope = try post(purchase, token: reader)
        #expect(wrongScope.status == 403, "\(wrongScope.text)")
        #expect(try json(wrongScope)["message"] == "token reader has scope read; this endpoint needs scope link")

        let appended = try post(purchase, token: appServer)
        #expect(appended.status == 201, "\(appended.text)")
        let canonical = JSONValue.object(["storeKit": ["userId": "u-42", "signedTransaction": .string(jws)]])
        let eventId = SHA256Digest.hex(canonical.canonicalData())
        let links: JSONValue = ["userId": "u-42", "appTransactionId": .string(Self.appTransactionId),
                                "originalTransactionId": .string(Self.purchaser), "appAccountToken": .string(Self.token)]
        #expect(try json(appended) == ["outcome": "appended", "eventId": .string(eventId), "positions": [1], "linked": links])
        // The same keys as the document's captured example.
        #expect(try json(appended).objectValue.map { Set($0.keys) } == APIExamples.storeKitAppended.objectValue.map { Set($0.keys) })

        let duplicate = try post(purchase, token: appServer)
        #expect(duplicate.status == 200, "\(duplicate.text)")
        #expect(try json(duplicate) == ["outcome": "duplicate", "eventId": .string(eventId), "existingPosition": 1, "linked": links])

        // Refused: quarantined with its raw bytes; 400 with the rejection's code, reason and the item's id.
        let emptyUser = Self.body(userId: "", signedTransaction: jws)
        let refused = try post(emptyUser, token: appServer)
        #expect(refused.status == 400, "\(refused.text)")
        let refusal = try json(refused)
        #expect(refusal["error"] == "invalid_user_id")
        #expect(refusal["message"]?.stringValue?.contains("storeKit.userId is empty") == true, "\(refused.text)")
        let quarantineId = try #require(refusal["quarantineId"]?.int64Value)
        // A notification posted here is not applied with this route's origin.
        let notification = try #require(try Notifications.subscribed(count: 1, offset: 900).first)
        let misplaced = try post(notification, token: appServer)
        #expect(try misplaced.status == 400 && json(misplaced)["error"] == "not_storekit_input", "\(misplaced.text)")
        #expect(try json(misplaced)["message"]?.stringValue?.contains("POST /notifications") == true)
        // Over --max-body: 413, nothing stored.
        let huge = try post(Data(repeating: UInt8(ascii: " "), count: 70_000), token: appServer)
        #expect(try huge.status == 413 && json(huge)["error"] == "body_too_large", "\(huge.text)")

        // The same input posted to the webhook: quarantined (200, as the webhook answers), never applied.
        let webhook = try client.request("POST", "/notifications", body: Self.body(userId: "u-99", signedTransaction: jws))
        #expect(webhook.status == 200)
        #expect(try json(webhook)["result"] == "quarantined" && json(webhook)["errorCode"] == "storekit_not_accepted_here", "\(webhook.text)")

        // The group, from that one input: its seats counted before any notification.
        let group = try client.request("GET", "/v1/groups/\(Self.purchaser)", headers: [("Authorization", "Bearer \(reader)")])
        #expect(group.status == 200, "\(group.text)")
        #expect(try json(group)["seats"]?["total"] == 5 && json(group)["status"] == "ACTIVE", "\(group.text)")

        #expect(serve.stop() == 0)
        let store = try EventStore.open(at: fixture.path, readOnly: true)
        #expect(try store.eventCount() == 1)
        let event = try #require(try store.event(at: 1))
        #expect(event.kind == .storeKit && event.origin == .appServer)
        #expect(event.source == "token app-server POST /v1/storekit")
        #expect(event.raw == purchase)
        #expect(try store.positions(mentioning: "u-42", kind: .appUserId) == [1])
        let quarantined = try store.quarantine(state: nil, limit: 10)
        #expect(quarantined.map(\.errorCode) == ["invalid_user_id", "not_storekit_input", "storekit_not_accepted_here"])
        #expect(quarantined.first { $0.id == quarantineId }?.raw == emptyUser)
        #expect(quarantined.first { $0.errorCode == "not_storekit_input" }?.raw == notification)
        #expect(quarantined.first { $0.errorCode == "storekit_not_accepted_here" }?.source == "webhook")
        // The request log names the token and what became of the input.
        let logged = serve.logLines().compactMap { try? JSONValue.parse(bytes: Array($0.utf8)) }.filter { $0["path"] == "/v1/storekit" }
        #expect(logged.map { $0["status"] } == [401, 403, 201, 200, 400, 400, 413], "\(logged)")
        #expect(logged[2]["token"] == "app-server" && logged[2]["outcome"] == "appended" && logged[2]["eventId"] == .string(eventId))
        #expect(logged[4]["outcome"] == "quarantined" && logged[4]["quarantineId"] == .int(quarantineId))
    }

    @Test("503 with Retry-After when nothing could be stored (the pool is closed)")
    func notStored() async throws {
        let fixture = try LedgerFixture()
        let pool = try LedgerPool.open(path: fixture.path, readers: 1)
        let service = try LedgerService(pool: pool, configuration: .init(http: .init(port: 0), ledgerDescription: fixture.path),
                                        log: RequestLog { _ in })
        func post(_ userId: String) async throws -> HTTPResponse {
            // The handler after the token check (which reads the token table, also closed below).
            var fields: [String: JSONValue] = ["token": "app-server"]
            let request = HTTPRequest(method: "POST", path: "/v1/storekit", body: Self.body(userId: userId, signedTransaction: try Self.signedPurchase()))
            let match = try #require(RouteTable.service.match(request))
            do {
                return try await service.receiveStoreKit(match, fields: &fields)
            } catch {
                return error.response
            }
        }
        #expect(try await post("u-42").status == 201)
        await pool.close()
        let closed = try await post("u-43")
        #expect(closed.status == 503, "\(String(decoding: closed.body, as: UTF8.self))")
        #expect(try JSONValue.parse(bytes: Array(closed.body))["error"] == "not_stored")
        #expect(closed.headers.contains { $0.name == "Retry-After" && $0.value == "5" })
        await service.shutdown(drainTimeout: .seconds(5))
    }
}
