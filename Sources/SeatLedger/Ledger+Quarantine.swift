import EventStore
import Foundation
import LedgerEvents

/// The result of retrying quarantined inputs.
public struct QuarantineRetrySummary: Sendable, Equatable {
    /// Inputs that now verified and were appended.
    public var released = 0
    /// Inputs that now verified but were already in the ledger.
    public var duplicates = 0
    /// Inputs still refused (they stay in quarantine, reason unchanged in the record).
    public var stillRejected = 0
    /// The current reason of each still-refused id.
    public var reasons: [Int64: String] = [:]
}

extension Ledger {
    /// Re-runs verification on open quarantined inputs (all, or the given ids), e.g. after adding a
    /// root certificate. Released inputs are appended (origin `quarantine-retry`) and marked
    /// resolved in one transaction.
    ///
    /// The quarantine does not prove which path an input came by, so an `apiResponse` envelope is
    /// applied only with `acceptAPIResponses` (the operator vouching for it, `--api-responses`).
    public func retryQuarantine(ids: [Int64]? = nil, acceptAPIResponses: Bool = false) throws -> QuarantineRetrySummary {
        try requireWritable()
        let records: [QuarantineRecord]
        if let ids {
            records = try ids.compactMap { try store.quarantineRecord(id: $0) }.filter { $0.state == "open" }
        } else {
            records = try store.quarantine(state: "open")
        }
        var summary = QuarantineRetrySummary()
        var retryEvents: [NewEventForRetry] = []
        let decoder = self.decoder
        let decoded = parallelMap(records) { record in
            // `prepare`: the same checks as at ingest, the facts' identifiers included.
            decoder.prepare(InboundMessage(raw: record.raw, source: record.source, origin: .quarantineRetry,
                                           acceptsAPIResponses: acceptAPIResponses)).result
        }
        for (record, result) in zip(records, decoded) {
            switch result {
            case .success(let events):
                for (index, event) in events.enumerated() {
                    retryEvents.append(NewEventForRetry(quarantineId: record.id, event: event, isPrimary: index == 0))
                }
            case .failure(let rejection):
                summary.stillRejected += 1
                summary.reasons[record.id] = rejection.description
            }
        }
        let maintainer = ProjectionMaintainer(store: store)
        let result = try store.commitRetry(events: retryEvents) { appended in
            try maintainer.update(after: appended)
        }
        for (item, outcome) in zip(retryEvents, result.outcomes) where item.isPrimary {
            switch outcome {
            case .appended: summary.released += 1
            case .duplicate: summary.duplicates += 1
            }
        }
        return summary
    }
}
