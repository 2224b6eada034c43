import EventStore
import Foundation
import PostgresClient
import PostgresStore
import PostgresTestSupport
import Testing

/// The two ledger engines the conformance suite runs against.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
}

/// A fresh, empty ledger on one backend, with what keeps it alive (a temporary directory, or a
/// throwaway PostgreSQL cluster) and removed when the fixture goes away.
final class StoreFixture {
    /// The store under test.
    let store: any LedgerStore
    let backend: Backend
    /// The PostgreSQL cluster (PostgreSQL only).
    let cluster: PostgresTestCluster?
    private let directory: String?
    private let sqlitePath: String?

    /// The recording clock every fixture pins, so both backends write the same `recorded_at`.
    static let pinnedNow: Int64 = 1_750_000_000_000

    private init(store: any LedgerStore, backend: Backend, cluster: PostgresTestCluster?, directory: String?, sqlitePath: String?) {
        self.store = store
        self.backend = backend
        self.cluster = cluster
        self.directory = directory
        self.sqlitePath = sqlitePath
        store.clock = { StoreFixture.pinnedNow }
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// A new ledger on `backend` with the test configuration and root.
    static func make(_ backend: Backend, configuration: LedgerConfiguration? = nil,
                     roots: [StoredTrustRoot] = [TestData.root]) throws -> StoreFixture {
        let configuration = try configuration ?? TestData.configuration()
        switch backend {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.path + "/pgstore-test-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/ledger.sqlite"
            let store = try EventStore.create(at: path, configuration: configuration, roots: roots)
            return StoreFixture(store: store, backend: backend, cluster: nil, directory: directory, sqlitePath: path)
        case .postgres:
            let cluster = try PostgresTestCluster()
            let store = try PostgresEventStore.create(url: cluster.url(), configuration: configuration, roots: roots)
            return StoreFixture(store: store, backend: backend, cluster: cluster, directory: nil, sqlitePath: nil)
        }
    }

    /// Another store on the same ledger (a second process, as far as the store can tell).
    func reopen() throws -> any LedgerStore {
        let store: any LedgerStore
        if let cluster {
            store = try PostgresEventStore.open(url: cluster.url())
        } else if let sqlitePath {
            store = try EventStore.open(at: sqlitePath)
        } else {
            throw TestClusterError("the fixture has no location")
        }
        store.clock = { StoreFixture.pinnedNow }
        return store
    }
}
