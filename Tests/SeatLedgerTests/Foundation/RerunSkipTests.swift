import Foundation
import LedgerIntake
import LedgerStorage
import PostgresStore
import PostgresTestSupport
import SeatLedger
import Testing

/// A re-run of an ingest skips the lines whose exact bytes are already stored: it reports them
/// as duplicates without verifying them again; any other line is verified as before.
@Suite("Re-run skips stored bytes")
struct RerunSkipTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    /// Ingests three notifications, makes verification fail for every message (the ledger now
    /// expects another app), reopens with `reopen`, and ingests them again with a fourth line that
    /// reuses a stored uuid with other bytes: the three are duplicates, the fourth is verified.
    static func check(_ ledger: Ledger, reopen: () throws -> Ledger) throws {
        let factory = try PayloadFactory()
        let lines = try (0..<3).map { index in
            try factory.notification(type: "DID_RENEW", uuid: "rerun-\(index)", signedDate: PayloadFactory.defaultSignedDate + Int64(index),
                                     transaction: factory.transaction(originalTransactionId: "2000000000004242",
                                                                      transactionId: "200000000000424\(index)"))
        }
        let messages = lines.map { InboundMessage(raw: Data($0.utf8), source: "run", origin: .file) }
        #expect(try ledger.ingest(messages).summary.appended == 3)
        try ledger.store.setConfigValue("bundle_id", "com.other.app")
        let reopened = try reopen()
        #expect(reopened.configuration.bundleId == "com.other.app")

        let resigned = try factory.notification(type: "DID_RENEW", uuid: "rerun-1", signedDate: PayloadFactory.defaultSignedDate + 99)
        let again = try reopened.ingest(messages + [InboundMessage(raw: Data(resigned.utf8), source: "rerun", origin: .file)])
        #expect(again.summary.duplicates == 3)
        #expect(again.summary.appended == 0)
        #expect(again.summary.quarantined == 1)
        #expect(Array(again.outcomes.prefix(3)) == [.duplicate(existingPosition: 1), .duplicate(existingPosition: 2), .duplicate(existingPosition: 3)])
        guard case .quarantined(_, let rejection) = again.outcomes[3] else {
            Issue.record("the re-signed line was not verified: \(again.outcomes[3])")
            return
        }
        #expect(rejection.code == "bundle_mismatch")
        #expect(try reopened.store.eventCount() == 3)
    }

    @Test("SQLite: stored lines come back as duplicates without verification; a line reusing a stored uuid with other bytes is verified")
    func onSQLite() throws {
        let test = try TestLedger()
        try Self.check(test.ledger) { try Ledger.open(path: test.path) }
    }

    @Test("the same on PostgreSQL")
    func onPostgres() throws {
        let cluster = try PostgresTestCluster()
        let template = try TestLedger()
        let url = cluster.url()
        let store = try StoreLocation(url).create(configuration: template.store.configuration(), roots: template.store.trustRoots())
        try Self.check(try Ledger.open(store: store)) { try Ledger.open(path: url) }
    }
}
