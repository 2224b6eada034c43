import AppStoreModels
import Foundation

/// A quarantined input.
public struct QuarantineRecord: Sendable {
    /// Quarantine id.
    public let id: Int64
    /// When it was rejected (epoch ms).
    public let recordedAt: EpochMillis
    /// Where it came from.
    public let source: String
    /// Machine code, e.g. `bad_signature`.
    public let errorCode: String
    /// Human reason.
    public let reason: String
    /// The input exactly as received.
    public let raw: Data
    /// `open`, `released` (appended after a retry) or `duplicate` (already in the ledger on retry).
    public let state: String
    /// When a retry resolved it.
    public let resolvedAt: EpochMillis?
    /// What the retry did, e.g. `appended at position 42`.
    public let resolution: String?

    /// Creates a record (for other ``LedgerStore`` implementations).
    public init(id: Int64, recordedAt: EpochMillis, source: String, errorCode: String, reason: String, raw: Data,
                state: String, resolvedAt: EpochMillis?, resolution: String?) {
        self.id = id
        self.recordedAt = recordedAt
        self.source = source
        self.errorCode = errorCode
        self.reason = reason
        self.raw = raw
        self.state = state
        self.resolvedAt = resolvedAt
        self.resolution = resolution
    }
}

extension EventStore {
    /// Quarantined inputs, oldest first; `state` filters (`open`, `released`, `duplicate`).
    public func quarantine(state: String? = nil, limit: Int = Int.max) throws(SQLiteError) -> [QuarantineRecord] {
        let statement: SQLiteStatement
        let columns = "id, recorded_at, source, error_code, reason, raw, state, resolved_at, resolution"
        if let state {
            statement = try connection.prepare("SELECT \(columns) FROM quarantine WHERE state = ? ORDER BY id LIMIT ?")
            try statement.bind(.text(state), .integer(Int64(min(limit, Int(Int64.max)))))
        } else {
            statement = try connection.prepare("SELECT \(columns) FROM quarantine ORDER BY id LIMIT ?")
            try statement.bind(.integer(Int64(min(limit, Int(Int64.max)))))
        }
        var records: [QuarantineRecord] = []
        while try statement.step() { records.append(readQuarantine(statement)) }
        return records
    }

    /// One quarantined input.
    public func quarantineRecord(id: Int64) throws(SQLiteError) -> QuarantineRecord? {
        let statement = try connection.prepare(
            "SELECT id, recorded_at, source, error_code, reason, raw, state, resolved_at, resolution FROM quarantine WHERE id = ?")
        defer { statement.reset() }
        try statement.bind(.integer(id))
        return try statement.step() ? readQuarantine(statement) : nil
    }

    private func readQuarantine(_ statement: SQLiteStatement) -> QuarantineRecord {
        QuarantineRecord(id: statement.int64(0), recordedAt: statement.int64(1), source: statement.text(2),
                         errorCode: statement.text(3), reason: statement.text(4), raw: statement.blob(5),
                         state: statement.text(6), resolvedAt: statement.optionalInt64(7),
                         resolution: statement.optionalText(8))
    }

    /// Marks a quarantined input resolved by a retry (called inside the retry's transaction).
    func resolveQuarantine(id: Int64, state: String, resolution: String, at time: EpochMillis) throws(SQLiteError) {
        try connection.prepare("UPDATE quarantine SET state = ?, resolved_at = ?, resolution = ? WHERE id = ?")
            .bind(.text(state), .integer(time), .text(resolution), .integer(id)).run()
        if let record = try quarantineRecord(id: id) {
            try linkRecords([(.quarantine, String(id), RecordChain.quarantineDigest(record))])
        }
    }

    /// Commits a retry: the events appended, and each quarantine id's resolution, atomically.
    ///
    /// A retried item that is rejected again stays `open` (its row is not duplicated).
    public func commitRetry(events: [NewEventForRetry], afterAppend: (([LedgerEvent]) throws -> Void)? = nil) throws -> BatchResult {
        try write {
            let result = try commitInTransaction(events: events.map(\.event), rejections: [], afterAppend: afterAppend)
            let now = clock()
            for (item, outcome) in zip(events, result.outcomes) {
                switch outcome {
                case .appended(let position):
                    let (state, resolution) = item.appendedResolution(at: position)
                    try resolveQuarantine(id: item.quarantineId, state: state, resolution: resolution, at: now)
                case .duplicate(let position):
                    if item.isPrimary {
                        try resolveQuarantine(id: item.quarantineId, state: "duplicate",
                                              resolution: "already in the ledger at position \(position)", at: now)
                    }
                }
            }
            return result
        }
    }
}

import LedgerEvents

/// An event produced by retrying a quarantined input.
public struct NewEventForRetry: Sendable {
    /// The quarantine id it came from.
    public let quarantineId: Int64
    /// The event.
    public let event: NewEvent
    /// Whether this is the input's own event (an envelope may also yield history items).
    public let isPrimary: Bool
    /// The state the quarantine row takes when the event is appended, with its resolution text
    /// (`nil`: `released`, "appended at position N"). A dismissal's decision event sets `dismissed`.
    public let resolvedState: String?
    /// The resolution text of ``resolvedState`` (the position is added).
    public let resolutionText: String?

    /// Creates a retry item.
    public init(quarantineId: Int64, event: NewEvent, isPrimary: Bool, resolvedState: String? = nil, resolutionText: String? = nil) {
        self.quarantineId = quarantineId
        self.event = event
        self.isPrimary = isPrimary
        self.resolvedState = resolvedState
        self.resolutionText = resolutionText
    }

    /// The row's state and resolution once the event is appended at `position`.
    public func appendedResolution(at position: Int64) -> (state: String, resolution: String) {
        guard let resolvedState else { return ("released", "appended at position \(position)") }
        return (resolvedState, "\(resolutionText ?? resolvedState) (decision at position \(position))")
    }
}
