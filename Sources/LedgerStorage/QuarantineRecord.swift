import AppStoreModels
import Foundation
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

/// A quarantined input.
public struct QuarantineRecord: Sendable {
    /// Quarantine id.
    public let id: Int64
    /// When it was rejected (epoch ms).
    public let recordedAt: EpochMillis
    /// Where it came from.
    public let source: String
    /// Machine code, e.g. `bad_signature`.
    public let errorCode: RejectionCode
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
    public init(id: Int64, recordedAt: EpochMillis, source: String, errorCode: RejectionCode, reason: String, raw: Data,
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

/// A retry or dismissal found an item it was given no longer open: another command released,
/// dismissed or resolved it between the read and the commit. Nothing of the commit was applied.
public struct QuarantineItemNotOpen: Error, Sendable, CustomStringConvertible {
    /// The item.
    public let id: Int64
    /// Its state now (`released`, `dismissed`, `duplicate`), or `nil` when the row is gone.
    public let state: String?

    /// Creates the error.
    public init(id: Int64, state: String?) {
        self.id = id
        self.state = state
    }

    /// The text a person reads (what the CLI prints for it).
    public var description: String {
        "quarantine item #\(id) is \(state ?? "gone") now, not open: another command resolved it meanwhile; nothing was applied "
            + "(run the command again to act on the items still open)"
    }

    /// Throws for the first of `items`' quarantine ids whose state in `states` (as read inside
    /// the committing transaction, with the rows locked where the engine needs it) is not `open`:
    /// the check ``LedgerStore/appendRetry(events:)`` runs first.
    public static func check(_ items: [NewEventForRetry], states: [Int64: String]) throws(QuarantineItemNotOpen) {
        for item in items where item.isPrimary && states[item.quarantineId] != "open" {
            throw QuarantineItemNotOpen(id: item.quarantineId, state: states[item.quarantineId])
        }
    }
}
