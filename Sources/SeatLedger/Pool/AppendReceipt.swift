/// What ``LedgerPool/appendReceipts(_:)`` says of one message: its outcome and which event it is.
public struct AppendReceipt: Sendable, Equatable {
    /// Appended, duplicate or quarantined (all durable).
    public let outcome: MessageOutcome
    /// The event id of the message's own event: the one appended, or the one already in the
    /// ledger with the same id for a duplicate; `nil` when the message was quarantined.
    public let eventId: String?

    /// A receipt of `outcome` for the event `eventId`.
    public init(outcome: MessageOutcome, eventId: String?) {
        self.outcome = outcome
        self.eventId = eventId
    }

    /// The receipt of a message the pool prepared: its own event is the first its decoding yielded.
    init(outcome: MessageOutcome, prepared: PreparedMessage) {
        self.outcome = outcome
        if case .quarantined = outcome { eventId = nil } else { eventId = (try? prepared.result.get())?.first?.eventId }
    }
}
