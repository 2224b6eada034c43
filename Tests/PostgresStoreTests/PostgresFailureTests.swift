import Foundation
import LedgerEvents
import LedgerStorage
import LedgerStoreConformance
import PostgresClient
import PostgresStore
import PostgresTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Writers dying mid-transaction and the server restarting: nothing partial, no gap, and a clear error.
@Suite("PostgreSQL failures: a writer killed mid-transaction, a server restart")
struct PostgresFailureTests {
    /// Moves a store to a writer thread.
    ///
    /// `@unchecked Sendable` is safe: the store is created by the test thread, handed over before
    /// the writer thread starts, and used only by that thread until the test joins it.
    final class HandOver: @unchecked Sendable {
        let store: PostgresEventStore
        init(_ store: PostgresEventStore) { self.store = store }
    }

    /// Counts of every table the append writes, to show a failed batch left nothing behind.
    static func tableCounts(_ connection: PostgresConnection) throws -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for table in ["events", "event_decoded", "event_keys", "arrivals", "quarantine", "event_facts"] {
            counts[table] = try connection.scalarInt64("SELECT count(*) FROM \(table)")
        }
        counts["head"] = try connection.scalarInt64("SELECT position FROM ledger_head")
        return counts
    }

    /// Polls `condition` until it holds or `seconds` pass.
    static func waitUntil(seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(10_000)
        }
        return try condition()
    }

    @Test("a writer's backend terminated after it wrote its rows, before COMMIT: nothing of the batch remains, the next append continues")
    func terminatedMidTransaction() throws {
        let fixture = try StoreFixture.make(.postgres)
        let cluster = try #require(fixture.cluster)
        _ = try fixture.store.commit(events: (1...3).map { TestData.apiEvent($0) })
        let observer = try cluster.connect()
        let before = try Self.tableCounts(observer)

        let writer = HandOver(try PostgresEventStore.open(url: cluster.url()))
        let inTransaction = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let outcome = Guarded<(any Error)?>(nil)
        let batch = (100..<300).map { TestData.apiEvent($0) }
        Thread {
            defer { finished.signal() }
            do {
                _ = try writer.store.write {
                    let result = try writer.store.append(events: batch, rejections: [TestData.rejection("killed")])
                    let appended = result.appended
                    for event in appended { try writer.store.storeFacts(position: event.position, facts: Data([1])) }
                    _ = try writer.store.facts(at: [appended[0].position])  // the facts are written now, too
                    inTransaction.signal()
                    resume.wait()
                    _ = try writer.store.head()
                    return result
                }
            } catch {
                outcome.withValue { $0 = error }
            }
        }.start()
        #expect(inTransaction.wait(timeout: .now() + 30) == .success)
        // Every row of the batch is written but uncommitted: invisible to everyone else.
        #expect(try Self.tableCounts(observer) == before)
        let pids = try observer.query(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'").map { try $0.int64(0) }
        #expect(pids.count == 1)
        for pid in pids { try observer.query("SELECT pg_terminate_backend($1::int)", [.int64(pid)]) }
        resume.signal()
        #expect(finished.wait(timeout: .now() + 30) == .success)

        let error = try #require(outcome.withValue { $0 }.flatMap { LedgerStoreError.databaseFailure(in: $0) } as? PostgresError)
        #expect(error.isConnectionFailure, "\(error)")
        #expect(try Self.tableCounts(observer) == before, "nothing of the killed batch remains")
        #expect(try fixture.store.verifyChain().isIntact)

        // The killed writer reconnects and sends the batch again: it continues at 4, once.
        try writer.store.reconnect()
        writer.store.clock = { StoreFixture.pinnedNow }
        let again = try writer.store.commit(events: batch)
        #expect(again.outcomes.first == .appended(position: 4))
        #expect(again.outcomes.last == .appended(position: 203))
        #expect(try fixture.store.verifyChain().eventsChecked == 203)
    }

    @Test("kill -9 of a psql writer holding the head lock mid-transaction: the queued append takes the next position, nothing partial")
    func killedPsqlWriter() throws {
        let fixture = try StoreFixture.make(.postgres)
        let cluster = try #require(fixture.cluster)
        _ = try fixture.store.commit(events: (1...3).map { TestData.apiEvent($0) })
        let observer = try cluster.connect()
        let before = try Self.tableCounts(observer)

        let psql = Process()
        psql.executableURL = URL(fileURLWithPath: cluster.binDirectory + "/psql")
        psql.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", cluster.url() + "&application_name=killed-writer"]
        let input = Pipe()
        psql.standardInput = input
        psql.standardOutput = FileHandle.nullDevice
        psql.standardError = FileHandle.nullDevice
        try psql.run()
        defer {
            if psql.isRunning { kill(psql.processIdentifier, SIGKILL) }
            psql.waitUntilExit()
        }
        // A writer that takes the append lock and writes an event row, then stops mid-transaction.
        let script = """
            BEGIN;
            SELECT position FROM ledger_head FOR UPDATE;
            INSERT INTO events (position, event_id, kind, occurred_at, recorded_at, source, origin, raw, prev_hash, hash)
                VALUES (4, 'killed-1', 'apiResponse', 0, 0, 'psql', 'live', '\\x00', '\\x00', '\\x00');
            INSERT INTO arrivals (id, event_id, recorded_at, source, duplicate) VALUES (4, 'killed-1', 0, 'psql', 0);
            UPDATE ledger_head SET position = 4, last_arrival_id = 4;

            """
        input.fileHandleForWriting.write(Data(script.utf8))
        let holding = try Self.waitUntil {
            try observer.scalarInt64("""
                SELECT count(*) FROM pg_stat_activity WHERE application_name = 'killed-writer' AND state = 'idle in transaction'
                  AND query LIKE 'UPDATE ledger_head%'
                """) == 1
        }
        #expect(holding, "psql holds the head lock mid-transaction")

        // An append from our store queues behind the lock.
        let queued = HandOver(try PostgresEventStore.open(url: cluster.url()))
        queued.store.clock = { StoreFixture.pinnedNow }
        let result = Guarded<Result<BatchResult, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            defer { finished.signal() }
            let outcome = Result { try queued.store.commit(events: [TestData.apiEvent(10)]) }
            result.withValue { $0 = outcome }
        }.start()
        #expect(finished.wait(timeout: .now() + 0.5) == .timedOut, "the append waits for the lock")

        kill(psql.processIdentifier, SIGKILL)
        psql.waitUntilExit()
        #expect(finished.wait(timeout: .now() + 30) == .success, "the lock is released when the killed session ends")
        let appended = try #require(result.withValue { $0 }).get()
        #expect(appended.outcomes == [.appended(position: 4)], "the killed writer's position 4 was never taken")

        var after = try Self.tableCounts(observer)
        #expect(after["events"] == (before["events"] ?? 0) + 1)
        after["events"] = before["events"]
        after["event_decoded"] = before["event_decoded"]
        after["event_keys"] = before["event_keys"]
        after["arrivals"] = before["arrivals"]
        after["head"] = before["head"]
        #expect(after == before)
        #expect(try fixture.store.event(id: "killed-1") == nil)
        #expect(try fixture.store.verifyChain().eventsChecked == 4)
        #expect(try fixture.store.verifyChain().isIntact)
    }

    @Test("a server restart: the store reports a connection error; a reopened store (or reconnect) continues without a gap")
    func restart() throws {
        let fixture = try StoreFixture.make(.postgres)
        let cluster = try #require(fixture.cluster)
        let store = try PostgresEventStore.open(url: cluster.url())
        store.clock = { StoreFixture.pinnedNow }
        _ = try store.commit(events: (1...3).map { TestData.apiEvent($0) })
        try cluster.restart()

        // The transaction's failure arrives as the store error every engine throws, PostgreSQL's inside.
        let wrapped = #expect(throws: LedgerStoreError.self) { try store.commit(events: [TestData.apiEvent(4)]) }
        let error = wrapped.flatMap { LedgerStoreError.databaseFailure(in: $0) as? PostgresError }
        #expect(error?.isConnectionFailure == true, "\(String(describing: wrapped))")
        // A direct call outside a transaction throws the same wrapped error.
        let direct = #expect(throws: LedgerStoreError.self) { try store.head() }
        #expect(direct.flatMap { LedgerStoreError.databaseFailure(in: $0) as? PostgresError }?.isConnectionFailure == true)
        print("after a restart the store said: \(error.map { "\($0)" } ?? "-")")

        let reopened = try PostgresEventStore.open(url: cluster.url())
        reopened.clock = { StoreFixture.pinnedNow }
        #expect(try reopened.commit(events: [TestData.apiEvent(4), TestData.apiEvent(1)]).outcomes
                == [.appended(position: 4), .duplicate(existingPosition: 1)])
        try store.reconnect()
        #expect(try store.commit(events: [TestData.apiEvent(5)]).outcomes == [.appended(position: 5)])
        #expect(try reopened.verifyChain().eventsChecked == 5)
        #expect(try reopened.verifyChain().isIntact)
    }

    @Test("restart while a writer appends in a loop: it sees connection errors, reopens, re-sends; every event once, 1…N, chain intact")
    func restartMidRun() throws {
        let fixture = try StoreFixture.make(.postgres)
        let cluster = try #require(fixture.cluster)
        let url = cluster.url()
        let batches = 120
        let progress = Guarded((committed: 0, connectionErrors: 0, otherErrors: [String]()))
        let finished = DispatchSemaphore(value: 0)
        Thread {
            defer { finished.signal() }
            var store: PostgresEventStore?
            var batch = 0
            let deadline = Date().addingTimeInterval(120)
            while batch < batches, Date() < deadline {
                let events = (0..<25).map { TestData.apiEvent(batch * 25 + $0) }
                do {
                    let current = try store ?? PostgresEventStore.open(url: url)
                    store = current
                    _ = try current.commit(events: events)
                    batch += 1
                    progress.withValue { $0.committed = batch }
                } catch where (LedgerStoreError.databaseFailure(in: error) as? PostgresError)?.isConnectionFailure == true {
                    // The outcome of an interrupted COMMIT is unknown: reopen and send the same batch again.
                    progress.withValue { $0.connectionErrors += 1 }
                    store = nil
                    usleep(50_000)
                } catch {
                    progress.withValue { $0.otherErrors.append("\(error)") }
                    return
                }
            }
        }.start()
        #expect(Self.waitUntil(seconds: 60) { progress.withValue { $0.committed } >= 30 })
        try cluster.restart()
        #expect(finished.wait(timeout: .now() + 150) == .success)

        let run = progress.withValue { $0 }
        #expect(run.otherErrors.isEmpty, "\(run.otherErrors)")
        #expect(run.committed == batches)
        #expect(run.connectionErrors >= 1, "the restart was noticed")
        let store = try PostgresEventStore.open(url: url)
        #expect(try store.eventCount() == Int64(batches * 25), "every event once")
        let verification = try store.verifyChain()
        #expect(verification.isIntact, "\(verification)")
        #expect(verification.eventsChecked == Int64(batches * 25))
        #expect(try store.duplicateCounts(for: (0..<(batches * 25)).map { "api-\($0)" }).values.allSatisfy { $0 <= 1 })
        print("restart mid-run: \(run.connectionErrors) connection error(s), \(run.committed) batches, no gap")
    }
}
