import Foundation

/// A bounded hand-off of values from one producer thread to one consumer thread.
///
/// `@unchecked Sendable` is safe: every access to `buffer`, `finished` and `failure` happens
/// while holding `condition`'s lock.
final class BatchChannel<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var buffer: [Value] = []
    private var finished = false
    private var cancelled = false
    private var failure: (any Error)?
    private let capacity: Int

    /// A channel that holds at most `capacity` values before the producer waits.
    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Producer: hands over a value, waiting while the channel is full; `false` once the consumer cancelled.
    func send(_ value: Value) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while buffer.count >= capacity && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        buffer.append(value)
        condition.broadcast()
        return true
    }

    /// Producer: no more values (with the error that ended production, if any).
    func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// Consumer: the next value, or `nil` when the producer finished; rethrows the producer's error.
    func receive() throws -> Value? {
        condition.lock()
        defer { condition.unlock() }
        while buffer.isEmpty && !finished { condition.wait() }
        if !buffer.isEmpty {
            condition.broadcast()
            return buffer.removeFirst()
        }
        if let failure { throw failure }
        return nil
    }

    /// Consumer: stop the producer (it sees `false` from its next `send`).
    func cancel() {
        condition.lock()
        cancelled = true
        buffer.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the producer has finished (after a cancel, for a clean shutdown).
    func waitUntilFinished() {
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }
}
