/// A fixed set of resources (database connections) lent to one borrower at a time: a borrower
/// blocks until one is free, uses it inside a closure on its own thread, and gives it back.
///
/// GRDB's `DatabasePool` lends its reader connections this way: the read runs on the caller's
/// thread, with no hand-over to another thread and back. Only threads that may block call
/// ``lend(_:)`` (threads of their own, not Swift's cooperative pool).
///
/// ```swift
/// let connections = LendingPool([openReader(), openReader()])
/// let count = try connections.lend { connection in try connection.count() }
/// ```
///
/// `@unchecked Sendable` is safe although `Resource` need not be `Sendable`: a resource is
/// reachable only through `idle` (read and written under the monitor's lock) or by the one
/// borrower that took it out, inside its `lend` call, which puts it back before returning. The
/// lock orders a borrower's use of a resource before the next borrower's. `body` must not keep
/// the resource beyond its return (as with every lent connection).
public final class LendingPool<Resource>: @unchecked Sendable {
    private let state: Monitor<(idle: [Resource], closed: Bool)>

    /// Why ``lend(_:)`` did not run its body: ``close()`` was called.
    public struct Closed: Error, Sendable, Equatable, CustomStringConvertible {
        /// A sentence for logs.
        public var description: String { "the pool is closed; it lends nothing more" }
    }

    /// A pool lending `resources` (at least one, or every ``lend(_:)`` waits until ``close()``).
    public init(_ resources: [Resource]) { state = Monitor((resources, false)) }

    /// Runs `body` with a free resource on the calling thread, blocking until one is free; throws
    /// ``Closed`` (without running `body`) once the pool is closed, else what `body` throws.
    public func lend<R>(_ body: (Resource) throws -> R) throws -> R {
        let resource = try state.wait(until: { $0.closed || !$0.idle.isEmpty }) { state -> Resource in
            guard !state.closed else { throw Closed() }
            return state.idle.removeLast()
        }
        defer {
            // Back to the pool; once closed the resource is dropped here (its `deinit` closes it).
            state.update { state in if !state.closed { state.idle.append(resource) } }
        }
        return try body(resource)
    }

    /// Lends nothing more: drops the idle resources now, each lent one when it comes back, and
    /// wakes the borrowers that wait (they throw ``Closed``).
    public func close() {
        let dropped = state.update { state -> [Resource] in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        _ = dropped  // released here, outside the lock: closing a connection may take time
    }
}
