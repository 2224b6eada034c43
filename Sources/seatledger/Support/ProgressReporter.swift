import Foundation
import LedgerIntake
import SeatLedger

/// Progress of a long command on stderr: done / total, rate and ETA where the total is known.
///
/// Shown when stderr is a terminal (redrawn in place unless `TERM=dumb`), or on any stderr with
/// `--progress`; never under `--quiet`; at most every half second; and not at all once a
/// SIGINT/SIGTERM asked the command to stop (``StopSignal`` prints "stopping…" instead).
final class ProgressReporter {
    private let label: String
    /// Whether anything is shown (a terminal or `--progress`, and not `--quiet`).
    let enabled: Bool
    private var lastPrint = Date.distantPast
    private let started = Date()
    private var printed = false
    /// The step of ``report(step:done:total:unit:)`` in hand, and when it began.
    private var step: (name: String, started: Date)?
    /// When the step in hand last reported (shown or not): where the next step begins.
    private var lastStepReport: Date?

    /// A reporter for `label` (`ingest`, `verify` …), enabled by `--progress` or a terminal.
    init(label: String, arguments: Arguments) {
        self.label = label
        enabled = (arguments[Flag.progress] || Terminal.stderrIsTTY) && !Terminal.isQuiet
    }

    /// Reports `count` items done (`unit`: "events", "messages"); the fraction done comes from
    /// `done`/`total` when given (bytes of a file, say), else from `count`/`totalCount`.
    func report(count: Int64, totalCount: Int64? = nil, unit: String, done: Int64? = nil, total: Int64? = nil,
                detail: String? = nil, force: Bool = false) {
        guard enabled, !Terminal.stopping.load(ordering: .relaxed) else { return }
        let now = Date()
        guard force || now.timeIntervalSince(lastPrint) >= 0.5 else { return }
        lastPrint = now
        printed = true
        Terminal.progress(Self.line(label: label, count: count, totalCount: totalCount, unit: unit, done: done, total: total,
                                    detail: detail, elapsed: now.timeIntervalSince(started)))
    }

    /// Reports `done` of `total` `unit` of one step of a command with several (a rebuild derives
    /// facts, resolves identities, writes the index): rate and ETA are the step's own, from when
    /// it first reported. A step's first and last reports are always shown.
    func report(step name: String, done: Int64, total: Int64, unit: String) {
        guard enabled, !Terminal.stopping.load(ordering: .relaxed) else { return }
        let now = Date()
        let isNew = step?.name != name
        // A step begins where the one before it was last heard from (the first, with the command):
        // its first report then has a rate, not a count over no time.
        if isNew { step = (name, lastStepReport ?? started) }
        lastStepReport = now
        guard isNew || done >= total || now.timeIntervalSince(lastPrint) >= 0.5 else { return }
        lastPrint = now
        printed = true
        Terminal.progress(Self.line(label: "\(label): \(name)", count: done, totalCount: total, unit: unit, done: nil, total: nil,
                                    detail: nil, elapsed: now.timeIntervalSince(step?.started ?? now)))
    }

    /// An ingest summary, with the bytes read of a file whose size is known.
    func report(_ summary: IngestSummary, bytesRead: Int64? = nil, totalBytes: Int64? = nil, force: Bool = false) {
        let count = Int64(summary.appended + summary.duplicates + summary.quarantined)
        report(count: count, unit: "messages", done: bytesRead, total: totalBytes,
               detail: "\(summary.appended) appended, \(summary.duplicates) duplicates, \(summary.quarantined) quarantined", force: force)
    }

    /// A free-form phase line (`rebuild: pass 2 …`).
    func phase(_ message: String) {
        guard enabled, !Terminal.stopping.load(ordering: .relaxed) else { return }
        printed = true
        Terminal.progress("\(label): \(message)")
    }

    /// Ends the in-place line so the summary starts on its own line.
    func finish() {
        if printed { Terminal.endProgressLine() }
    }

    /// The text of one progress line, e.g.
    /// `ingest: 41% (4.1 of 10.0 MB) · 12,000 messages · 3,100/s · ETA 0:02 · 12,000 appended, …`.
    static func line(label: String, count: Int64, totalCount: Int64?, unit: String, done: Int64?, total: Int64?,
                     detail: String?, elapsed: TimeInterval) -> String {
        let seconds = max(elapsed, 0.001)
        var parts: [String] = []
        var fraction: Double?
        if let done, let total, total > 0 {
            fraction = min(Double(done) / Double(total), 1)
            parts.append("\(percent(fraction!)) (\(megabytes(done)) of \(megabytes(total)) MB)")
            parts.append("\(grouped(count)) \(unit)")
        } else if let totalCount, totalCount > 0 {
            fraction = min(Double(count) / Double(totalCount), 1)
            parts.append("\(grouped(count)) of \(grouped(totalCount)) \(unit) (\(percent(fraction!)))")
        } else {
            parts.append("\(grouped(count)) \(unit)")
        }
        parts.append("\(grouped(Int64(Double(count) / seconds)))/s")
        if let fraction, fraction > 0.001, fraction < 1 {
            parts.append("ETA \(duration(seconds / fraction - seconds))")
        }
        if let detail { parts.append(detail) }
        return "\(label): " + parts.joined(separator: " · ")
    }

    static func percent(_ fraction: Double) -> String { "\(Int((fraction * 100).rounded(.down)))%" }

    static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }

    /// `12,345`.
    static func grouped(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// `0:42`, `12:05`, `1:02:03`.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }
}
