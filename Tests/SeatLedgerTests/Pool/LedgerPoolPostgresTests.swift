import AppStoreModels
import Foundation
import JWSVerification
import LedgerStorage
import PostgresStore
import PostgresTestSupport
import SeatLedger
import Testing

/// `LedgerPool` on PostgreSQL: the writer's group commits and the reader connections against a
/// real server started by the test.
@Suite("LedgerPool on PostgreSQL")
struct LedgerPoolPostgresTests {
    /// `postgresql://` locations open in this process, as in the CLI.
    init() { PostgresLedgerEngine.register() }

    @Test("16 concurrent tasks append and read through a pool on PostgreSQL: gap-free, once each, chain intact")
    func concurrentOnPostgres() async throws {
        let cluster = try PostgresTestCluster()
        let anchors = try TrustAnchor.load(contentsOf: TestPaths.testRoot)
        let configuration = try LedgerConfiguration(bundleId: TestLedger.bundleId, environment: TestLedger.environment, appAppleId: nil)
        _ = try Ledger.create(path: cluster.url(), configuration: configuration, rootCertificates: anchors)
        let factory = try PayloadFactory()
        let tasks = 16, perTask = 3
        let inputs = try (0..<tasks).map { task in
            try LedgerPoolTests.notifications(factory, originalTransactionId: "20000000000\(20_000 + task)", count: perTask, label: "pg\(task)")
        }
        let pool = try LedgerPool.open(path: cluster.url(), readers: 2)
        let positions = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for messages in inputs {
                group.addTask {
                    var mine: [Int64] = []
                    for message in messages {
                        guard case .appended(let appended, 0) = try await pool.append(notificationBody: message.body, source: "webhook") else {
                            Issue.record("not appended: \(message.uuid)")
                            continue
                        }
                        mine.append(contentsOf: appended)
                        let seen = try await pool.read { ledger in try ledger.store.event(at: appended[0])?.eventId }
                        #expect(seen == message.uuid)
                    }
                    return mine
                }
            }
            var all: [Int64] = []
            for try await mine in group { all.append(contentsOf: mine) }
            return all
        }
        let total = tasks * perTask
        #expect(positions.sorted() == Array(1...Int64(total)))
        #expect(pool.headPosition == Int64(total))
        #expect(pool.statistics.commits < total, "\(pool.statistics)")
        let chain = try await pool.read { ledger in try ledger.store.verifyChain(progress: nil) }
        #expect(chain.isIntact && chain.eventsChecked == Int64(total))
        await pool.close()
    }
}
