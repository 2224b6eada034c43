import Dispatch
import Foundation
import Synchronization

/// Applies `transform` to every item on `workers` threads and returns the results in input order.
///
/// The calling thread is one of the workers (`DispatchQueue.concurrentPerform` runs on it plus
/// the pool's threads), and each worker claims the next unclaimed index from an atomic counter, so
/// items of different cost balance across the workers. The order of the results never depends on
/// the schedule. With one worker or fewer than two items it runs on the calling thread.
public func parallelMap<T: Sendable, R: Sendable>(_ items: [T], workers: Int = ParallelWork.defaultWorkers,
                                                  _ transform: @Sendable (T) -> R) -> [R] {
    let workers = min(max(1, workers), items.count)
    if workers <= 1 { return items.map(transform) }
    let work = SharedWork<T, R>(items)
    DispatchQueue.concurrentPerform(iterations: workers) { _ in work.work(transform) }
    return work.finish(transform)
}

/// Defaults of ``parallelMap(_:workers:_:)``.
public enum ParallelWork {
    /// One worker per active core.
    public static var defaultWorkers: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }
    /// One worker per active core but the one a ``pipelined(chunks:produce:transform:consume:)``
    /// caller keeps busy reading (at least one).
    public static var workersBesidePipeline: Int { max(1, defaultWorkers - 1) }
}
