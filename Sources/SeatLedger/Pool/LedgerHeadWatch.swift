import Foundation
import LedgerConcurrency
import Synchronization

/// The ledger head a ``LedgerPool`` knows of, and the tasks waiting for it to pass a position
/// (the change feed's long poll).
///
/// The writer calls ``advance(to:)`` after every commit, which resumes at once every waiter whose
/// position the head has passed: no polling. Two things need a clock, and a thread of its own
/// (``run()``) handles both with one timed wait on the monitor's condition variable: a waiter's
/// timeout, and, because other processes may append to the same ledger, a re-check of the
/// store's head at most once per `recheckInterval` while anyone is waiting (done by a pool reader,
/// so the latency for another process's append is bounded by the interval).
final class LedgerHeadWatch: Sendable {
    private struct Waiter: Sendable {
        let after: Int64
        let deadline: MonotonicInstant
        let continuation: CheckedContinuation<Int64, Never>
    }

    private struct State: Sendable {
        var head: Int64 = 0
        var waiters: [UInt64: Waiter] = [:]
        var nextId: UInt64 = 0
        /// Bumped whenever a waiter arrives, so the clock thread recomputes its deadline.
        var version: UInt64 = 0
        var recheckAt: MonotonicInstant?
        var closed = false
    }

    private let monitor = Monitor(State())
    private let cachedHead = Atomic<Int64>(0)
    private let recheckInterval: Duration
    private let exited = OneShot<Void>()
    /// Reads the store's head on a pool reader and reports it with ``advance(to:)``; `false`
    /// when the readers are closed.
    private let recheck: Mutex<(@Sendable () -> Bool)?> = Mutex(nil)

    /// A watch whose clock thread is started by ``start(recheck:)``.
    init(recheckInterval: Duration) {
        self.recheckInterval = max(recheckInterval, .milliseconds(1))
    }

    /// Starts the clock thread; `recheck` submits a read of the store's head.
    func start(recheck: @escaping @Sendable () -> Bool) {
        self.recheck.withLock { $0 = recheck }
        let thread = Thread.named("sl-pool-head") { [self] in
            run()
            exited.set(())
        }
        thread.start()
    }

    /// The last head seen (no I/O).
    var head: Int64 { cachedHead.load(ordering: .acquiring) }

    /// Raises the known head to `position` (never lowers it) and resumes every waiter it passed.
    func advance(to position: Int64) {
        let woken: [Waiter] = monitor.withLock { state in
            guard position > state.head else { return [] }
            state.head = position
            cachedHead.store(position, ordering: .releasing)
            let passed = state.waiters.filter { $0.value.after < position }
            for id in passed.keys { state.waiters[id] = nil }
            return Array(passed.values)
        }
        for waiter in woken { waiter.continuation.resume(returning: position) }
    }

    /// Suspends until the head passes `position` or `deadline` comes; returns the head then.
    func wait(after position: Int64, deadline: MonotonicInstant) async -> Int64 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int64, Never>) in
            let answer: Int64? = monitor.update { state in
                if state.head > position || state.closed || deadline <= .now { return state.head }
                state.waiters[state.nextId] = Waiter(after: position, deadline: deadline, continuation: continuation)
                state.nextId += 1
                state.version += 1
                if state.recheckAt == nil { state.recheckAt = MonotonicInstant.now.advanced(by: recheckInterval) }
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Resumes every waiter with the head as it is and stops the clock thread; later waits return
    /// at once. Calling it again does nothing more.
    func close() {
        recheck.withLock { $0 = nil }   // it holds this watch: break the cycle
        let woken: ([Waiter], Int64) = monitor.update { state in
            state.closed = true
            defer { state.waiters = [:] }
            return (Array(state.waiters.values), state.head)
        }
        for waiter in woken.0 { waiter.continuation.resume(returning: woken.1) }
    }

    /// Waits (suspending) until the clock thread has exited.
    func waitUntilExited() async { await exited.value }

    /// The clock thread: times out waiters and re-checks the store's head while anyone waits.
    private func run() {
        var seen: UInt64 = 0
        var deadline = MonotonicInstant.now.advanced(by: .seconds(3600))
        while true {
            let (expired, head, recheckDue, stop): ([Waiter], Int64, Bool, Bool) = monitor.wait(
                until: { $0.closed || $0.version != seen }, deadline: deadline
            ) { state, _ in
                if state.closed { return ([], state.head, false, true) }
                seen = state.version
                let now = MonotonicInstant.now
                let due = state.waiters.filter { $0.value.deadline <= now }
                for id in due.keys { state.waiters[id] = nil }
                var recheckDue = false
                if state.waiters.isEmpty {
                    state.recheckAt = nil
                } else if let at = state.recheckAt, at <= now {
                    recheckDue = true
                    state.recheckAt = now.advanced(by: recheckInterval)
                }
                // Sleep until the next timeout or re-check, or until a waiter arrives.
                var next = now.advanced(by: .seconds(3600))
                for waiter in state.waiters.values where waiter.deadline < next { next = waiter.deadline }
                if let at = state.recheckAt, at < next { next = at }
                deadline = next
                return (Array(due.values), state.head, recheckDue, false)
            }
            for waiter in expired { waiter.continuation.resume(returning: head) }
            if stop { return }
            if recheckDue, let submit = recheck.withLock({ $0 }) { _ = submit() }
        }
    }
}
