import LedgerEvents

/// Which of an event's identifiers the identifier index (`event_keys`) stores as rows, and how a
/// read puts back the one it does not: the rule written once for every engine.
///
/// A notification's `notificationUUID` is its event id, which the log's own unique `event_id`
/// column already indexes. Until schema 5 the identifier index repeated it as a row. The UUID is
/// random, so each append put one more random leaf page of the index into its commit, a page a
/// small group commit (the webhook's) does not share with other notifications.
///
/// So from schema 5 an append stores no row for the identifier an event's own id implies
/// (``implied(eventId:kind:)``), and every read of the index finds it through `events.event_id`:
/// an event's identifiers gain it back (``identifiers(rows:eventId:kind:)``), and a lookup by
/// value (of any kind, or of kind `notificationUUID`) also looks up notifications by their id
/// (``readsEventIds(for:)``). A ledger written before keeps its rows; a read of both finds the
/// identifier once. What the index answers is the same as before.
public enum IdentifierIndexRows {
    /// The kind of the identifier that a notification's event id is.
    public static let impliedKind = IdentifierKind.notificationUUID

    /// The identifier the event's own id stands for, which the index does not store as a row: a
    /// notification's `notificationUUID`. `nil` for other events (an API response's id is a digest
    /// of its envelope, which no identifier names; a decision's is its own).
    public static func implied(eventId: String, kind: EventKind) -> EventIdentifier? {
        kind == .notification ? EventIdentifier(impliedKind, eventId) : nil
    }

    /// The rows an append or a copy writes for an event mentioning `identifiers`: all but the one
    /// its id implies.
    public static func stored(_ identifiers: some Sequence<EventIdentifier>, eventId: String, kind: EventKind) -> Set<EventIdentifier> {
        var rows = Set(identifiers)
        if let own = implied(eventId: eventId, kind: kind) { rows.remove(own) }
        return rows
    }

    /// An event's identifiers from its stored `rows`, the implied one included, ordered by kind
    /// then value, byte by byte (the index's own order: SQLite's BINARY, PostgreSQL's `"C"`).
    public static func identifiers(rows: [EventIdentifier], eventId: String, kind: EventKind) -> [EventIdentifier] {
        var all = Set(rows)
        if let own = implied(eventId: eventId, kind: kind) { all.insert(own) }
        return all.sorted { lhs, rhs in
            lhs.kind.rawValue == rhs.kind.rawValue
                ? lhs.value.utf8.lexicographicallyPrecedes(rhs.value.utf8)
                : lhs.kind.rawValue.utf8.lexicographicallyPrecedes(rhs.kind.rawValue.utf8)
        }
    }

    /// Whether a lookup of identifiers of `kind` (`nil`: any kind) must also find notifications by
    /// their event id.
    public static func readsEventIds(for kind: IdentifierKind?) -> Bool {
        kind.map { $0 == impliedKind } ?? true
    }
}
