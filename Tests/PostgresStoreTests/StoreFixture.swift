import EventStore
import Foundation
import LedgerStorage
import LedgerStoreConformance
import PostgresClient
import PostgresStore
import PostgresTestSupport
import Testing

/// The two ledger engines the PostgreSQL tests compare: SQLite (the reference) and PostgreSQL.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible, ConformanceEngine {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
    var name: String { rawValue }

    /// A new ledger: a file in a temporary directory, or a throwaway PostgreSQL cluster.
    func create(configuration: LedgerConfiguration, roots: [StoredTrustRoot]) throws -> EngineLedger {
        switch self {
        case .sqlite:
            let directory = try TemporaryLedgerDirectory()
            let path = directory.path + "/ledger.sqlite"
            let store = try EventStore.create(at: path, configuration: configuration, roots: roots)
            return EngineLedger(store: store, reopen: { try EventStore.open(at: path) },
                                createAgain: { _ = try EventStore.create(at: path, configuration: configuration, roots: []) },
                                keepAlive: directory)
        case .postgres:
            let cluster = try PostgresTestCluster()
            let store = try PostgresEventStore.create(url: cluster.url(), configuration: configuration, roots: roots)
            return EngineLedger(store: store, reopen: { try PostgresEventStore.open(url: cluster.url()) },
                                createAgain: { _ = try PostgresEventStore.create(url: cluster.url(), configuration: configuration, roots: []) },
                                keepAlive: cluster)
        }
    }
}

/// A temporary directory removed when the last reference goes.
final class TemporaryLedgerDirectory {
    let path = FileManager.default.temporaryDirectory.path + "/pgstore-test-\(UUID().uuidString)"

    init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

extension StoreFixture {
    /// A new ledger on `backend` with the test configuration and root.
    static func make(_ backend: Backend, configuration: LedgerConfiguration? = nil,
                     roots: [StoredTrustRoot] = [TestData.root]) throws -> StoreFixture {
        try make(on: backend, configuration: configuration, roots: roots)
    }

    /// The PostgreSQL cluster the ledger lives on (`nil` for SQLite).
    var cluster: PostgresTestCluster? { ledger.keepAlive as? PostgresTestCluster }
}

/// The ``LedgerStoreConformance`` suite on PostgreSQL (SQLite's run is in `EventStoreTests`).
@Suite("LedgerStore conformance on PostgreSQL")
struct PostgresConformanceTests {
    @Test(arguments: LedgerStoreConformance.checks)
    func conformance(_ check: ConformanceCheck) throws { try check.run(Backend.postgres) }
}
