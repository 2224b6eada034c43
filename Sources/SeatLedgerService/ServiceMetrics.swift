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

    /// One ledger's notification counters.
    private struct NotificationCounts {
        var received = 0
        var appended = 0
        var duplicate = 0
        var failed = 0
        var quarantined: [String: Int] = [:]
    }

    private struct State {
        var notifications: [String: NotificationCounts] = [:]
        var oversize = 0
        var requests: [String: Int] = [:]  // "route\u{0}status"
        var latency: [String: Histogram] = [:]
    }

    /// What `/metrics` reads from one ledger at a scrape.
    public struct LedgerState: Sendable {
        /// The ledger's name (the `ledger` label).
        public var name: String
        /// Its last position.
        public var headPosition: Int64
        /// Seconds since its newest event was recorded (`nil`: empty, or not readable).
        public var newestEventAgeSeconds: Double?
        /// Its open quarantine items (`nil`: not readable).
        public var openQuarantineItems: Int?
        /// Its access changes and webhook deliveries (`nil`: not readable, or turned off).
        public var accessChanges: AccessChangeGauges?

        /// Creates a ledger's state.
        public init(name: String, headPosition: Int64, newestEventAgeSeconds: Double?, openQuarantineItems: Int?) {
            self.name = name
            self.headPosition = headPosition
            self.newestEventAgeSeconds = newestEventAgeSeconds
            self.openQuarantineItems = openQuarantineItems
        }
    }

    private let state = Mutex(State())

    /// A ledger's access-change figures: this process's counters and what the ledger holds.
    public struct AccessChangeGauges: Sendable {
        /// Transitions this process stored.
        public var transitionsEmitted: Int64
        /// Delivery attempts by outcome: `delivered` (2xx), `retried` (will be tried again), `failed` (retries used up).
        public var attempts: [String: Int64]
        /// Seconds since the oldest pending delivery was queued (0: none pending).
        public var oldestUndeliveredAgeSeconds: Double
        /// Enabled endpoints whose deliveries are failing.
        public var endpointsFailing: Int
        /// Events recorded and not yet derived.
        public var derivationLag: Int64

        /// Creates the figures.
        public init(transitionsEmitted: Int64, attempts: [String: Int64], oldestUndeliveredAgeSeconds: Double, endpointsFailing: Int,
                    derivationLag: Int64) {
            self.transitionsEmitted = transitionsEmitted
            self.attempts = attempts
            self.oldestUndeliveredAgeSeconds = oldestUndeliveredAgeSeconds
            self.endpointsFailing = endpointsFailing
            self.derivationLag = derivationLag
        }
    }

    /// Creates empty counters.
    public init() {}

    func received(ledger: String) { state.withLock { $0.notifications[ledger, default: .init()].received += 1 } }
    func appended(ledger: String) { state.withLock { $0.notifications[ledger, default: .init()].appended += 1 } }
    func duplicate(ledger: String) { state.withLock { $0.notifications[ledger, default: .init()].duplicate += 1 } }
    func quarantined(ledger: String, reason: String) { state.withLock { $0.notifications[ledger, default: .init()].quarantined[reason, default: 0] += 1 } }
    func failed(ledger: String) { state.withLock { $0.notifications[ledger, default: .init()].failed += 1 } }
    func oversize() { state.withLock { $0.oversize += 1 } }

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
    /// The Prometheus text exposition (format 0.0.4): the counters, with each ledger's
    /// notification counters, head, newest event age and open quarantine items labelled
    /// `ledger="NAME"`.
    public func render(ledgers: [LedgerState], inFlight: Int, build: ServiceBuild) -> String {
        render(ledgers: ledgers, inFlight: inFlight, build: build, process: nil)
    }

    func render(ledgers: [LedgerState], inFlight: Int, build: ServiceBuild, process: ProcessMetrics?) -> String {
        let snapshot = state.withLock { $0 }
        var out = "# HELP seatledger_build_info The running build: its version and commit.\n# TYPE seatledger_build_info gauge\n"
        out += "seatledger_build_info{version=\"\(Self.label(build.version))\",commit=\"\(Self.label(build.commit))\"} 1\n"
        let names = ledgers.map(\.name)
        func perLedger(_ name: String, _ type: String, _ help: String, _ value: (String) -> Int?) {
            out += "# HELP seatledger_\(name) \(help)\n# TYPE seatledger_\(name) \(type)\n"
            for ledger in names {
                if let value = value(ledger) { out += "seatledger_\(name){ledger=\"\(Self.label(ledger))\"} \(value)\n" }
            }
        }
        let counts = { (ledger: String) in snapshot.notifications[ledger] ?? NotificationCounts() }
        perLedger("notifications_received_total", "counter", "Notification requests received on POST /notifications, by the ledger they were routed to.") { counts($0).received }
        perLedger("notifications_appended_total", "counter", "Notifications appended to the ledger.") { counts($0).appended }
        perLedger("notifications_duplicate_total", "counter", "Notifications already in the ledger (acknowledged again).") { counts($0).duplicate }
        out += "# HELP seatledger_notifications_quarantined_total Notifications refused and quarantined with their raw bytes, by ledger and reason "
            + "(no_ledger_for_notification: fits no ledger of the deployment).\n"
        out += "# TYPE seatledger_notifications_quarantined_total counter\n"
        for ledger in names {
            for (reason, value) in counts(ledger).quarantined.sorted(by: { $0.key < $1.key }) {
                out += "seatledger_notifications_quarantined_total{ledger=\"\(Self.label(ledger))\",reason=\"\(Self.label(reason))\"} \(value)\n"
            }
        }
        perLedger("notifications_failed_total", "counter", "Notifications that could not be stored (answered 503).") { counts($0).failed }
        out += "# HELP seatledger_notifications_oversize_total Requests whose body exceeded the limit (answered 413, nothing stored).\n"
        out += "# TYPE seatledger_notifications_oversize_total counter\nseatledger_notifications_oversize_total \(snapshot.oversize)\n"
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
        perLedger("ledger_head_position", "gauge", "The ledger's last position.") { name in ledgers.first { $0.name == name }.map { Int($0.headPosition) } }
        out += "# HELP seatledger_ledger_newest_event_age_seconds Seconds since the ledger's newest event was recorded.\n"
        out += "# TYPE seatledger_ledger_newest_event_age_seconds gauge\n"
        for ledger in ledgers {
            if let age = ledger.newestEventAgeSeconds { out += "seatledger_ledger_newest_event_age_seconds{ledger=\"\(Self.label(ledger.name))\"} \(age)\n" }
        }
        perLedger("quarantine_open_items", "gauge", "Quarantined inputs still open (read from the ledger: survives restarts).") { name in
            ledgers.first { $0.name == name }?.openQuarantineItems
        }
        let access = { (name: String) in ledgers.first { $0.name == name }?.accessChanges }
        perLedger("access_transitions_emitted_total", "counter", "Access transitions this process derived and stored (GET /v1/access-changes).") { name in
            access(name).map { Int($0.transitionsEmitted) }
        }
        perLedger("access_derivation_lag_events", "gauge", "Events recorded and not yet derived into access transitions.") { name in
            access(name).map { Int($0.derivationLag) }
        }
        out += "# HELP seatledger_webhook_attempts_total Webhook delivery attempts by this process, by outcome (delivered: 2xx; retried: tried again later; failed: retries used up).\n"
        out += "# TYPE seatledger_webhook_attempts_total counter\n"
        for ledger in ledgers {
            guard let gauges = ledger.accessChanges else { continue }
            for outcome in ["delivered", "retried", "failed"] {
                out += "seatledger_webhook_attempts_total{ledger=\"\(Self.label(ledger.name))\",outcome=\"\(outcome)\"} \(gauges.attempts[outcome] ?? 0)\n"
            }
        }
        out += "# HELP seatledger_webhook_oldest_undelivered_age_seconds Seconds since the oldest delivery still pending was queued (0: none).\n"
        out += "# TYPE seatledger_webhook_oldest_undelivered_age_seconds gauge\n"
        for ledger in ledgers {
            guard let gauges = ledger.accessChanges else { continue }
            out += "seatledger_webhook_oldest_undelivered_age_seconds{ledger=\"\(Self.label(ledger.name))\"} \(Self.number(gauges.oldestUndeliveredAgeSeconds))\n"
        }
        perLedger("webhook_endpoints_failing", "gauge", "Enabled webhook endpoints with a delivery whose retries ran out and no success since.") { name in
            access(name)?.endpointsFailing
        }
        if let process { out += process.exposition }
        return out
    }
}
