import AppStoreModels
import Foundation
import JWSVerification
import LedgerEvents

/// What happened to one message handed to ``LedgerStore/append(events:rejections:)``.
public enum AppendOutcome: Sendable, Equatable {
    /// Appended at this position.
    case appended(position: Int64)
    /// Already in the ledger (same event id) at this position; nothing appended.
    case duplicate(existingPosition: Int64)
}

/// A rejected input on its way to quarantine, raw bytes kept.
public struct QuarantineItem: Sendable {
    /// Where it came from (file and line, spool name, stream id).
    public let source: String
    /// Machine code, e.g. `bad_signature`.
    public let errorCode: RejectionCode
    /// Human reason, e.g. `bad signature: …`.
    public let reason: String
    /// The input exactly as received.
    public let raw: Data

    /// Creates a quarantine item.
    public init(source: String, errorCode: RejectionCode, reason: String, raw: Data) {
        self.source = source
        self.errorCode = errorCode
        self.reason = reason
        self.raw = raw
    }
}

/// The result of one committed batch.
public struct BatchResult: Sendable {
    /// One outcome per event handed in, same order.
    public let outcomes: [AppendOutcome]
    /// Quarantine ids, one per rejection handed in, same order.
    public let quarantineIds: [Int64]
    /// The events that were appended (positions ascending).
    public let appended: [LedgerEvent]
    /// The ids of ``quarantineIds`` that were open before this batch: the same bytes refused for
    /// the same reason by an earlier run (kept once; nothing new was stored for them).
    public let earlierQuarantineIds: Set<Int64>
    /// The last position once the batch is written, as the append read it under its lock (other
    /// processes' earlier appends included); `nil` when the batch held nothing to write.
    public let head: Int64?

    /// Creates a result (for other ``LedgerStore`` implementations).
    public init(outcomes: [AppendOutcome], quarantineIds: [Int64], appended: [LedgerEvent], earlierQuarantineIds: Set<Int64> = [],
                head: Int64? = nil) {
        self.outcomes = outcomes
        self.quarantineIds = quarantineIds
        self.appended = appended
        self.earlierQuarantineIds = earlierQuarantineIds
        self.head = head
    }
}
