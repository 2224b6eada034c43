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
    let slots = ResultSlots<R>(count: items.count)
    DispatchQueue.concurrentPerform(iterations: workers) { _ in
        while let index = slots.claim() { slots.store(transform(items[index]), at: index) }
    }
    return slots.take()
}

/// Defaults of ``parallelMap(_:workers:_:)``.
public enum ParallelWork {
    /// One worker per active core.
    public static var defaultWorkers: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }
}

/// The result slots of one ``parallelMap(_:workers:_:)`` and the counter workers claim indices from.
///
/// `@unchecked Sendable` is safe: the buffer is allocated once with `count` slots and never
/// resized; each slot is written exactly once, by the one worker that claimed its index from the
/// atomic `next` (indices are handed out once each), so no two threads touch the same memory; the
/// slots are read only by `take()`, after `concurrentPerform` has returned, which happens-after
/// every worker's writes.
private final class ResultSlots<R>: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<R>
    private let count: Int
    private let next = Atomic<Int>(0)

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
    }

    deinit { slots.deallocate() }  // the results were moved out by `take()`

    /// The next index nobody claimed, or `nil` when all are claimed.
    func claim() -> Int? {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return index < count ? index : nil
    }

    /// Initializes the slot at `index` (claimed by the caller).
    func store(_ value: R, at index: Int) { (slots + index).initialize(to: value) }

    /// Moves every result out, in index order (every index was claimed and stored).
    func take() -> [R] {
        Array(unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress!.moveInitialize(from: slots, count: count)
            initialized = count
        }
    }
}
