import Foundation
import LedgerEvents
import LedgerIntake

extension SpoolDirectory {
    /// Ingests pending files in batches; with `follow`, keeps polling until `shouldStop()`.
    ///
    /// `onProblem` is called for each entry that was refused without being read (see the type's
    /// documentation); the CLI prints them and exits non-zero.
    public func ingest(into ledger: Ledger, batchSize: Int = 256, follow: Bool = false, pollInterval: Double = 1,
                       shouldStop: () -> Bool = { false }, onProblem: (SpoolProblem) -> Void = { _ in },
                       onBatch: (IngestSummary) -> Void) throws {
        let spool = try DirectoryDescriptor(path: url.path)
        let done = try Self.subfolder("done", of: spool, at: url)
        let rejected = try Self.subfolder("rejected", of: spool, at: url)
        let processing = try Self.subfolder("processing", of: spool, at: url)
        // This consumer's claims go to a folder of its own: another consumer on the same spool
        // never reads them (it had read every file in `processing/` as a crashed run's claim).
        let claim = try SpoolClaim(in: processing)
        defer { claim.release() }
        let mine = claim.folder
        repeat {
            // Claims no running consumer holds (a crashed one's) first, then the spool's own entries (each claimed in turn).
            try claim.adoptAbandoned()
            var names: [(name: [UInt8], claimed: Bool)] = try Self.entries(of: mine).filter(Self.isCandidate).map { ($0, true) }
            names += try Self.entries(of: spool).filter(Self.isCandidate).map { ($0, false) }
            var start = 0
            while start < names.count {
                let chunk = names[start..<min(start + batchSize, names.count)]
                start += batchSize
                var messages: [InboundMessage] = []
                var claimedNames: [[UInt8]] = []
                for entry in chunk {
                    let shown = Self.printable(entry.name)
                    // Claim: from here on the name in processing/ is ours, whatever a producer renames into the spool.
                    var claimed = entry.name
                    if !entry.claimed {
                        guard let name = try Self.move(entry.name, from: spool, to: mine) else { continue }  // gone meanwhile (another consumer's)
                        claimed = name
                    }
                    switch Self.read(claimed, in: mine, limit: maxMessageBytes) {
                    case .message(let data, let rejection):
                        messages.append(InboundMessage(raw: data, source: "spool:\(shown)", origin: .spool, preRejection: rejection,
                                                       acceptsAPIResponses: acceptsAPIResponses))
                        claimedNames.append(claimed)
                    case .refused(let reason):
                        _ = try Self.move(claimed, from: mine, to: rejected)
                        onProblem(SpoolProblem(name: shown, reason: reason))
                    }
                }
                guard !messages.isEmpty else { continue }
                let (summary, outcomes) = try ledger.ingestBatch(messages)
                for (name, outcome) in zip(claimedNames, outcomes) {
                    if case .quarantined = outcome { _ = try Self.move(name, from: mine, to: rejected) } else {
                        _ = try Self.move(name, from: mine, to: done)
                    }
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
}

extension SpoolDirectory {
    /// Convenience for the CLI: stop when `stop` reports a signal.
    public func ingest(into ledger: Ledger, batchSize: Int, follow: Bool, pollInterval: Double,
                       stop: some StopRequest, onProblem: (SpoolProblem) -> Void = { _ in },
                       onBatch: (IngestSummary) -> Void) throws {
        try ingest(into: ledger, batchSize: batchSize, follow: follow, pollInterval: pollInterval,
                   shouldStop: { stop.isStopped }, onProblem: onProblem, onBatch: onBatch)
    }
}
