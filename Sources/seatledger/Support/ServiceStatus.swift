import AppStoreModels
import Foundation
import LedgerIntake
import SeatLedger
import SeatLedgerRedis

/// The status line of a long-running consumer (`ingest --follow`, `ingest --from redis://…`):
/// one JSON object on stderr every `--status-interval` seconds (default 60) when stderr is not a
/// terminal (a service's journal), so an operator sees it is alive, what it did and how far
/// behind it is:
///
/// `{"status": {"at", "source", "uptimeSeconds", "appended", "duplicates", "quarantined",
///   "ledgerHead", "queue": {"pending", "lag", "lastId", "acknowledged", "reconnects"},
///   "lastError": {"at", "message"} | null}}`
///
/// Lines are written from the consumer's own thread when it polls for a stop (every poll
/// interval or Redis block, a second by default), never in the middle of a batch. `--status-interval 0`
/// or `--quiet` turns them off; on a terminal the progress line shows the same counts.
final class ServiceStatus {
    private let source: String
    private let interval: TimeInterval?
    private let started = Date()
    private var lastLine = Date()
    private var summary = IngestSummary()
    private var head: Int64?
    private var queue: QueueIngestStats?
    private var lastError: (at: EpochMillis, message: String)?

    /// `--status-interval S`: seconds between status lines (default 60; 0: none).
    static let interval = Option<TimeInterval>(
        "status-interval", value: "S", help: """
        with --follow or --from, when stderr is not a terminal (a service's
        journal): one JSON status line every S seconds (default 60; 0: none):
        {"status": {"at", "source", "uptimeSeconds", "appended", "duplicates",
        "quarantined", "ledgerHead", "queue": {"pending", "lag", "lastId",
        "acknowledged", "reconnects"} (--from), "lastError": {"at", "message"}}}
        """, default: 60, parse: OptionParser { text in
            guard let value = Double(text), value.isFinite, value >= 0 else {
                throw OptionValueError("must be a number of seconds (0 turns status lines off), got \(text)")
            }
            return value
        })

    /// A status for `source` (a spool directory, a redacted Redis URL); off on a terminal.
    init(source: String, arguments: Arguments) throws {
        self.source = source
        let seconds = try arguments[Self.interval]
        interval = seconds > 0 && !Terminal.stderrIsTTY && !Terminal.isQuiet ? seconds : nil
    }

    /// Whether status lines are written at all.
    var isEnabled: Bool { interval != nil }

    /// Counts of a spool batch.
    func record(_ batch: IngestSummary, head: Int64?) {
        summary.add(batch)
        if let head { self.head = head }
    }

    /// The consumer's cumulative stats (Redis).
    func record(_ stats: QueueIngestStats, head: Int64?) {
        queue = stats
        summary = stats.summary
        if let head { self.head = head }
    }

    /// The ledger head as of now (read between batches on the consumer's thread).
    func noteHead(_ position: Int64) { head = position }

    /// A failure the consumer survived (a lost Redis connection, a failed scan).
    func recordError(_ message: String) {
        lastError = (Clocks.now, message)
    }

    /// Writes a line when the interval has passed; call it whenever the consumer polls.
    func tick() {
        guard let interval, Date().timeIntervalSince(lastLine) >= interval else { return }
        write()
    }

    /// Writes a line now (also the last one, when the consumer stops).
    func write() {
        guard interval != nil else { return }
        lastLine = Date()
        FileHandle.standardError.write(Data((line().canonicalString() + "\n").utf8))
    }

    /// The status object.
    func line() -> JSONValue {
        var status: [String: JSONValue] = [
            "at": .timestamp(Clocks.now), "source": .string(source),
            "uptimeSeconds": .int(Int64(Date().timeIntervalSince(started))),
            "appended": .count(summary.appended), "duplicates": .count(summary.duplicates),
            "quarantined": .count(summary.quarantined), "ledgerHead": .optional(head),
            "lastError": lastError.map { ["at": .timestamp($0.at), "message": .string($0.message)] } ?? .null,
        ]
        if let queue {
            status["queue"] = ["pending": .int(queue.pending), "lag": .optional(queue.lag), "lastId": .optional(queue.lastId),
                               "acknowledged": .count(queue.acknowledged), "reconnects": .count(queue.reconnects)]
        }
        return ["status": .object(status)]
    }
}
