import AppStoreModels
import EventStore
import Foundation
import LedgerStorage
import SeatLedger
import Testing

/// A long-lived `Ledger` (a server embedding the library) shares the file with other processes
/// (the CLI, another server). Its reads must see their commits and its writes must follow them.
@Suite("Several processes on one ledger")
struct ConcurrentAccessTests {
    @Test("a long-lived Ledger sees events another process appended after its own reads")
    func readsSeeOtherProcessCommits() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: factory.notification(uuid: "mine-1"))
        #expect(try test.eventCount() == 1)          // a read on the long-lived connection
        #expect(try test.store.event(at: 1) != nil)  // and another

        let other = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json"],
                                stdin: Data(try factory.notification(uuid: "theirs-1").utf8))
        #expect(try other.json()["appended"] == 1, "\(other)")

        #expect(try test.eventCount() == 2, "the count must include the other process's commit")
        #expect(try test.store.event(at: 2)?.eventId == "theirs-1")
        #expect(try test.store.event(id: "theirs-1") != nil)
    }

    @Test("a long-lived Ledger appends after another process's commit (no stale head, no busy error)")
    func writesFollowOtherProcessCommits() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: factory.notification(uuid: "mine-1"))
        _ = try test.eventCount()
        _ = try test.store.event(at: 1)

        let other = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json"],
                                stdin: Data(try factory.notification(uuid: "theirs-1").utf8))
        #expect(try other.json()["appended"] == 1, "\(other)")

        let outcome = try test.append(line: factory.notification(uuid: "mine-2"))
        #expect(outcome == .appended(positions: [3], duplicatesCarried: 0))
        let raw = try RawSQLite(path: test.path)
        #expect(try raw.scalarInt("SELECT count(*) FROM events") == 3)
        raw.close()
        let verify = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(verify.exitCode == 0, "\(verify)")
    }

    /// Holds a connection for another thread. `@unchecked Sendable` is safe: the test hands the
    /// connection over once and the main thread does not touch it afterwards.
    final class Handover: @unchecked Sendable {
        let connection: SQLiteConnection
        init(_ connection: SQLiteConnection) { self.connection = connection }
    }

    @Test("a writer that waits longer than its busy timeout tries BEGIN IMMEDIATE again instead of failing")
    func beginRetriesWhileBusy() throws {
        let directory = try TemporaryDirectory(label: "busy")
        let path = directory.path("busy.sqlite")
        let setup = try SQLiteConnection(path: path, create: true)
        try setup.execute("PRAGMA journal_mode = WAL")
        try setup.execute("CREATE TABLE t(x INTEGER)")
        let waiter = try SQLiteConnection(path: path, create: false)
        waiter.setBusyTimeout(milliseconds: 20)

        func holdWriteLock(seconds: Double) throws -> DispatchSemaphore {
            let holder = Handover(try SQLiteConnection(path: path, create: false))
            try holder.connection.execute("BEGIN IMMEDIATE")
            let released = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: seconds)
                try? holder.connection.execute("COMMIT")
                released.signal()
            }
            return released
        }

        waiter.beginAttempts = 1
        let first = try holdWriteLock(seconds: 0.3)
        #expect(throws: SQLiteError.self) { try waiter.writeTransaction { try waiter.execute("INSERT INTO t VALUES (1)") } }
        first.wait()

        // Enough attempts (each 20 ms of busy wait and up to 50 ms of sleep) to outlast a holder
        // whose thread is slow to be scheduled while the whole suite runs on 2 cores: 100 once
        // ran out (about 4.5 s) in a full run.
        waiter.beginAttempts = 1_000
        let second = try holdWriteLock(seconds: 0.3)
        try waiter.writeTransaction { try waiter.execute("INSERT INTO t VALUES (2)") }
        second.wait()
        #expect(try waiter.scalarInt("SELECT count(*) FROM t") == 1, "only the retried write landed")
    }
}
