import Dispatch
import Foundation

/// Splits `0..<count` into a few contiguous chunks per core, runs `transform` on each chunk in
/// parallel and returns the chunks' results concatenated in index order.
///
/// Several chunks per core, because their costs differ (groups of different sizes) and the
/// threads take chunks as they free up: with one chunk each, the calling thread often waited for
/// the other's, or ran both before the pool's worker woke.
///
/// Small inputs run on the calling thread. Uses `DispatchQueue.concurrentPerform`, which runs on
/// the calling thread plus the pool's workers and returns when every chunk is done.
func parallelChunks<R: Sendable>(_ count: Int, minimumPerChunk: Int = 256,
                                 _ transform: @Sendable (Range<Int>) -> [R]) -> [R] {
    let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
    let chunks = min(cores * 4, max(1, count / minimumPerChunk))
    if chunks <= 1 { return transform(0..<count) }
    let slots = ChunkResults<R>(count: chunks)
    DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
        let lower = count * chunk / chunks
        let upper = count * (chunk + 1) / chunks
        slots.store(transform(lower..<upper), at: chunk)
    }
    return slots.concatenated()
}

/// One result array per chunk, written by `concurrentPerform` iterations.
///
/// `@unchecked Sendable` is safe because each slot is written by exactly one iteration (its own
/// index) and read only after `concurrentPerform` has returned, which happens-after every write.
private final class ChunkResults<R>: @unchecked Sendable {
    private var slots: [[R]]
    init(count: Int) { slots = Array(repeating: [], count: count) }
    func store(_ value: [R], at index: Int) {
        slots.withUnsafeMutableBufferPointer { $0[index] = value }
    }
    func concatenated() -> [R] { slots.flatMap { $0 } }
}
