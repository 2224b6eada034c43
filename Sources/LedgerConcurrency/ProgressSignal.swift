import Synchronization

/// A counter that only grows, and the tasks waiting for it to pass a value (in `serve`: the
/// access feed's last position, which long polls wait on, and the delivery queue's).
///
/// `advance(to:)` resumes every waiter it passes at once; a waiter also resumes at its timeout or
/// when the signal closes. No polling.
public final class ProgressSignal: Sendable {
    /// A signal at 0 with no waiters.
    public init() {}

    private struct Waiter {
        let after: Int64
        let continuation: CheckedContinuation<Int64, Never>
    }

    private struct State {
        var value: Int64 = 0
        var waiters: [UInt64: Waiter] = [:]
        var nextId: UInt64 = 0
        var closed = false
        /// Waits whose timeout came before they registered.
        var expired = Set<UInt64>()
    }

    private let state = Mutex(State())

    /// The value now.
    public var value: Int64 { state.withLock { $0.value } }

    /// Raises the value to `value` (never lowers it) and resumes the waiters it passed.
    public func advance(to value: Int64) {
        let woken: [Waiter] = state.withLock { state in
            guard value > state.value else { return [] }
            state.value = value
            let passed = state.waiters.filter { $0.value.after < value }
            for key in passed.keys { state.waiters.removeValue(forKey: key) }
            return Array(passed.values)
        }
        for waiter in woken { waiter.continuation.resume(returning: value) }
    }

    /// Raises the value by one (something new to look at).
    public func bump() {
        advance(to: value + 1)
    }

    /// Returns the value once it passes `after`, or at `timeout`, or when the signal closes.
    public func wait(after: Int64, timeout: Duration) async -> Int64 {
        let id: UInt64 = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.resume(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let immediate: Int64? = state.withLock { state in
                if state.value > after || state.closed || state.expired.remove(id) != nil { return state.value }
                state.waiters[id] = Waiter(after: after, continuation: continuation)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Resumes every waiter and every later wait at once (the service is stopping).
    public func close() {
        let woken: [Waiter] = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        let value = self.value
        for waiter in woken { waiter.continuation.resume(returning: value) }
    }

    private func resume(_ id: UInt64) {
        let waiter: Waiter? = state.withLock { state in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.expired.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.continuation.resume(returning: value)
    }
}
