import Dispatch
import Foundation
import LedgerConcurrency
import LedgerEvents
import Projections
import Synchronization

/// Runs `transform` over `items` on all cores, results in input order (fewer than four items on
/// the calling thread). The kit's ``LedgerConcurrency/parallelMap(_:workers:_:)`` does the work.
func parallelMap<T: Sendable, R: Sendable>(_ items: [T], _ transform: @Sendable (T) -> R) -> [R] {
    if items.count < 4 { return items.map(transform) }
    return LedgerConcurrency.parallelMap(items, transform)
}

extension MessageDecoder {
    /// Decodes a batch on all cores, results in input order.
    public func decodeBatch(_ batch: [InboundMessage]) -> [Result<[NewEvent], IngestRejection>] {
        let decoder = self
        return parallelMap(batch) { decoder.decode($0) }
    }

    /// Decodes `message` and derives, off the writer thread, the projection facts of each event
    /// it yields (their `position` and `recordedAt` are filled in when the events are appended).
    package func prepare(_ message: InboundMessage) -> PreparedMessage {
        // Bytes already stored (verified when they were): nothing to decode; the commit reports a duplicate.
        if let stored = message.stored { return PreparedMessage(result: .success([stored]), facts: []) }
        let result = decode(message)
        guard case .success(let events) = result else { return PreparedMessage(result: result, facts: []) }
        let facts = events.map(Self.provisionalFacts)
        let checked = Self.refusingUnstorableText(result, facts: facts)
        guard case .success = checked else { return PreparedMessage(result: checked, facts: []) }
        return PreparedMessage(result: checked, facts: facts)
    }

    /// The facts of an event not yet appended: position 0 and recorded-at 0 until the writer assigns them.
    static func provisionalFacts(of event: NewEvent) -> EventFacts {
        EventFacts(LedgerEvent(position: 0, eventId: event.eventId, kind: event.kind, type: event.type,
                               subtype: event.subtype, status: event.status, occurredAt: event.occurredAt, recordedAt: 0,
                               source: event.source, origin: event.origin, raw: event.raw, decoded: event.decoded,
                               verification: event.verification, hash: Data()))
    }
}

/// One message after the parallel stage: its events or its rejection, and the facts of each event.
package struct PreparedMessage: Sendable {
    /// What the decoder made of the message.
    package let result: Result<[NewEvent], IngestRejection>
    /// One entry per event of `result` (none for a rejection), with provisional position and recorded-at.
    package let facts: [EventFacts]

    /// Wraps a decoder result whose facts the writer derives itself.
    package init(result: Result<[NewEvent], IngestRejection>, facts: [EventFacts]) {
        self.result = result
        self.facts = facts
    }
}

/// The threads that decode the next batches while the writer commits batch k.
///
/// There are `activeProcessorCount − 1` dedicated threads (at least one); the writer thread joins
/// in (``DecodeJob/finish(decoder:)``) whenever it would otherwise wait for a batch, so the process
/// runs about as many busy threads as there are cores and the single writer does not share its
/// core with a decoder while it commits (measured on two cores: one decoder per core was ~6%
/// slower, and an extra decoder that ran only during the commit's `fsync` did not help either).
/// Work is handed out one message at a time, so the threads finish a batch together.
///
/// Dedicated threads, not a dispatch queue: on Linux the Swift concurrency pool runs on
/// libdispatch's global queues, and blocking one of those while waiting for another dispatch work
/// item can starve it (it deadlocks under Swift Testing). A real thread always makes progress.
///
/// A submitted batch goes into a ``LedgerConcurrency/BoundedChannel`` once per thread, so every
/// thread joins in, oldest batch first (a thread that takes a batch already fully claimed moves on
/// at once). `Sendable` without `@unchecked`: the channel and the exit signals are the only shared
/// state, and the jobs are thread-safe.
package final class DecodeWorkers: Sendable {
    private let decoder: MessageDecoder
    private let jobs = BoundedChannel<DecodeJob>(capacity: .max)
    private let exits: [OneShot<Void>]

    /// Starts the dedicated threads (at least one).
    package init(decoder: MessageDecoder, threads: Int = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)) {
        self.decoder = decoder
        self.exits = (0..<max(1, threads)).map { _ in OneShot() }
        for (index, exited) in exits.enumerated() {
            let thread = Thread.named("sl-decode-\(index)") { [self] in
                while let job = try? jobs.receive() { job.work(decoder: decoder) }
                exited.set(())
            }
            thread.start()
        }
    }

    /// Queues `batch` for the dedicated threads behind any batch submitted earlier; collect it
    /// with ``DecodeJob/finish(decoder:)``.
    package func submit(_ batch: [InboundMessage]) -> DecodeJob {
        let job = DecodeJob(batch)
        for _ in exits { _ = jobs.trySend(job) }
        return job
    }

    /// Stops the threads once they finish what they hold (jobs not started are left to
    /// ``DecodeJob/finish(decoder:)``), and waits for them.
    package func close() {
        jobs.cancel()
        for exited in exits { exited.wait() }
    }
}

/// One batch being decoded by several threads, one message at a time (the kit's
/// ``LedgerConcurrency/SharedWork``: results in input order).
package typealias DecodeJob = SharedWork<InboundMessage, PreparedMessage>

extension SharedWork where Item == InboundMessage, Output == PreparedMessage {
    /// Decodes messages until none is left to claim.
    package func work(decoder: MessageDecoder) { work { decoder.prepare($0) } }

    /// Helps decode what is left, waits for the other threads, and returns the results in input order.
    package func finish(decoder: MessageDecoder) -> [PreparedMessage] { finish { decoder.prepare($0) } }
}
