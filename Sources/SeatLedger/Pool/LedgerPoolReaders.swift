import EventStore
import Foundation
import LedgerConcurrency
import LedgerStorage

/// The read connections of a ``LedgerPool``: `count` dedicated threads, each owning one read-only
/// ``Ledger``, taking read jobs from one shared queue in arrival order.
///
/// On SQLite each reader is a WAL reader: a statement sees the last committed transaction,
/// whatever the writer is doing, and never waits for it. On PostgreSQL each is a connection.
final class LedgerPoolReaders: Sendable {
    /// One read: runs on a reader's ledger, resumes its own caller, and returns the error it
    /// reported (so the reader can re-establish a lost connection).
    typealias Job = @Sendable (Ledger) -> (any Error)?

    private let jobs = BoundedChannel<Job>(capacity: .max)
    private let exits: [OneShot<Void>]

    private init(count: Int) { exits = (0..<count).map { _ in OneShot() } }

    /// Starts `count` reader threads (at least one), each opening its connection with
    /// `makeStore(true)`; returns once all are open (or throws the first failure, the others closed).
    static func start(count: Int, makeStore: @escaping @Sendable (_ readOnly: Bool) throws -> any LedgerStore) throws -> LedgerPoolReaders {
        let readers = LedgerPoolReaders(count: max(1, count))
        let opened = readers.exits.map { _ in OneShot<Result<Void, any Error>>() }
        for (index, exited) in readers.exits.enumerated() {
            let ready = opened[index]
            let thread = Thread {
                readers.run(makeStore: makeStore, opened: ready)
                exited.set(())
            }
            thread.name = "seatledger-pool-reader-\(index)"
            thread.start()
        }
        for ready in opened {
            if case .failure(let error) = ready.wait() {
                readers.close()
                for exited in readers.exits { exited.wait() }
                throw error
            }
        }
        return readers
    }

    /// Queues `job` for the next free reader; `false` once the readers are closed (it will not run).
    func submit(_ job: @escaping Job) -> Bool { jobs.trySend(job) == .sent }

    /// Takes no more jobs; the threads finish the queued ones, close their connections and exit.
    func close() { jobs.close() }

    /// Waits (suspending) until every reader thread has exited.
    func waitUntilExited() async {
        for exited in exits { await exited.value }
    }

    private func run(makeStore: @Sendable (Bool) throws -> any LedgerStore, opened: OneShot<Result<Void, any Error>>) {
        let ledger: Ledger
        do {
            ledger = try Ledger.open(store: makeStore(true))
        } catch {
            opened.set(.failure(error))
            return
        }
        opened.set(.success(()))
        while let job = try? jobs.receive() {
            if let error = Self.runInSnapshot(job, on: ledger), ledger.store.isConnectionLoss(error) { try? ledger.store.reconnect() }
        }
    }

    /// On SQLite, runs `job` in one read snapshot (a transaction: one shared lock for the whole
    /// job instead of one per statement, and every statement of the job sees the same commit),
    /// or, when the snapshot cannot be opened, without one, so that the job always runs exactly
    /// once and resumes its caller. On PostgreSQL the job runs as before, a statement at a time
    /// (a transaction there would add two round trips to every read, and abort the rest of a job
    /// after any failed statement).
    ///
    /// One snapshot per job, not per statement: with a statement each, SQLite took and released
    /// its file locks (`fcntl`) and checked the file size (`fstat`) for every statement,
    /// 9% of `serve`'s CPU under `GET /v1/members/{id}` (bench step 5b, target ≥ 5,000 requests/s
    /// with a p99 under 5 ms), where one request runs half a dozen statements. A job must not
    /// start a transaction of its own (``LedgerStore`` transactions do not nest).
    static func runInSnapshot(_ job: Job, on ledger: Ledger) -> (any Error)? {
        guard ledger.store is EventStore else { return job(ledger) }
        var ran = false
        var jobError: (any Error)?
        do {
            try ledger.store.read {
                ran = true
                jobError = job(ledger)
            }
        } catch {
            // The snapshot could not begin (the job did not run) or end (it did; a read has nothing to commit).
            if !ran { return job(ledger) }
        }
        return jobError
    }
}
