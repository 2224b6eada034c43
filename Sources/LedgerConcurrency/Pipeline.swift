/// Produces `count` chunks on the calling thread and transforms each on other threads while the
/// calling thread consumes the chunk before it and produces the next, in order.
///
/// Two chunks are in flight at most: chunk `k` is transformed (by `transform`, on a thread of its
/// own, which may itself use ``parallelMap(_:workers:_:)``) while this thread hands the result of
/// chunk `k - 1` to `consume` and then produces chunk `k + 1`. `produce` and `consume` run only on
/// the calling thread, so they may use what that thread owns (a database connection, say). An
/// error from either stops the pipeline; a transform in flight is waited for before it returns,
/// so no thread outlives the call.
///
/// ```swift
/// try pipelined(chunks: 3, produce: { k in try readChunk(k) }, transform: { fold($0) }, consume: { print($0) })
/// ```
public func pipelined<Chunk: Sendable, Output: Sendable>(
    chunks count: Int, produce: (Int) throws -> Chunk, transform: @escaping @Sendable (Chunk) -> Output,
    consume: (Output) throws -> Void
) throws {
    var inFlight: OneShot<Output>?
    defer { _ = inFlight?.wait() }
    for index in 0..<count {
        let chunk = try produce(index)
        let next = OneShot<Output>.running { transform(chunk) }
        let previous = inFlight
        inFlight = next
        if let previous { try consume(previous.wait()) }
    }
    let last = inFlight
    inFlight = nil
    if let last { try consume(last.wait()) }
}
