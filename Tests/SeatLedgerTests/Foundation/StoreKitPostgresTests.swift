import AppStoreModels
import EventStore
import Foundation
import JWSVerification
import LedgerEvents
import LedgerIntake
import LedgerStorage
import PostgresStore
import PostgresTestSupport
import SeatLedger
import Testing

/// StoreKit inputs on the PostgreSQL engine (a real server started by the test): appended,
/// indexed and folded as on SQLite, and copied to SQLite with the same chain.
@Suite("Ingest: StoreKit inputs on PostgreSQL")
struct StoreKitPostgresTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    @Test("a transaction with a user id and an AppTransaction append on PostgreSQL: identifiers, duplicate, group, deep verify, copy to SQLite")
    func appendOnPostgres() throws {
        let cluster = try PostgresTestCluster()
        let anchors = try TrustAnchor.load(contentsOf: TestPaths.testRoot)
        let configuration = try LedgerConfiguration(bundleId: TestLedger.bundleId, environment: TestLedger.environment, appAppleId: nil)
        _ = try Ledger.create(path: cluster.url(), configuration: configuration, rootCertificates: anchors)
        let ledger = try Ledger.open(path: cluster.url())
        let factory = try PayloadFactory()
        let purchase = PayloadFactory.storeKit(userId: StoreKitIngestTests.userId,
                                               signedTransaction: try factory.sign(StoreKitIngestTests.purchaserTransaction(factory)))
        let app = PayloadFactory.storeKit(userId: StoreKitIngestTests.userId, signedAppTransaction: try factory.sign(factory.appTransaction()))
        func ingest(_ line: String) throws -> MessageOutcome {
            try ledger.ingestBatch([InboundMessage(raw: Data(line.utf8), source: "token app POST /v1/storekit", origin: .appServer)]).1[0]
        }

        #expect(try ingest(purchase) == .appended(positions: [1], duplicatesCarried: 0))
        #expect(try ingest(app) == .appended(positions: [2], duplicatesCarried: 0))
        #expect(try ingest(purchase) == .duplicate(existingPosition: 1))

        let store = ledger.store
        let first = try #require(try store.event(at: 1))
        #expect(first.kind == .storeKit && first.type == "transaction" && first.origin == .appServer)
        #expect(first.raw == Data(purchase.utf8))
        #expect(try store.event(at: 2)?.type == "appTransaction")
        #expect(try store.positions(mentioning: StoreKitIngestTests.userId, kind: .appUserId) == [1, 2])
        #expect(try store.positions(mentioning: PayloadFactory.defaultAppAccountToken, kind: .appAccountToken) == [1])
        #expect(try store.positions(mentioning: PayloadFactory.defaultAppTransactionId, kind: .appTransactionId) == [1, 2])
        #expect(Set(try store.identifiers(at: 2)) == [EventIdentifier(.appUserId, StoreKitIngestTests.userId),
                                                     EventIdentifier(.appTransactionId, PayloadFactory.defaultAppTransactionId)])

        let state = try ledger.groupState(PayloadFactory.defaultOriginalTransactionId, asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day)
        #expect(state.seats.total == 5 && state.status == .active)
        #expect(try store.verifyChain(progress: nil).isIntact)
        let deep = try ledger.verifyDeeply()
        #expect(deep.isClean && deep.eventsChecked == 2, "\(deep.findings)")

        // Copied to SQLite: the same chain, the same decoded events, the same group.
        let directory = try TemporaryDirectory(label: "storekit-pg")
        let sqlite = StoreLocation(directory.path("copy.sqlite"))
        #expect(try LedgerCopy(source: store).run(to: sqlite).copied == 2)
        let copied = try sqlite.open()
        #expect(try copied.head().hash == store.head().hash)
        #expect(try copied.event(at: 1)?.decoded == first.decoded)
        #expect(try Set(copied.identifiers(at: 1)) == Set(store.identifiers(at: 1)))
        let copiedState = try Ledger.open(store: copied).groupState(PayloadFactory.defaultOriginalTransactionId,
                                                                   asOf: PayloadFactory.defaultSignedDate + PayloadFactory.day)
        #expect(copiedState == state)
    }
}
