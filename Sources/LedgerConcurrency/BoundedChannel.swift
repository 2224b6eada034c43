/// A bounded first-in first-out hand-off of values between threads: any number of producers and
/// consumers, blocking `send` while full and blocking `receive` while empty.
///
/// Two ways to end it:
/// - ``close(throwing:)`` (the producers are done): consumers still receive what is buffered,
///   then `nil` (or the producers' error); later sends are refused.
/// - ``cancel()`` (the consumers are gone): buffered values are dropped, blocked and later sends
///   return `false`, receives return `nil`.
///
/// Capacity is counted in `weight` units (one per value by default; a reader of lines counts
/// bytes): `send` waits while the buffered weight is at least `capacity`, so a single value
/// heavier than the capacity still passes when the buffer is empty.
///
/// Blocking calls are for threads of their own. From `async` code use ``trySend(_:)`` (never
/// waits) on a channel with room, e.g. `capacity: .max`.
public final class BoundedChannel<Element: Sendable>: Sendable {
    /// How a ``trySend(_:)`` went.
    public enum SendResult: Sendable, Equatable {
        /// Buffered.
        case sent
        /// Refused: the buffer is at capacity.
        case full
        /// Refused: the channel was closed or cancelled.
        case closed
    }

    private struct State: Sendable {
        var buffer: [Element] = []
        var head = 0                 // index of the oldest buffered value in `buffer`
        var weight = 0
        var closed = false
        var cancelled = false
        var failure: (any Error)?
        var count: Int { buffer.count - head }

        mutating func removeFirst() -> Element {
            let value = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return value
        }
    }

    private let monitor = Monitor(State())
    private let weigh: @Sendable (Element) -> Int
    /// The buffered weight at which `send` waits.
    public let capacity: Int

    /// A channel that buffers up to `capacity` (at least 1) units of `weight`.
    public init(capacity: Int, weight: @escaping @Sendable (Element) -> Int = { _ in 1 }) {
        self.capacity = max(1, capacity)
        self.weigh = weight
    }

    /// Hands over `value`, waiting while the channel is full; `false` if the channel was closed
    /// or cancelled (the value was not delivered).
    @discardableResult
    public func send(_ value: Element) -> Bool {
        let weight = weigh(value)
        let capacity = self.capacity
        return monitor.wait(until: { $0.weight < capacity || $0.count == 0 || $0.cancelled || $0.closed }) { state in
            guard !state.cancelled, !state.closed else { return false }
            state.buffer.append(value)
            state.weight += weight
            return true
        }
    }

    /// Hands over `value` if there is room now; never waits.
    public func trySend(_ value: Element) -> SendResult {
        let weight = weigh(value)
        let capacity = self.capacity
        return monitor.update { state in
            if state.cancelled || state.closed { return .closed }
            if state.weight >= capacity && state.count > 0 { return .full }
            state.buffer.append(value)
            state.weight += weight
            return .sent
        }
    }

    /// The oldest value, waiting while the channel is empty; `nil` once it is closed and drained
    /// (or cancelled). Throws the error the channel was closed with, after the buffered values.
    public func receive() throws -> Element? {
        try receive(upTo: 1)?.first
    }

    /// Waits for at least one value, then takes every buffered value, oldest first, up to
    /// `limit`; `nil` once the channel is closed and drained (or cancelled). Throws the error the
    /// channel was closed with, after the buffered values.
    public func receive(upTo limit: Int) throws -> [Element]? {
        try monitor.wait(until: Self.hasNews) { state -> [Element]? in try take(from: &state, upTo: limit) }
    }

    /// ``receive(upTo:)``, waiting no later than `deadline`: an empty array when nothing arrived
    /// by then (the channel still open), `nil` once it is closed and drained (or cancelled).
    public func receive(upTo limit: Int, deadline: MonotonicInstant) throws -> [Element]? {
        try monitor.wait(until: Self.hasNews, deadline: deadline) { state, ready -> [Element]? in
            ready ? try take(from: &state, upTo: limit) : []
        }
    }

    /// Whether a receiver has something to act on: a value, a close or a cancel.
    private static func hasNews(_ state: State) -> Bool { state.count > 0 || state.closed || state.cancelled }

    /// What a receiver woken by ``hasNews(_:)`` gets: up to `limit` values, oldest first, or `nil`
    /// (cancelled, or closed and drained), or the close's error once drained.
    private func take(from state: inout State, upTo limit: Int) throws -> [Element]? {
        if state.cancelled { return nil }
        if state.count == 0 {
            if let failure = state.failure { throw failure }
            return nil
        }
        var taken: [Element] = []
        taken.reserveCapacity(min(max(1, limit), state.count))
        while state.count > 0, taken.count < max(1, limit) {
            let value = state.removeFirst()
            state.weight -= weigh(value)
            taken.append(value)
        }
        return taken
    }

    /// The producers are done: consumers receive what is buffered, then `nil`, or `error` if
    /// one is given. Only the first close counts.
    public func close(throwing error: (any Error)? = nil) {
        monitor.update { state in
            guard !state.closed else { return }
            state.closed = true
            state.failure = error
        }
    }

    /// The consumers are gone: drops what is buffered; blocked and later sends return `false`.
    public func cancel() {
        monitor.update { state in
            state.cancelled = true
            state.buffer.removeAll()
            state.head = 0
            state.weight = 0
        }
    }

    /// Blocks until ``close(throwing:)`` has been called (after a ``cancel()``, to let the
    /// producer finish cleanly).
    public func waitUntilClosed() {
        monitor.wait(until: { $0.closed }) { _ in }
    }

    /// Whether ``close(throwing:)`` has been called.
    public var isClosed: Bool { monitor.withLock { $0.closed } }

    /// How many values are buffered now.
    public var count: Int { monitor.withLock { $0.count } }
}
