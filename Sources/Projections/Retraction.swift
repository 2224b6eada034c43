import LedgerEvents

/// An operator's withdrawal of one event from every projection (`seatledger retract`).
///
/// A retraction is a `decision` event naming the retracted event's id and carrying its
/// identifiers (so it is read with the events of the groups the retracted event concerned). The
/// retracted event stays in the log, hash-chained; projections skip it from the moment the
/// retraction was recorded, so `knownAt` before that moment still shows what was believed then.
/// See `Events/projection-rules.md` (rule 12).
public enum Retraction {
    /// The `decision.action` of a retraction.
    public static let action = "retractEvent"
    /// The event `type` of a retraction.
    public static let eventType = "Retraction"

    /// `facts` without the retracted events and without the retractions themselves.
    ///
    /// Pure; the retractions count only when they are among `facts` (filter by `knownAt` first).
    public static func withdraw(_ facts: [EventFacts]) -> [EventFacts] {
        var retracted = Set<String>()
        for fact in facts { if let id = fact.retractedEventId { retracted.insert(id) } }
        guard !retracted.isEmpty else { return facts }
        return facts.filter { $0.retractedEventId == nil && !retracted.contains($0.eventId) }
    }
}
