import Foundation
import SeatLedger

/// Progress lines on stderr: shown on a TTY, or when `--progress` asks; at most every half second.
final class ProgressReporter {
    private let enabled: Bool
    private var lastPrint = Date.distantPast
    private let started = Date()

    init(enabled: Bool) { self.enabled = enabled }

    func report(_ summary: IngestSummary, force: Bool = false) {
        guard enabled else { return }
        let now = Date()
        guard force || now.timeIntervalSince(lastPrint) >= 0.5 else { return }
        lastPrint = now
        let seconds = max(now.timeIntervalSince(started), 0.001)
        let total = summary.appended + summary.duplicates + summary.quarantined
        let rate = Int(Double(total) / seconds)
        Terminal.err("ingest: \(summary.appended) appended, \(summary.duplicates) duplicates, \(summary.quarantined) quarantined (\(rate)/s)")
    }
}
