import Foundation
import Synchronization

/// The service's counters and latency histograms, rendered in the Prometheus text format.
///
/// Series (all prefixed `seatledger_`):
/// - `notifications_received_total`, `notifications_appended_total`,
///   `notifications_duplicate_total`, `notifications_quarantined_total{reason}`,
///   `notifications_failed_total` (answered 503), `notifications_oversize_total` (answered 413);
/// - `http_requests_total{route,status}`, `http_request_duration_seconds{route}` (histogram; a
///   long poll of `/v1/changes` is counted, not timed);
/// - `http_requests_in_flight` (gauge);
/// - `ledger_head_position`, `ledger_newest_event_age_seconds` (gauges, read at scrape time);
/// - `build_info{version,commit}` (always 1), `quarantine_open_items` (gauge, from the ledger);
/// - and, without the prefix, the `process_*` series of Prometheus client libraries (``ProcessMetrics``).
public final class ServiceMetrics: Sendable {
    /// Histogram bucket upper bounds, seconds.
    static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    private struct Histogram {
        var counts = [Int](repeating: 0, count: ServiceMetrics.buckets.count)
        var count = 0
        var sum = 0.0
    }

    private struct State {
        var received = 0
        var appended = 0
        var duplicate = 0
        var failed = 0
        var oversize = 0
        var quarantined: [String: Int] = [:]
        var requests: [String: Int] = [:]  // "route\u{0}status"
        var latency: [String: Histogram] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty registry.
    public init() {}

    /// A notification arrived (before its outcome is known).
    func received() { state.withLock { $0.received += 1 } }
    /// A notification was appended.
    func appended() { state.withLock { $0.appended += 1 } }
    /// A notification was already in the ledger.
    func duplicate() { state.withLock { $0.duplicate += 1 } }
    /// A notification was quarantined with `reason` (its rejection code).
    func quarantined(reason: String) { state.withLock { $0.quarantined[reason, default: 0] += 1 } }
    /// A notification could not be stored (503).
    func failed() { state.withLock { $0.failed += 1 } }
    /// A body was over the limit (413).
    func oversize() { state.withLock { $0.oversize += 1 } }

    /// One answered request on `route` (a pattern such as `/v1/groups/{ref}`, never the raw path);
    /// `seconds` is `nil` for a request that waited on purpose (a long poll of `/v1/changes`), which
    /// is counted but kept out of the latency histogram, where its wait would read as slowness.
    func observe(route: String, status: Int, seconds: Double?) {
        state.withLock { state in
            state.requests["\(route)\u{0}\(status)", default: 0] += 1
            guard let seconds else { return }
            var histogram = state.latency[route] ?? Histogram()
            for (index, bound) in Self.buckets.enumerated() where seconds <= bound { histogram.counts[index] += 1 }
            histogram.count += 1
            histogram.sum += seconds
            state.latency[route] = histogram
        }
    }

    private static func label(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// The text exposition (format 0.0.4), with the ledger gauges given by the caller.
    public func render(headPosition: Int64, newestEventAgeSeconds: Double?, inFlight: Int, build: ServiceBuild,
                       openQuarantineItems: Int? = nil) -> String {
        render(headPosition: headPosition, newestEventAgeSeconds: newestEventAgeSeconds, inFlight: inFlight, build: build,
               openQuarantineItems: openQuarantineItems, process: nil)
    }

    /// The text exposition with this process's `process_*` series (`process` read at the scrape).
    func render(headPosition: Int64, newestEventAgeSeconds: Double?, inFlight: Int, build: ServiceBuild,
                openQuarantineItems: Int?, process: ProcessMetrics?) -> String {
        let snapshot = state.withLock { $0 }
        var out = "# HELP seatledger_build_info The running build: its version and commit.\n# TYPE seatledger_build_info gauge\n"
        out += "seatledger_build_info{version=\"\(Self.label(build.version))\",commit=\"\(Self.label(build.commit))\"} 1\n"
        func counter(_ name: String, _ help: String, _ value: Int) {
            out += "# HELP seatledger_\(name) \(help)\n# TYPE seatledger_\(name) counter\nseatledger_\(name) \(value)\n"
        }
        counter("notifications_received_total", "Notification requests received on POST /notifications.", snapshot.received)
        counter("notifications_appended_total", "Notifications appended to the ledger.", snapshot.appended)
        counter("notifications_duplicate_total", "Notifications already in the ledger (acknowledged again).", snapshot.duplicate)
        out += "# HELP seatledger_notifications_quarantined_total Notifications refused and quarantined with their raw bytes, by reason.\n"
        out += "# TYPE seatledger_notifications_quarantined_total counter\n"
        for (reason, value) in snapshot.quarantined.sorted(by: { $0.key < $1.key }) {
            out += "seatledger_notifications_quarantined_total{reason=\"\(Self.label(reason))\"} \(value)\n"
        }
        counter("notifications_failed_total", "Notifications that could not be stored (answered 503).", snapshot.failed)
        counter("notifications_oversize_total", "Requests whose body exceeded the limit (answered 413, nothing stored).", snapshot.oversize)
        out += "# HELP seatledger_http_requests_total HTTP requests answered, by route and status.\n# TYPE seatledger_http_requests_total counter\n"
        for (key, value) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            out += "seatledger_http_requests_total{route=\"\(Self.label(String(parts[0])))\",status=\"\(parts[1])\"} \(value)\n"
        }
        out += "# HELP seatledger_http_request_duration_seconds Time from a complete request to its response, by route.\n"
        out += "# TYPE seatledger_http_request_duration_seconds histogram\n"
        for (route, histogram) in snapshot.latency.sorted(by: { $0.key < $1.key }) {
            let name = Self.label(route)
            for (index, bound) in Self.buckets.enumerated() {
                out += "seatledger_http_request_duration_seconds_bucket{route=\"\(name)\",le=\"\(bound)\"} \(histogram.counts[index])\n"
            }
            out += "seatledger_http_request_duration_seconds_bucket{route=\"\(name)\",le=\"+Inf\"} \(histogram.count)\n"
            out += "seatledger_http_request_duration_seconds_sum{route=\"\(name)\"} \(histogram.sum)\n"
            out += "seatledger_http_request_duration_seconds_count{route=\"\(name)\"} \(histogram.count)\n"
        }
        out += "# HELP seatledger_http_requests_in_flight Requests received and not yet answered (this scrape included).\n"
        out += "# TYPE seatledger_http_requests_in_flight gauge\nseatledger_http_requests_in_flight \(inFlight)\n"
        out += "# HELP seatledger_ledger_head_position The ledger's last position.\n# TYPE seatledger_ledger_head_position gauge\n"
        out += "seatledger_ledger_head_position \(headPosition)\n"
        out += "# HELP seatledger_ledger_newest_event_age_seconds Seconds since the newest event was recorded.\n"
        out += "# TYPE seatledger_ledger_newest_event_age_seconds gauge\n"
        if let age = newestEventAgeSeconds { out += "seatledger_ledger_newest_event_age_seconds \(age)\n" }
        if let openQuarantineItems {
            out += "# HELP seatledger_quarantine_open_items Quarantined inputs still open (read from the ledger: survives restarts).\n"
            out += "# TYPE seatledger_quarantine_open_items gauge\nseatledger_quarantine_open_items \(openQuarantineItems)\n"
        }
        if let process { out += process.exposition }
        return out
    }
}
