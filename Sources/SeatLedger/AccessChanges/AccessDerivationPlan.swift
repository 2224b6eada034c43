import LedgerStorage
import Projections

/// What a derivation computed in one read snapshot, for ``Ledger/commitAccessChanges(_:holdingDeliveriesUntil:)``
/// to store (``Ledger/planAccessChanges(through:cache:maxEvents:maxDueScopes:)``). Only the
/// cursor it started from decides whether it still holds: a plan made while another derivation
/// committed is dropped, not stored.
public struct AccessDerivationPlan: Sendable {
    /// The cursor the plan was derived from.
    public let from: AccessCursor
    /// The cursor once it is stored.
    public let cursor: AccessCursor
    /// The ledger's head in the plan's snapshot.
    public let head: Int64
    /// Whether it covers everything recorded and everything due through its horizon.
    public let caughtUp: Bool
    /// Scopes replayed from the store (not in the cache).
    public let replayedScopes: Int
    /// The transitions derived, in feed order (those stored already are skipped when stored).
    let rows: [AccessTransitionRow]
    /// Each scope derived, where it stands now.
    let states: [AccessScopeState]
    /// The notification events among the news, for endpoints that forward them.
    let notifications: [(eventId: String, position: Int64)]
    /// The derivers, for the cache once the plan is stored.
    let derivers: [String: AccessTransitionDeriver]

    /// How many events of news it derives.
    public var events: Int64 { cursor.position - from.position }
}
