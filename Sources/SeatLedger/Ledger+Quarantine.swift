import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents
import LedgerConcurrency
import LedgerIntake
import LedgerStorage

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
    /// applied only with `acceptAPIResponses` (the operator vouching for it, `--api-responses`),
    /// and a StoreKit input (whose user id is its sender's word) only with `acceptStoreKit` (`--storekit`).
    public func retryQuarantine(ids: [Int64]? = nil, acceptAPIResponses: Bool = false,
                                acceptStoreKit: Bool = false) throws -> QuarantineRetrySummary {
        try requireWritable()
        let open: [QuarantineRecord]
        if let ids {
            open = try ids.compactMap { try store.quarantineRecord(id: $0) }.filter { $0.state == "open" }
        } else {
            open = try store.quarantine(state: "open")
        }
        var summary = QuarantineRetrySummary()
        var retryEvents: [NewEventForRetry] = []
        let decoder = self.decoder
        // An input kept only as its first 64 KiB (too large to hold, or refused by the store)
        // is not the input that arrived: never released, whatever that prefix would decode to.
        let (cut, whole) = open.reduce(into: ([QuarantineRecord](), [QuarantineRecord]())) { parts, record in
            if Self.isKeptPrefix(record) { parts.0.append(record) } else { parts.1.append(record) }
        }
        for record in cut {
            summary.stillRejected += 1
            summary.reasons[record.id] = "\(record.errorCode): only the first \(record.raw.count) bytes of this input were kept, "
                + "not the input itself; it cannot be retried (resend the whole input, or dismiss this item)"
        }
        let records = whole
        let decoded = parallelMap(records) { record in
            // `prepare`: the same checks as at ingest, the facts' identifiers included.
            decoder.prepare(InboundMessage(raw: record.raw, source: record.source, origin: .quarantineRetry,
                                           acceptsAPIResponses: acceptAPIResponses, acceptsStoreKit: acceptStoreKit)).result
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
        let result = try store.write {
            let result = try store.appendRetry(events: retryEvents)
            try maintainer.update(after: result.appended)
            return result
        }
        for (item, outcome) in zip(retryEvents, result.outcomes) where item.isPrimary {
            switch outcome {
            case .appended: summary.released += 1
            case .duplicate: summary.duplicates += 1
            }
        }
        return summary
    }

    /// Whether the record's raw bytes are a cut prefix of the input (`line_too_long`,
    /// `message_too_large` and `store_refused` keep the first ``LineReader/keptPrefixBytes``
    /// of a longer input), rather than the input itself.
    static func isKeptPrefix(_ record: QuarantineRecord) -> Bool {
        RejectionCode.keptPrefix.contains(record.errorCode) && record.raw.count >= LineReader.keptPrefixBytes
    }
}

extension Ledger {
    /// Dismisses an open quarantine item: appends a `decision` event (who, why, which item and a
    /// digest of its bytes; hash-chained like every event) and marks the item `dismissed`, in one
    /// transaction. The item and its raw bytes stay; nothing is deleted.
    ///
    /// Returns the decision's position.
    @discardableResult
    public func dismissQuarantine(id: Int64, reason: String, by actor: String) throws -> Int64 {
        try requireWritable()
        guard let record = try store.quarantineRecord(id: id) else {
            throw CorrectionError("no quarantine item #\(id)")
        }
        guard record.state == "open" else {
            throw CorrectionError("quarantine item #\(id) is \(record.state), not open: nothing to dismiss")
        }
        let trimmed = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw CorrectionError("a dismissal needs a reason") }
        let now = store.clock()
        let decision: JSONValue = ["decision": [
            "action": "dismissQuarantine", "quarantineId": .int(id), "errorCode": .string(record.errorCode.rawValue),
            "source": .string(record.source), "rawSHA256": .string(SHA256Digest.hex(record.raw)),
            "reason": .string(trimmed), "by": .string(actor), "at": .int(now),
        ]]
        let raw = decision.canonicalData()
        let event = NewEvent(eventId: SHA256Digest.hex(raw), kind: .decision, type: "QuarantineDismissal", subtype: nil, status: nil,
                             occurredAt: now, raw: raw, decoded: decision, identifiers: [], verification: [],
                             source: "quarantine dismiss #\(id)", origin: .operatorDecision)
        let maintainer = ProjectionMaintainer(store: store)
        let dismissal = NewEventForRetry(quarantineId: id, event: event, isPrimary: true, resolvedState: "dismissed",
                                         resolutionText: "dismissed by \(actor): \(trimmed)")
        let result = try store.write {
            let result = try store.appendRetry(events: [dismissal])
            try maintainer.update(after: result.appended)
            return result
        }
        guard case .appended(let position)? = result.outcomes.first else {
            throw CorrectionError("the dismissal of #\(id) was already recorded")
        }
        return position
    }
}
