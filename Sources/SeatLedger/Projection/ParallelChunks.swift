import Foundation
import LedgerConcurrency

/// Splits `0..<count` into a few contiguous chunks per core, runs `transform` on each chunk in
/// parallel and returns the chunks' results concatenated in index order.
///
/// Several chunks per core, because their costs differ (groups of different sizes) and the
/// threads take chunks as they free up: with one chunk each, the calling thread often waited for
/// the other's, or ran both before the pool's worker woke.
///
/// Small inputs run on the calling thread. Uses `DispatchQueue.concurrentPerform`, which runs on
/// the calling thread plus the pool's workers (``LedgerConcurrency/parallelMap(_:workers:_:)``:
/// one worker per core, each taking the next chunk as it frees up) and returns when every chunk
/// is done.
func parallelChunks<R: Sendable>(_ count: Int, minimumPerChunk: Int = 256,
                                 _ transform: @Sendable (Range<Int>) -> [R]) -> [R] {
    let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
    let chunks = min(cores * 4, max(1, count / minimumPerChunk))
    if chunks <= 1 { return transform(0..<count) }
    let ranges = (0..<chunks).map { chunk in (count * chunk / chunks)..<(count * (chunk + 1) / chunks) }
    return LedgerConcurrency.parallelMap(ranges, workers: cores, transform).flatMap { $0 }
}
