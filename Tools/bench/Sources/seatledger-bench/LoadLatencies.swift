import Foundation
import Synchronization

/// The samples of the load generators' threads (`post`, `get`): latencies in seconds, errors,
/// connections opened, merged once each thread is done.
final class LoadLatencies: Sendable {
    private let state = Mutex((latencies: [Double](), errors: 0, connects: 0, statuses: [Int: Int]()))

    /// Adds one thread's samples.
    func add(latencies: [Double], errors: Int, connects: Int, statuses: [Int: Int]) {
        state.withLock { state in
            state.latencies += latencies
            state.errors += errors
            state.connects += connects
            state.statuses.merge(statuses, uniquingKeysWith: +)
        }
    }

    /// `<prefix>p50_ms`, `p90`, `p99`, `p999`, `max_ms`, `errors`, `connects`, `acknowledged` and
    /// the answers that were not 200 by status (`<prefix>status_404`).
    func keys(prefix: String) -> [String: Any] {
        let (latencies, errors, connects, statuses) = state.withLock { ($0.latencies, $0.errors, $0.connects, $0.statuses) }
        let sorted = latencies.sorted()
        func ms(_ p: Double) -> Double { sorted.isEmpty ? 0 : round(percentile(sorted, p) * 1000, 2) }
        var result: [String: Any] = [
            prefix + "p50_ms": ms(50), prefix + "p90_ms": ms(90), prefix + "p99_ms": ms(99), prefix + "p999_ms": ms(99.9),
            prefix + "max_ms": round((sorted.last ?? 0) * 1000, 2), prefix + "errors": errors, prefix + "connects": connects,
            prefix + "acknowledged": latencies.count,
        ]
        for (status, count) in statuses where status != 200 { result[prefix + "status_\(status)"] = count }
        return result
    }

    /// How many answers were 200.
    var succeeded: Int { state.withLock { $0.latencies.count } }
}

/// Sleeps until `deadline` (monotonic seconds, as ``now()``).
func sleep(until deadline: Double) {
    var ts = timespec(tv_sec: Int(deadline.rounded(.down)), tv_nsec: Int((deadline - deadline.rounded(.down)) * 1e9))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
}
