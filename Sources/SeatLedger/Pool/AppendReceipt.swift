import LedgerEvents
import LedgerIntake

/// What ``LedgerPool/appendReceipts(_:)`` says of one message: its outcome and which event it is.
public struct AppendReceipt: Sendable, Equatable {
    /// Appended, duplicate or quarantined (all durable).
    public let outcome: MessageOutcome
    /// The event id of the message's own event: the one appended, or the one already in the
    /// ledger with the same id for a duplicate; `nil` when the message was quarantined.
    public let eventId: String?
    /// The identifiers of the message's own event as decoded (what a StoreKit input links, for
    /// `serve`'s answer); empty when the message was quarantined, or when its bytes were already
    /// stored and so not decoded again (a notification re-sent byte for byte).
    public let identifiers: [EventIdentifier]

    /// A receipt of `outcome` for the event `eventId`, which mentions `identifiers`.
    public init(outcome: MessageOutcome, eventId: String?, identifiers: [EventIdentifier] = []) {
        self.outcome = outcome
        self.eventId = eventId
        self.identifiers = identifiers
    }

    /// The receipt of a message the pool prepared: its own event is the first its decoding yielded.
    init(outcome: MessageOutcome, prepared: PreparedMessage) {
        self.outcome = outcome
        if case .quarantined = outcome {
            eventId = nil
            identifiers = []
        } else {
            let own = (try? prepared.result.get())?.first
            eventId = own?.eventId
            identifiers = own?.identifiers ?? []
        }
    }
}
