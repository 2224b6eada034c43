import Synchronization

/// Moves one value that is not `Sendable` (a database connection, a store) to another thread,
/// exactly once.
///
/// The value goes in with `sending` (the caller gives up every reference to it) and comes out of
/// ``take()`` with `sending`, so the compiler checks that only the receiving thread uses it from
/// then on: no `@unchecked Sendable` box is needed. A second ``take()`` is a programming error
/// and stops the process.
public final class Handoff<Value>: Sendable {
    private let slot: Mutex<Value?>

    /// Holds `value` until ``take()``.
    public init(_ value: consuming sending Value) { slot = Mutex(Optional(value)) }

    /// The value, moved out; call it once, on the thread that uses the value from then on.
    public func take() -> sending Value {
        let taken: Value? = slot.withLock { value -> sending Value? in value.take() }
        guard let taken else { preconditionFailure("a Handoff's value is taken once") }
        return taken
    }
}
