import Foundation
import LedgerEvents

/// A directory of one-message files: each is ingested, then moved to `done/` (appended or
/// duplicate) or `rejected/` (quarantined) — only after the transaction that settled it commits.
///
/// Producers should write a file under a name starting with `.` or ending in `.tmp` and rename it
/// when complete; such names are skipped.
public struct SpoolDirectory: Sendable {
    /// The spool directory.
    public let url: URL

    /// A spool at `url`.
    public init(url: URL) { self.url = url }

    /// Where settled files go.
    public var doneURL: URL { url.appendingPathComponent("done", isDirectory: true) }
    /// Where quarantined files go.
    public var rejectedURL: URL { url.appendingPathComponent("rejected", isDirectory: true) }

    /// Files waiting to be ingested, by name.
    public func pendingFiles() throws -> [URL] {
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        return names.sorted().compactMap { name in
            if name.hasPrefix(".") || name.hasSuffix(".tmp") || name == "done" || name == "rejected" { return nil }
            let file = url.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue else { return nil }
            return file
        }
    }

    /// Ingests pending files in batches; with `follow`, keeps polling until `shouldStop()`.
    public func ingest(into ledger: Ledger, batchSize: Int = 256, follow: Bool = false, pollInterval: Double = 1,
                       shouldStop: () -> Bool = { false }, onBatch: (IngestSummary) -> Void) throws {
        try FileManager.default.createDirectory(at: doneURL, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: rejectedURL, withIntermediateDirectories: true)
        repeat {
            let files = try pendingFiles()
            var start = 0
            while start < files.count {
                let chunk = Array(files[start..<min(start + batchSize, files.count)])
                start += batchSize
                var messages: [InboundMessage] = []
                var readable: [URL] = []
                for file in chunk {
                    guard let data = FileManager.default.contents(atPath: file.path) else { continue }
                    messages.append(InboundMessage(raw: data, source: "spool:\(file.lastPathComponent)"))
                    readable.append(file)
                }
                let (summary, outcomes) = try ledger.ingestBatch(messages)
                for (file, outcome) in zip(readable, outcomes) {
                    let target: URL
                    if case .quarantined = outcome { target = rejectedURL } else { target = doneURL }
                    try move(file, into: target)
                }
                onBatch(summary)
                if shouldStop() { return }
            }
            if follow {
                let deadline = Date().addingTimeInterval(pollInterval)
                while Date() < deadline, !shouldStop() { Thread.sleep(forTimeInterval: min(0.1, pollInterval)) }
            }
        } while follow && !shouldStop()
    }

    private func move(_ file: URL, into directory: URL) throws {
        var destination = directory.appendingPathComponent(file.lastPathComponent)
        if FileManager.default.fileExists(atPath: destination.path) {
            destination = directory.appendingPathComponent("\(file.lastPathComponent).\(UUID().uuidString)")
        }
        try FileManager.default.moveItem(at: file, to: destination)
    }
}

extension SpoolDirectory {
    /// Convenience for the CLI: stop when `stop` reports a signal.
    public func ingest(into ledger: Ledger, batchSize: Int, follow: Bool, pollInterval: Double,
                       stop: some StopRequest, onBatch: (IngestSummary) -> Void) throws {
        try ingest(into: ledger, batchSize: batchSize, follow: follow, pollInterval: pollInterval,
                   shouldStop: { stop.isStopped }, onBatch: onBatch)
    }
}

/// Anything that says whether a long-running loop should stop (e.g. after SIGTERM).
public protocol StopRequest {
    /// Whether to stop after the current batch.
    var isStopped: Bool { get }
}
