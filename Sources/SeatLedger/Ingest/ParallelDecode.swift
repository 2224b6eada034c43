import Dispatch
import LedgerEvents

/// Runs `transform` over `items` on all cores, results in input order.
func parallelMap<T: Sendable, R: Sendable>(_ items: [T], _ transform: @Sendable (T) -> R) -> [R] {
    if items.count < 4 { return items.map(transform) }
    let results = ResultSlots<R>(count: items.count)
    DispatchQueue.concurrentPerform(iterations: items.count) { index in
        results.store(transform(items[index]), at: index)
    }
    return results.values()
}

/// Fixed slots written by `concurrentPerform` workers.
///
/// `@unchecked Sendable` is safe because each slot is written by exactly one iteration (its own
/// index) and read only after `concurrentPerform` has returned, which happens-after every write.
private final class ResultSlots<R>: @unchecked Sendable {
    private var slots: [R?]
    init(count: Int) { slots = Array(repeating: nil, count: count) }
    func store(_ value: R, at index: Int) {
        slots.withUnsafeMutableBufferPointer { $0[index] = value }
    }
    func values() -> [R] { slots.map { $0! } }  // every index was stored by concurrentPerform
}

extension MessageDecoder {
    /// Decodes a batch on all cores, results in input order.
    public func decodeBatch(_ batch: [InboundMessage]) -> [Result<[NewEvent], IngestRejection>] {
        let decoder = self
        return parallelMap(batch) { decoder.decode($0) }
    }
}

/// A decoded batch handed from the background decoder thread to the committing thread.
///
/// `@unchecked Sendable` is safe: `value` is written once by the decoder thread before it signals
/// `done`, and read only after waiting on `done`, which orders the write before the read.
final class DecodedBatchSlot: @unchecked Sendable {
    var value: [Result<[NewEvent], IngestRejection>]?
    let done = DispatchSemaphore(value: 0)
    private var waited = false

    /// Waits for the decoder thread the first time; later calls return at once.
    func waitOnce() {
        guard !waited else { return }
        waited = true
        done.wait()
    }
}
