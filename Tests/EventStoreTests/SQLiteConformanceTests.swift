import EventStore
import Foundation
import LedgerStorage
import LedgerStoreConformance
import Testing

/// The SQLite store as a ``ConformanceEngine``: each ledger a file in a temporary directory.
struct SQLiteEngine: ConformanceEngine {
    var name: String { "sqlite" }

    func create(configuration: LedgerConfiguration, roots: [StoredTrustRoot]) throws -> EngineLedger {
        let directory = try LedgerDirectory()
        let path = directory.path + "/ledger.sqlite"
        let store = try EventStore.create(at: path, configuration: configuration, roots: roots)
        return EngineLedger(store: store, reopen: { try EventStore.open(at: path) },
                            createAgain: { _ = try EventStore.create(at: path, configuration: configuration, roots: []) },
                            keepAlive: directory)
    }
}

/// A temporary directory removed when the last reference goes.
final class LedgerDirectory {
    let path = FileManager.default.temporaryDirectory.path + "/eventstore-test-\(UUID().uuidString)"

    init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The ``LedgerStoreConformance`` suite on SQLite: this target builds without PostgreSQL.
@Suite("LedgerStore conformance on SQLite")
struct SQLiteConformanceTests {
    @Test(arguments: LedgerStoreConformance.checks)
    func conformance(_ check: ConformanceCheck) throws { try check.run(SQLiteEngine()) }
}

/// What the SQLite store's write probe does on disk.
@Suite("SQLite: the write probe reaches the log")
struct SQLiteWriteProbeTests {
    @Test("probeWrite appends a WAL frame and syncs it, as an append does; the application id stays")
    func appendsAFrame() throws {
        let directory = try LedgerDirectory()
        let path = directory.path + "/ledger.sqlite"
        let store = try EventStore.create(at: path, configuration: try TestData.configuration(), roots: [])
        _ = try store.commit(events: [TestData.apiEvent(1)])
        func walBytes() throws -> Int { (try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0 }
        let before = try walBytes()
        try store.probeWrite()
        let after = try walBytes()
        // One 16 KiB page and its 24-byte frame header, unless a checkpoint reset the log meanwhile.
        #expect(after - before == 16_384 + 24, "the WAL went from \(before) to \(after) bytes")
        #expect(try EventStore.open(at: path).head().position == 1)
    }
}
