import AppStoreModels
import LedgerEvents
import Projections

/// An event cited as the explanation of a difference.
public struct ExplainingEvent: Sendable, Hashable {
    /// The event's id (notification UUID or API-response id).
    public var eventId: String
    /// Its position in the ledger's log.
    public var position: Int64
    /// What arrived: `TYPE / SUBTYPE`, or `Endpoint → status`.
    public var what: String
    /// When Apple signed it, or the API responded.
    public var occurredAt: EpochMillis
    /// When the ledger recorded it.
    public var recordedAt: EpochMillis
    /// How it reached the ledger (`live`, `backfill`, `recorded`, `webhook`, …).
    public var origin: String

    init(_ fact: EventFacts) {
        eventId = fact.eventId
        position = fact.position
        what = GroupReplay.describe(fact)
        occurredAt = fact.occurredAt
        recordedAt = fact.recordedAt
        origin = fact.origin.rawValue
    }

    /// JSON form.
    public var json: JSONValue {
        ["eventId": .string(eventId), "position": .int(position), "what": .string(what), "occurredAt": .timestamp(occurredAt),
         "recordedAt": .timestamp(recordedAt), "origin": .string(origin)]
    }
}

/// The difference between two views of one group, with the events that explain it.
public struct GroupDiff: Sendable {
    /// `known-at` (a backfill / late events) or `as-of` (the group changing over time).
    public var mode: String
    /// The group at the first point given (`known-at`: as known at `a`; `as-of`: as of `a`).
    public var before: GroupState
    /// The group at the second point given (`b`); its `groupKey` names the diff.
    public var after: GroupState
    /// What changed from `before` to `after`, as replay change objects; empty when the views agree.
    public var changes: [StateChange]
    /// Events recorded (known-at) or effective (as-of) between the two points that concern the group.
    public var explainingEvents: [ExplainingEvent]

    /// Whether the two views differ.
    public var hasDifferences: Bool { !changes.isEmpty }

    /// Compares the group as known at `a` with as known at `b` (both evaluated as of `asOf`).
    public static func knownAt(_ a: EpochMillis, _ b: EpochMillis, membership: GroupMembership, facts: [EventFacts], asOf: EpochMillis) -> GroupDiff {
        let before = GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: a)
        let after = GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: b)
        let (lo, hi) = (min(a, b), max(a, b))
        // Events effective by `asOf` (valid time from the payload: a REVOKE signed after `asOf`
        // whose revocationDate is before it explains the difference).
        let times = EffectiveTimes(facts.filter { $0.recordedAt <= hi })
        let events = facts.filter { $0.recordedAt > lo && $0.recordedAt <= hi && times.effectiveAt($0) <= asOf }
            .sorted { ($0.occurredAt, $0.eventId) < ($1.occurredAt, $1.eventId) }.map(ExplainingEvent.init)
        return GroupDiff(mode: "known-at", before: before, after: after, changes: StateComparison.changes(from: before, to: after),
                         explainingEvents: events)
    }

    /// Compares the group as of `a` with as of `b` (using events recorded by `knownAt`).
    public static func asOf(_ a: EpochMillis, _ b: EpochMillis, membership: GroupMembership, facts: [EventFacts], knownAt: EpochMillis?) -> GroupDiff {
        let before = GroupProjection.project(membership, facts: facts, asOf: a, knownAt: knownAt)
        let after = GroupProjection.project(membership, facts: facts, asOf: b, knownAt: knownAt)
        let (lo, hi) = (min(a, b), max(a, b))
        let known = facts.filter { fact in knownAt.map { fact.recordedAt <= $0 } ?? true }
        let times = EffectiveTimes(known)
        let events = known.filter { times.effectiveAt($0) > lo && times.effectiveAt($0) <= hi }
            .sorted { ($0.occurredAt, $0.eventId) < ($1.occurredAt, $1.eventId) }.map(ExplainingEvent.init)
        return GroupDiff(mode: "as-of", before: before, after: after, changes: StateComparison.changes(from: before, to: after),
                         explainingEvents: events)
    }

    /// JSON form of `diff --json`.
    public var json: JSONValue {
        [
            "mode": .string(mode), "groupKey": .string(after.groupKey),
            "before": ["asOf": .timestamp(before.asOf), "knownAt": .timestamp(before.knownAt)],
            "after": ["asOf": .timestamp(after.asOf), "knownAt": .timestamp(after.knownAt)],
            "differences": .bool(hasDifferences), "changes": .array(changes.map(\.json)),
            "explainingEvents": .array(explainingEvents.map(\.json)),
        ]
    }

    /// Text form.
    public var text: String {
        // The labels say which axis moved ("known at …" or "as of …"); the mode is not repeated.
        var lines = ["Group \(after.groupKey): \(label(before)) → \(label(after))"]
        if changes.isEmpty { lines.append("No differences.") }
        for change in changes { lines.append("  • \(change.text)") }
        if !explainingEvents.isEmpty {
            lines.append("Explained by \(explainingEvents.count) event(s):")
            for event in explainingEvents {
                lines.append("  #\(event.position) \(Timestamp.iso8601(event.occurredAt))  \(event.what)  (recorded \(Timestamp.iso8601(event.recordedAt)), \(event.origin))  \(event.eventId)")
            }
        }
        return lines.joined(separator: "\n")
    }

    private func label(_ state: GroupState) -> String {
        mode == "known-at" ? "known at \(state.knownAt.map(Timestamp.iso8601) ?? "now")" : "as of \(Timestamp.iso8601(state.asOf))"
    }
}

/// Our projection against Apple's latest recorded view (Get Seat Info, Get Group Members).
public struct AppleComparison: Sendable {
    /// The key of the group compared (as `group show` prints it).
    public var groupKey: String
    /// Seat drift (`before` ours, `after` Apple's), plus `groupMembers` when the latest Get Group Members differs.
    public var differences: [StateChange]
    /// When Apple's latest view was observed.
    public var appleObservedAt: EpochMillis?
    /// Our latest event time for the group.
    public var oursLatestAt: EpochMillis?
    /// Which side is older: `apple`, `ours`, or `none` (no Apple view recorded).
    public var olderSide: String

    /// Pages of one Get Group Members listing are recorded within this long of the last page.
    public static let pageWindow: EpochMillis = 60_000

    /// Compares the state's Apple view and the latest Get Group Members listing (all its pages) with our members.
    public static func compare(state: GroupState, facts: [EventFacts]) -> AppleComparison {
        var differences = state.drift.map {
            StateChange(field: $0.field, member: nil, before: $0.ours, after: $0.apple,
                        text: GroupText.driftText($0, group: state))
        }
        var observed = state.apple?.observedAt
        let listings = facts.filter { $0.membersGroupId != nil && state.groupIds.contains($0.membersGroupId ?? "") && $0.isSuccessfulResponse }
        if let listing = listings.max(by: { $0.occurredAt < $1.occurredAt }) {
            // Get Group Members is paged: the pages of the latest listing arrive within moments of
            // each other, so Apple's roster is the union of every page recorded in the minute before the last one.
            let pages = listings.filter { $0.occurredAt >= listing.occurredAt.saturatingSubtract(pageWindow) }
            let apple = Set(pages.flatMap(\.memberAppTransactionIds)).subtracting([SandboxPlaceholder.memberAppTransactionId])
            let ours = Set(state.members.filter(\.hasAccess).compactMap(\.appTransactionId))
            if apple != ours {
                differences.append(StateChange(field: "groupMembers", member: nil,
                                               before: .array(ours.subtracting(apple).sorted().map(JSONValue.string)),
                                               after: .array(apple.subtracting(ours).sorted().map(JSONValue.string)),
                                               text: "group members: only ours \(ours.subtracting(apple).sorted()), only Apple's \(apple.subtracting(ours).sorted())"))
            }
            observed = max(observed ?? listing.occurredAt, listing.occurredAt)
        }
        let oursLatest = facts.filter { $0.seatInfo == nil && $0.membersGroupId == nil }.map(\.occurredAt).max()
        let older: String
        if let observed, let oursLatest { older = observed < oursLatest ? "apple" : "ours" } else { older = "none" }
        return AppleComparison(groupKey: state.groupKey, differences: differences, appleObservedAt: observed,
                               oursLatestAt: oursLatest, olderSide: older)
    }

    /// JSON form.
    public var json: JSONValue {
        ["mode": "against-apple", "groupKey": .string(groupKey), "differences": .bool(!differences.isEmpty),
         "changes": .array(differences.map(\.json)), "appleObservedAt": .timestamp(appleObservedAt),
         "oursLatestAt": .timestamp(oursLatestAt), "olderSide": .string(olderSide)]
    }

    /// Text form.
    public var text: String {
        var lines = ["Group \(groupKey) against Apple's latest view"]
        if appleObservedAt == nil {
            let unlinkedPrefix = "unlinked:"
            if groupKey.hasPrefix(unlinkedPrefix) {
                // An assigned seat holder no group evidence links: there is no group to ask Apple about.
                let otid = groupKey.dropFirst(unlinkedPrefix.count)
                lines.append("No Apple view to compare: \(groupKey) is an assigned seat holder no Get Customer Groups or Get Group "
                             + "Members response links to a group. `seatledger reconcile \(otid)` asks Apple about the holder's subscription.")
            } else {
                lines.append("No Get Seat Info or Get Group Members response recorded; run `seatledger reconcile \(groupKey)`.")
            }
        }
        if let a = appleObservedAt { lines.append("  Apple observed at \(Timestamp.iso8601(a))") }
        if let o = oursLatestAt { lines.append("  our latest event at \(Timestamp.iso8601(o))") }
        switch olderSide {
        case "apple": lines.append("  Apple's view is older than ours: differences may be changes since; reconcile to refresh.")
        case "ours": lines.append("  Our events are older than Apple's view: differences suggest missed notifications; run a backfill.")
        default: break
        }
        if differences.isEmpty { lines.append("No differences.") }
        for change in differences { lines.append("  • \(change.text)") }
        return lines.joined(separator: "\n")
    }
}
