import Foundation
import LedgerConcurrency
import LedgerIntake

/// The threads of a ``LedgerPool`` that verify and decode appends before they reach the writer.
///
/// The writer only commits: while it runs one group commit (the projection updates and the
/// `fsync`), these threads verify the messages of the next one, as ``Ledger/ingestPipelined(lookahead:next:onBatch:)``
/// does for a file, so verification and commits overlap instead of taking turns.
///
/// Verification needs only the ledger's ``MessageDecoder`` (its configuration is fixed for the
/// life of a `Ledger`), never a connection, so a message verified here and committed a moment
/// later is judged exactly as the writer would have judged it. `Sendable` without `@unchecked`:
/// the channel and the exit signals are the only shared state.
final class LedgerPoolVerifiers: Sendable {
    /// One append's messages and what tells the caller their receipts.
    struct Job: Sendable {
        let messages: [InboundMessage]
        let completion: LedgerPoolWriter.AppendCompletion
    }

    private let jobs = BoundedChannel<Job>(capacity: .max)
    private let exits: [OneShot<Void>]
    private let decoder: MessageDecoder
    private let writer: LedgerPoolWriter

    /// Starts `threads` verifier threads (at least one) that verify with `decoder` and hand each
    /// job, prepared, to `writer` (so once they have exited, everything they took is queued there).
    init(decoder: MessageDecoder, writer: LedgerPoolWriter, threads: Int = ParallelWork.defaultWorkers) {
        exits = (0..<max(1, threads)).map { _ in OneShot() }
        self.decoder = decoder
        self.writer = writer
        for (index, exited) in exits.enumerated() {
            let thread = Thread.named("sl-verify-\(index)") { [jobs] in
                while let job = try? jobs.receive() {
                    let prepared = parallelMap(job.messages) { decoder.prepare($0) }
                    if !writer.submit(.append(job.messages, prepared, job.completion)) {
                        job.completion(.failure(LedgerPoolError.closed))
                    }
                }
                exited.set(())
            }
            thread.start()
        }
    }

    /// Queues `job`; `false` once closed (it will not run, and its caller is not told).
    func submit(_ job: Job) -> Bool { jobs.trySend(job) == .sent }

    /// Verifies and decodes `messages` on the calling thread and hands them to the writer, as a
    /// verifier thread would; `false` once closed (nothing was queued, `completion` not called).
    func prepareHere(_ messages: [InboundMessage], completion: @escaping LedgerPoolWriter.AppendCompletion) -> Bool {
        guard !jobs.isClosed else { return false }
        let prepared = messages.map { decoder.prepare($0) }
        return writer.submit(.append(messages, prepared, completion))
    }

    /// Whether ``close()`` was called.
    var isClosed: Bool { jobs.isClosed }

    /// Takes no more jobs; the threads finish the queued ones (handing them to the writer) and exit.
    func close() { jobs.close() }

    /// Waits (suspending) until every verifier thread has exited.
    func waitUntilExited() async {
        for exited in exits { await exited.value }
    }
}
