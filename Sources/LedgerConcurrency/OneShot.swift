import Dispatch

/// A result set once and read by any number of waiters: threads block in ``wait()``, tasks
/// suspend in ``value`` (no thread is blocked while they wait).
///
/// The first ``set(_:)`` wins and wakes every waiter; later ones are ignored (and return
/// `false`), so each waiter sees the same value and every suspended task is resumed exactly once.
public final class OneShot<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var value: Value?
        var suspended: [CheckedContinuation<Value, Never>] = []
    }

    private let monitor = Monitor(State())

    /// An unset result.
    public init() {}

    /// Runs `work` on a global dispatch queue and holds its result.
    public static func running(_ work: @escaping @Sendable () -> Value) -> OneShot {
        let shot = OneShot()
        DispatchQueue.global().async { shot.set(work()) }
        return shot
    }

    /// Sets the result if none is set yet and wakes every waiter; `false` if it was set before.
    @discardableResult
    public func set(_ value: Value) -> Bool {
        let waiting: [CheckedContinuation<Value, Never>]? = monitor.update { state in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.suspended = [] }
            return state.suspended
        }
        guard let waiting else { return false }
        // Resumed outside the lock: a resumed task may run at once and use this result again.
        for continuation in waiting { continuation.resume(returning: value) }
        return true
    }

    /// Blocks the calling thread until the result is set (for threads of their own, not tasks).
    public func wait() -> Value {
        monitor.wait(until: { $0.value != nil }) { $0.value! }
    }

    /// Blocks the calling thread until the result is set or `timeout` passes (`nil` then).
    public func wait(timeout: Duration) -> Value? {
        monitor.wait(until: { $0.value != nil }, deadline: .now.advanced(by: timeout)) { state, _ in state.value }
    }

    /// The result, once set; suspends the task until then (without blocking its thread). Task
    /// cancellation does not end the wait.
    public var value: Value {
        get async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
                let ready: Value? = monitor.withLock { state in
                    if let value = state.value { return value }
                    state.suspended.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// The result if it is set, without waiting.
    public var current: Value? { monitor.withLock { $0.value } }
}
