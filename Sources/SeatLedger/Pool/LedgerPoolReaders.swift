import Foundation
import LedgerConcurrency
import LedgerStorage

/// The read connections of a ``LedgerPool``: `count` read-only ``Ledger``s lent one at a time,
/// to `count` dedicated threads that run the `async` reads (jobs from one shared queue, in
/// arrival order) and to callers that block for a read on a thread of their own
/// (``LedgerPool/blockingRead(_:)``).
///
/// On SQLite each connection is a WAL reader: a statement sees the last committed transaction,
/// whatever the writer is doing, and never waits for it. On PostgreSQL each is a connection.
final class LedgerPoolReaders: Sendable {
    /// One read: runs on a lent ledger, resumes its own caller, and returns the error it reported
    /// (so the pool can re-establish a lost connection).
    typealias Job = @Sendable (Ledger) -> (any Error)?

    private let jobs = BoundedChannel<Job>(capacity: .max)
    private let connections: LendingPool<Ledger>
    private let exits: [OneShot<Void>]

    private init(connections: [Ledger]) {
        self.connections = LendingPool(connections)
        exits = connections.map { _ in OneShot() }
    }

    /// Opens `count` connections (at least one) with `makeStore(true)` and starts as many reader
    /// threads named `name-N`, under `SCHED_IDLE` when `onlyWhenIdle` (``ThreadPriority``);
    /// throws the first failure to open (the connections opened so far are closed).
    static func start(count: Int, name: String = "sl-pool-read", onlyWhenIdle: Bool = false,
                      makeStore: @escaping @Sendable (_ readOnly: Bool) throws -> any LedgerStore) throws -> LedgerPoolReaders {
        let ledgers = try (0..<max(1, count)).map { _ in try Ledger.open(store: makeStore(true)) }
        let readers = LedgerPoolReaders(connections: ledgers)
        for (index, exited) in readers.exits.enumerated() {
            let thread = Thread.named("\(name)-\(index)") {
                if onlyWhenIdle { ThreadPriority.runCurrentOnlyWhenIdle() }
                readers.run()
                exited.set(())
            }
            thread.start()
        }
        return readers
    }

    /// Queues `job` for the next free reader thread; `false` once the readers are closed (it will not run).
    func submit(_ job: @escaping Job) -> Bool { jobs.trySend(job) == .sent }

    /// Runs `body` on the calling thread with a lent connection, in one read snapshot
    /// (``runInSnapshot(_:on:)``), waiting until a connection is free; re-establishes the
    /// connection when `body` lost it. Throws ``LedgerPoolError/closed`` once the connections
    /// are closed.
    func lend<T>(_ body: (Ledger) throws -> T) throws -> T {
        do {
            return try connections.lend { ledger in
                do {
                    return try Self.runInSnapshot(body, on: ledger)
                } catch {
                    if ledger.store.isConnectionLoss(error) { try? ledger.store.reconnect() }
                    throw error
                }
            }
        } catch is LendingPool<Ledger>.Closed {
            throw LedgerPoolError.closed
        }
    }

    /// Takes no more jobs; the threads finish the queued ones and exit (the connections close
    /// once they have: ``waitUntilExited()``).
    func close() { jobs.close() }

    /// Waits (suspending) until every reader thread has exited, then closes the connections.
    func waitUntilExited() async {
        for exited in exits { await exited.value }
        connections.close()
    }

    private func run() {
        while let job = try? jobs.receive() {
            // The job resumes its caller itself; what it reports only tells `lend` whether the
            // connection was lost.
            _ = try? lend { ledger in if let error = job(ledger) { throw error } }
        }
    }

    /// On SQLite, runs `body` in one read snapshot (a transaction: one shared lock for the whole
    /// read instead of one per statement, and every statement of it sees the same commit), or,
    /// when the snapshot cannot be opened, without one, so that `body` always runs exactly once.
    /// On PostgreSQL `body` runs as before, a statement at a time (a transaction there would add
    /// two round trips to every read, and abort the rest of a read after any failed statement).
    ///
    /// One snapshot per read, not per statement: with a statement each, SQLite takes and releases
    /// its file locks (`fcntl`) and checks the file size (`fstat`) for every statement, and one
    /// request runs half a dozen statements. `body` must not start a transaction of its own
    /// (``LedgerStore`` transactions do not nest).
    static func runInSnapshot<T>(_ body: (Ledger) throws -> T, on ledger: Ledger) throws -> T {
        guard ledger.store.readsInOneSnapshot else { return try body(ledger) }
        var outcome: Result<T, any Error>?
        do {
            try ledger.store.read { outcome = Result { try body(ledger) } }
        } catch {
            // The snapshot could not begin (the body did not run) or end (it did; a read has nothing to commit).
            if outcome == nil { return try body(ledger) }
        }
        return try outcome!.get()
    }
}
