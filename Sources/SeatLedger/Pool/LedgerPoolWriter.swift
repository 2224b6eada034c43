import Foundation
import LedgerConcurrency
import LedgerIntake
import LedgerStorage
import Synchronization

/// The single writer of a ``LedgerPool``: one dedicated thread owning the one read-write
/// ``Ledger``, draining every queued job at once and committing the queued appends together.
///
/// Appends arrive verified (``LedgerPoolVerifiers``), so the writer only commits.
///
/// A drain takes everything queued (up to ``maximumJobsPerDrain``), in arrival order. Consecutive
/// appends become one ``Ledger/commit(_:prepared:)`` (one transaction, one `fsync`): a group commit.
/// An exclusive ``LedgerPool/write(_:)`` body runs alone, after the appends queued before it have
/// been committed and before those queued after it. Each caller's continuation is resumed once,
/// with its own outcomes, after the head has been advanced (so `headPosition` already covers it).
final class LedgerPoolWriter: Sendable {
    /// Tells an append's caller its receipts (or the error of its group commit), once, on the
    /// writer's thread: a continuation's resumption, or a server's answer handed on.
    typealias AppendCompletion = @Sendable (Result<[AppendReceipt], any Error>) -> Void

    /// Work for the writer thread.
    enum Job: Sendable {
        /// Messages to append in the next group commit, as the verifiers prepared them, and what
        /// tells the caller their outcomes.
        case append([InboundMessage], [PreparedMessage], AppendCompletion)
        /// A body to run on the writer's ledger between group commits; it resumes its own caller
        /// and returns the error it reported (so the writer can re-establish a lost connection).
        case exclusive(@Sendable (Ledger) -> (any Error)?)
    }

    /// Jobs a drain takes at most (a group commit serves at most this many calls).
    static let maximumJobsPerDrain = 1_024
    /// Deferred group snapshots folded at a time (a few milliseconds of work, so an append
    /// arriving meanwhile waits little).
    static let snapshotsFoldedAtOnce = 32
    /// How long no append must come before the writer folds deferred snapshots.
    static let quietBeforeFolding: Duration = .milliseconds(50)

    /// Folds a chunk of the deferred snapshots; on failure they are left missing (the listing
    /// folds those groups, a rebuild stores them again).
    private func foldDeferred(on ledger: Ledger) {
        if (try? ledger.foldDeferredSnapshots(limit: Self.snapshotsFoldedAtOnce)) == nil { ledger.snapshotsToFold.removeAll() }
    }

    private let jobs = BoundedChannel<Job>(capacity: .max)
    private let exited = OneShot<Void>()
    private let counters = Mutex(LedgerPool.Statistics())
    private let watch: LedgerHeadWatch

    private init(watch: LedgerHeadWatch) { self.watch = watch }

    /// Starts the writer thread, which opens its read-write connection with `makeStore(false)`;
    /// returns once it is open, with the decoder of its ledger (or throws why it could not open).
    static func start(watch: LedgerHeadWatch,
                      makeStore: @escaping @Sendable (_ readOnly: Bool) throws -> any LedgerStore) throws -> (LedgerPoolWriter, MessageDecoder) {
        let writer = LedgerPoolWriter(watch: watch)
        let opened = OneShot<Result<MessageDecoder, any Error>>()
        let thread = Thread.named("sl-pool-writer") {
            writer.run(makeStore: makeStore, opened: opened)
            writer.exited.set(())
        }
        thread.start()
        return (writer, try opened.wait().get())
    }

    /// Queues `job`; `false` once the writer is closed (the job will not run).
    func submit(_ job: Job) -> Bool { jobs.trySend(job) == .sent }

    /// What the writer has done so far.
    var statistics: LedgerPool.Statistics { counters.withLock { $0 } }

    /// Jobs queued and not yet taken by the writer thread.
    var queued: Int { jobs.count }

    /// Whether ``close()`` was called.
    var isClosed: Bool { jobs.isClosed }

    /// Takes no more jobs; the thread finishes the queued ones, closes its connection and exits.
    func close() { jobs.close() }

    /// Waits (suspending) until the thread has exited, its connection closed.
    func waitUntilExited() async { await exited.value }

    // MARK: The writer thread

    private func run(makeStore: @Sendable (Bool) throws -> any LedgerStore, opened: OneShot<Result<MessageDecoder, any Error>>) {
        let ledger: Ledger
        do {
            ledger = try Ledger.open(store: makeStore(false))
            try ledger.requireSound()
            watch.advance(to: try ledger.store.head().position)
        } catch {
            opened.set(.failure(error))
            return
        }
        opened.set(.success(ledger.decoder))
        // Returns when the channel is closed and drained; the ledger (its connection) is released then.
        // (No background checkpoints here, unlike a file ingest: they made no measurable difference
        // to group commits; see `Tools/bench/PERFORMANCE.md`, History.)
        drain(on: ledger)
        // Closing: the snapshots still deferred are folded before the connection goes (a failure
        // leaves them missing, which the listing folds and a rebuild stores again).
        _ = try? ledger.foldDeferredSnapshots()
    }

    /// Commits jobs until the channel is closed and drained; the ledger (its connection) is released then.
    private func drain(on ledger: Ledger) {
        while true {
            let drained: [Job]?
            if ledger.snapshotsToFold.isEmpty {
                drained = try? jobs.receive(upTo: Self.maximumJobsPerDrain)
            } else {
                // Snapshots the commits deferred wait: fold a chunk once no append has come for a
                // quiet moment, or when too many wait, so folds never sit between an append and
                // its commit under load.
                drained = try? jobs.receive(upTo: Self.maximumJobsPerDrain, deadline: MonotonicInstant.now.advanced(by: Self.quietBeforeFolding))
                if drained?.isEmpty == true {
                    foldDeferred(on: ledger)
                    continue
                }
            }
            guard let drained else { break }
            defer { if ledger.snapshotsToFold.count >= Ledger.deferredSnapshotLimit { foldDeferred(on: ledger) } }
            var callers: [(count: Int, completion: AppendCompletion)] = []
            var messages: [InboundMessage] = []
            var prepared: [PreparedMessage] = []
            for job in drained {
                switch job {
                case .append(let batch, let verified, let completion):
                    callers.append((batch.count, completion))
                    messages.append(contentsOf: batch)
                    prepared.append(contentsOf: verified)
                case .exclusive(let body):
                    groupCommit(messages, prepared, for: callers, on: ledger)
                    callers = []
                    messages = []
                    prepared = []
                    // Counted before it runs: the body resumes its caller itself, who may read the
                    // statistics before this thread gets past the body (a race ThreadSanitizer's
                    // slowdown exposed in `bodyErrors`).
                    counters.withLock { $0.writes += 1 }
                    if let error = body(ledger), ledger.store.isConnectionLoss(error) { try? ledger.store.reconnect() }
                    noteHead(of: ledger)
                }
            }
            groupCommit(messages, prepared, for: callers, on: ledger)
        }
    }

    /// Appends every caller's messages in one transaction (``Ledger/commit(_:prepared:)``, the
    /// commit half of ``Ledger/ingestBatch(_:)``) and tells each caller its own outcomes, or
    /// every caller the batch's error.
    private func groupCommit(_ messages: [InboundMessage], _ prepared: [PreparedMessage],
                             for callers: [(count: Int, completion: AppendCompletion)],
                             on ledger: Ledger) {
        guard !callers.isEmpty else { return }
        let result = Result { try ledger.commit(messages, prepared: prepared, deferringSnapshots: true).1 }
        counters.withLock { statistics in
            statistics.commits += 1
            statistics.appendCalls += callers.count
            statistics.messages += messages.count
            statistics.largestCommitCalls = max(statistics.largestCommitCalls, callers.count)
            if case .failure = result { statistics.failedCommits += 1 }
        }
        switch result {
        case .success(let outcomes):
            // The append planned the head under its lock: no need to read it again.
            if let head = ledger.committedHead { watch.advance(to: head) }
            var start = 0
            for caller in callers {
                caller.completion(.success((start..<start + caller.count).map { index in
                    AppendReceipt(outcome: outcomes[index], prepared: prepared[index])
                }))
                start += caller.count
            }
        case .failure(let error):
            // The transaction rolled back: nothing of this batch is stored, so each caller may retry.
            if ledger.store.isConnectionLoss(error) { try? ledger.store.reconnect() }
            noteHead(of: ledger)
            for caller in callers { caller.completion(.failure(error)) }
        }
    }

    /// Reads the store's head (which may include other processes' appends) and wakes whoever waits for it.
    private func noteHead(of ledger: Ledger) {
        if let head = try? ledger.store.head().position { watch.advance(to: head) }
    }
}
