import AppStoreModels
import EventStore
import Foundation
import LedgerStorage
import Synchronization
import Testing

/// Issue #23 item 4: the busy timeout is set before the first statement at open, so processes
/// sharing a ledger wait for each other's locks instead of failing with "database is locked".
@Suite("Lock contention at open", .serialized)
struct LockContentionTests {
    @Test("opening a ledger while another connection holds an exclusive lock waits instead of failing at PRAGMA application_id")
    func openWaitsForLock() throws {
        // A ledger no connection of this process holds open (a WAL connection keeps a shared lock).
        let directory = try TemporaryDirectory(label: "lock")
        let path = directory.path("ledger.sqlite")
        try CLI.initLedger(db: path)
        let box = HeldConnection(try {
            let holder = try SQLiteConnection(path: path, create: false)
            try holder.execute("PRAGMA locking_mode = EXCLUSIVE")
            try holder.execute("BEGIN EXCLUSIVE")
            try holder.execute("INSERT INTO config(key, value) VALUES ('lock-test', 'x') ON CONFLICT(key) DO UPDATE SET value = excluded.value")
            try holder.execute("COMMIT")  // in EXCLUSIVE locking mode the lock is kept after COMMIT
            return holder
        }())
        let released = Flag()
        let thread = Thread {
            // Keep the lock for a second (longer than any retry without a busy timeout), then close the connection.
            Thread.sleep(forTimeInterval: 1)
            box.close()
            released.value.store(true, ordering: .sequentiallyConsistent)
        }
        thread.start()
        let store = try EventStore.open(at: path, readOnly: true)
        let waited = released.value.load(ordering: .sequentiallyConsistent)
        #expect(waited, "the open must have waited for the lock")
        #expect(try store.eventCount() == 0)
    }

    @Test("4 × 60 concurrent one-message ingest processes with readers alongside: 0 failures, 240 events, chain intact")
    func manyShortIngests() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let payloads = try (0..<240).map { index in
            try factory.notificationPayload(type: "DID_RENEW", uuid: "00000000-0000-4000-8000-\(String(format: "%012d", index))",
                                            signedDate: PayloadFactory.defaultSignedDate + EpochMillis(index))
        }
        let lines = try factory.signAll(payloads).map(PayloadFactory.body(signedPayload:))
        let failures = Mutex<[String]>([])
        let writersLeft = Atomic<Int>(4)
        let readsDone = Atomic<Int>(0)
        let path = test.path
        DispatchQueue.concurrentPerform(iterations: 6) { worker in
            if worker < 4 {
                for index in stride(from: worker, to: 240, by: 4) {
                    do {
                        let result = try CLI.run(["ingest", "--db", path, "--json"], stdin: Data((lines[index] + "\n").utf8))
                        if result.exitCode != 0 { failures.withLock { $0.append("ingest \(index): \(result)") } }
                    } catch { failures.withLock { $0.append("ingest \(index): \(error)") } }
                }
                writersLeft.subtract(1, ordering: .sequentiallyConsistent)
            } else {
                while writersLeft.load(ordering: .sequentiallyConsistent) > 0 {
                    do {
                        let result = try CLI.run([worker == 4 ? "groups" : "events", "--db", path, "--json"])
                        if result.exitCode != 0 { failures.withLock { $0.append("read: \(result)") } }
                        readsDone.add(1, ordering: .sequentiallyConsistent)
                    } catch { failures.withLock { $0.append("read: \(error)") } }
                }
            }
        }
        let failed = failures.withLock { $0 }
        #expect(failed.isEmpty, "\(failed.count) failures, first: \(failed.first ?? "")")
        let reads = readsDone.load(ordering: .sequentiallyConsistent)
        #expect(reads > 0)
        let store = try test.freshStore()
        #expect(try store.eventCount() == 240)
        #expect(try store.verifyChain().isIntact)
    }
}

/// A flag another thread sets. `Sendable`: its only state is an `Atomic`.
final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}

/// A connection another thread closes. `@unchecked Sendable` is safe: the test thread hands it
/// over before starting that thread and never touches it again; `close` runs once, on that thread.
final class HeldConnection: @unchecked Sendable {
    private var connection: SQLiteConnection?
    init(_ connection: SQLiteConnection) { self.connection = connection }
    func close() { connection = nil }
}
