#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The CPU scheduling of the calling thread. On Linux a thread's scheduling policy is its own
/// (sched(7)), so one thread can yield to the others of its process.
///
/// `serve` plans access transitions on a thread of the `SCHED_IDLE` policy: a core runs it
/// only when no other thread wants that core, and a thread of the default policy that wakes
/// takes the core back at once (sched(7)). Work that can wait then stays out of the way of the
/// appends and requests when the cores are saturated, and runs at once when they are not. An
/// unprivileged thread cannot always leave `SCHED_IDLE` again; nothing here tries to.
public enum ThreadPriority {
    /// Linux's `SCHED_IDLE` policy number (`<sched.h>` declares it only under `_GNU_SOURCE`).
    static let idlePolicy: Int32 = 5

    /// Puts the calling thread under `SCHED_IDLE`; returns whether the system took it (`false`:
    /// the thread runs as before; a priority is a preference, never a reason to fail).
    @discardableResult
    public static func runCurrentOnlyWhenIdle() -> Bool {
        var parameters = sched_param()
        parameters.sched_priority = 0
        return sched_setscheduler(0, idlePolicy, &parameters) == 0
    }

    /// Whether the calling thread is under `SCHED_IDLE`.
    public static var currentRunsOnlyWhenIdle: Bool { sched_getscheduler(0) == idlePolicy }
}
