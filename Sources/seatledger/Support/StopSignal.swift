import Dispatch
import Foundation
import LedgerIntake
import SeatLedger
import Synchronization

/// Turns SIGINT/SIGTERM into a flag long-running loops poll, so they finish the current batch.
///
/// `@unchecked Sendable` is safe: `sources` is written once in `init` and afterwards only kept
/// alive (never mutated or read), and `stopped` is an atomic.
final class StopSignal: @unchecked Sendable, StopRequest {
    private let stopped = Atomic<Bool>(false)
    private let sources: [any DispatchSourceSignal]
    /// Run once at the first signal (``onStop(_:)``): what wakes a wait the flag cannot reach.
    private let actions = Mutex<[@Sendable () -> Void]>([])

    /// Installs handlers for SIGINT and SIGTERM. The first signal prints `what` on stderr at once
    /// ("stopping… finishing the batch in hand") and silences progress lines.
    init(stopping what: String = "finishing the work in hand; what is committed is kept") {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            return DispatchSource.makeSignalSource(signal: number, queue: .global())
        }
        for source in sources {
            source.setEventHandler { [self] in
                guard !stopped.exchange(true, ordering: .relaxed) else { return }
                Terminal.stopping.store(true, ordering: .relaxed)
                Terminal.note("stopping… \(what)")
                for action in actions.withLock({ $0 }) { action() }
            }
            source.resume()
        }
    }

    /// Whether a stop was requested.
    var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Stops as a signal would, without the note: a loop that must end for a reason of its own
    /// (the head anchor's trust configuration changed underneath an ingest).
    func request() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        for action in actions.withLock({ $0 }) { action() }
    }

    /// Runs `action` at the first signal (at once if one came already): for a wait that polling
    /// the flag cannot end, such as a read of a pipe whose writer stays quiet.
    func onStop(_ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0.append(action) }
        if isStopped { action() }
    }

    /// Gives SIGINT and SIGTERM their default effect back (end the process), for a last phase
    /// that cannot stop part-way but is safe to kill (its transaction rolls back).
    func restoreDefault() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
