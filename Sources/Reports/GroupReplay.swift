import AppStoreModels
import LedgerEvents
import Projections

/// One step of a group's history: an event (or a time-driven transition) and what it changed.
public struct ReplayEntry: Sendable {
    /// When it took effect (Apple's time).
    public var effectiveAt: EpochMillis
    /// The event, or `nil` for a transition driven by time alone (a period ending with no notification).
    public var eventId: String?
    public var position: Int64?
    /// What arrived: `DID_RENEW`, `DID_CHANGE_RENEWAL_PREF / DECREASE_QUANTITY`, `GetSeatInfo → 200`.
    public var what: String
    /// When we recorded it.
    public var recordedAt: EpochMillis?
    /// Recorded well after it occurred (more than ``GroupReplay/lateThreshold``).
    public var isLate: Bool
    /// `live`, `backfill` or `recorded`.
    public var origin: String?
    /// How many more times the same event arrived (duplicates appended nothing).
    public var duplicateArrivals: Int
    /// What it changed.
    public var changes: [StateChange]
    /// The group right after it (for timelines and charts).
    public var after: StateSummary

    /// The JSON form of `replay --json`.
    public var json: JSONValue {
        [
            "effectiveAt": .timestamp(effectiveAt), "eventId": .optional(eventId), "position": .optional(position),
            "what": .string(what), "recordedAt": .timestamp(recordedAt), "late": .bool(isLate), "origin": .optional(origin),
            "backfill": .bool(origin == EventOrigin.backfill.rawValue), "duplicateArrivals": .count(duplicateArrivals),
            "synthetic": .bool(eventId == nil), "changes": .array(changes.map(\.json)), "after": after.json,
        ]
    }
}

/// Replays a group's events in effective order, describing the state change each caused.
public enum GroupReplay {
    /// An event recorded more than this long after it occurred is flagged late.
    public static let lateThreshold: EpochMillis = 3_600_000

    /// The entries of a group's history within `[from, to]` (Apple time), using events recorded by `knownAt`.
    ///
    /// - Parameters:
    ///   - now: the end of the replay when `to` is nil (time-driven transitions up to it are included).
    public static func entries(membership: GroupMembership, facts: [EventFacts], from: EpochMillis? = nil, to: EpochMillis? = nil,
                               knownAt: EpochMillis? = nil, now: EpochMillis, duplicateArrivals: [String: Int] = [:]) -> [ReplayEntry] {
        let visible = facts.filter { fact in knownAt.map { fact.recordedAt <= $0 } ?? true }
            .sorted { ($0.occurredAt, $0.eventId) < ($1.occurredAt, $1.eventId) }
        let end = to ?? max(now, visible.last?.occurredAt ?? now)
        var entries: [ReplayEntry] = []
        var previous: GroupState?
        var prefix: [EventFacts] = []
        func state(at t: EpochMillis) -> GroupState {
            GroupProjection.project(membership, facts: prefix, asOf: t, knownAt: nil)
        }
        func timeTransition(before t: EpochMillis) {
            guard let last = previous, t > last.asOf else { return }
            let moved = state(at: t - 1)
            let changes = StateComparison.changes(from: last, to: moved)
            guard !changes.isEmpty else { return }
            let at = moved.members.first(where: { $0.role == .purchaser })?.revocation?.at ?? moved.periodEnd ?? (t - 1)
            if inRange(at) {
                entries.append(ReplayEntry(effectiveAt: at, eventId: nil, position: nil, what: "time passed (no event)",
                                           recordedAt: nil, isLate: false, origin: nil, duplicateArrivals: 0, changes: changes,
                                           after: StateSummary(moved)))
            }
            previous = moved
        }
        func inRange(_ t: EpochMillis) -> Bool { (from.map { t >= $0 } ?? true) && t <= end }

        for fact in visible where fact.occurredAt <= end {
            timeTransition(before: fact.occurredAt)
            prefix.append(fact)
            let after = state(at: fact.occurredAt)
            let changes = StateComparison.changes(from: previous, to: after)
            previous = after
            guard inRange(fact.occurredAt) else { continue }
            entries.append(ReplayEntry(
                effectiveAt: fact.occurredAt, eventId: fact.eventId, position: fact.position, what: describe(fact),
                recordedAt: fact.recordedAt, isLate: fact.recordedAt - fact.occurredAt > lateThreshold, origin: fact.origin.rawValue,
                duplicateArrivals: duplicateArrivals[fact.eventId] ?? 0, changes: changes, after: StateSummary(after)))
        }
        timeTransition(before: end + 1)
        return entries
    }

    /// "DID_CHANGE_RENEWAL_PREF / DECREASE_QUANTITY" or "ClaimSeat → 200".
    public static func describe(_ fact: EventFacts) -> String {
        if fact.kind == .apiResponse {
            var text = "\(fact.type ?? "API") → \(fact.status.map(String.init) ?? "?")"
            if let code = fact.errorCode { text += " (error \(code))" }
            return text
        }
        return [fact.type ?? "notification", fact.subtype].compactMap { $0 }.joined(separator: " / ")
    }
}

/// The few numbers of a group state a timeline or chart needs.
public struct StateSummary: Sendable, Hashable {
    public var status: GroupStatus
    /// Seats paid for.
    public var seats: Int64?
    /// Claimed plus assigned seats.
    public var held: Int64
    /// Members (purchaser included) with access.
    public var withAccess: Int

    /// Summarizes a state.
    public init(_ state: GroupState) {
        status = state.status
        seats = state.seats.total
        held = state.seats.claimed + state.seats.assigned
        withAccess = state.members.filter(\.hasAccess).count
    }

    /// JSON form.
    public var json: JSONValue {
        ["status": .string(status.rawValue), "seats": .optional(seats), "held": .int(held), "withAccess": .count(withAccess)]
    }
}
