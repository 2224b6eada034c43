#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by a mutex, with a condition variable to wait until the value is ready.
///
/// `Synchronization.Mutex` cannot be waited on (on Linux it is a bare futex, with no condition
/// variable that could release it), so the kit's blocking types use this monitor: a POSIX mutex
/// and condition variable pair. It is safe because
/// - both are allocated once on the heap and never move (a `pthread_mutex_t` stored in a Swift
///   property has no stable address to hand to C), and destroyed in `deinit`, which runs only when
///   no thread holds a reference, so no thread can be waiting on them;
/// - `state` is read and written only inside the closures below, while the mutex is held;
/// - every wait re-checks its predicate in a loop (POSIX allows spurious wake-ups), and every
///   change that can make a predicate true broadcasts;
/// - timed waits use `CLOCK_MONOTONIC` (set on the condition variable), so a wall-clock change
///   neither stretches nor cuts a timeout.
///
/// Critical sections are short (no I/O, no waiting for other work while the lock is held), so an
/// `async` function may take the lock briefly without blocking a cooperative thread for long; only
/// `wait` blocks, and only threads of their own call it.
public final class Monitor<State> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    /// A monitor holding `state`.
    public init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deinitialize(count: 1)
        condition.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the state, under the lock, without waking waiters (a read or a change no
    /// waiter waits for).
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Runs `body` with the state, under the lock, then wakes every waiter to re-check.
    public func update<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Blocks the calling thread until `ready(state)` holds, then runs `body` under the same lock
    /// and wakes the other waiters (what `body` changed may be what they wait for).
    public func wait<R>(until ready: (State) -> Bool, then body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        while !ready(state) { pthread_cond_wait(condition, mutex) }
        return try body(&state)
    }

    /// Blocks the calling thread until `ready(state)` holds or `deadline` passes, then runs `body`
    /// under the same lock with whether `ready` held, and wakes the other waiters.
    public func wait<R>(until ready: (State) -> Bool, deadline: MonotonicInstant,
                        then body: (inout State, _ ready: Bool) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        var time = deadline.posixTime
        while !ready(state) {
            if MonotonicInstant.now >= deadline { break }
            let result = pthread_cond_timedwait(condition, mutex, &time)
            if result == ETIMEDOUT { break }
        }
        let isReady = ready(state)
        return try body(&state, isReady)
    }
}

/// `@unchecked Sendable` is safe when the state is `Sendable`: every access to it happens under
/// the mutex (see the type's comment), and what leaves a closure is a `Sendable` value.
extension Monitor: @unchecked Sendable where State: Sendable {}

/// A point on the monotonic clock (`CLOCK_MONOTONIC`), for the deadlines of timed waits.
public struct MonotonicInstant: Sendable, Comparable, Hashable {
    /// Nanoseconds since an arbitrary point (the clock's epoch, usually boot).
    public let nanoseconds: UInt64

    /// The instant `nanoseconds` after the clock's epoch.
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The current instant.
    public static var now: MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec))
    }

    /// This instant moved by `duration` (negative durations move it back, not below the epoch).
    public func advanced(by duration: Duration) -> MonotonicInstant {
        let (seconds, attoseconds) = duration.components
        let delta = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = delta.overflow ? (seconds < 0 ? Int64.min : Int64.max) : delta.partialValue &+ attoseconds / 1_000_000_000
        if total >= 0 {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(total))
            return MonotonicInstant(nanoseconds: overflow ? .max : sum)
        }
        let back = total.magnitude
        return MonotonicInstant(nanoseconds: back > nanoseconds ? 0 : nanoseconds - back)
    }

    /// The time from this instant to `later` (zero if `later` is not later).
    public func duration(to later: MonotonicInstant) -> Duration {
        later.nanoseconds > nanoseconds ? .nanoseconds(Int64(clamping: later.nanoseconds - nanoseconds)) : .zero
    }

    /// Orders instants by time.
    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// The instant as the `timespec` of `pthread_cond_timedwait`.
    var posixTime: timespec {
        timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}
