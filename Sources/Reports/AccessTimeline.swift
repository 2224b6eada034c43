import AppStoreModels
import Projections

/// Who had access when, in one group: one row per member with the intervals they had access and
/// every change of it, each with its reason, the event that caused it and the cause one level up.
///
/// Built from a replay (``GroupReplay/entries(membership:facts:from:to:knownAt:now:duplicateArrivals:)``)
/// and the state at its end, so it says exactly what `replay` and `group show` say. Pure.
///
/// ```swift
/// let timeline = AccessTimeline(state: audit.state, replay: audit.timeline)
/// let svg = AccessTimelineSVG.render(timeline)
/// ```
public struct AccessTimeline: Sendable, Hashable {
    /// What a change did to a member's access.
    public enum ChangeKind: String, Sendable, Hashable {
        /// The member got access (joined with it, or regained it).
        case gained
        /// The member lost access (or was recorded, or stopped being listed, without it).
        case lost
        /// Access unchanged, but the reason or the evidence for its loss changed.
        case reexplained
    }

    /// One change of a member's access.
    public struct Change: Sendable, Hashable {
        /// When it took effect (Apple's time).
        public var at: EpochMillis
        /// Whether access was gained, lost, or only explained differently.
        public var kind: ChangeKind
        /// Plain words from the replay: "member m5 (claim 67d24449…) lost access: seat refunded, caused by …".
        public var text: String
        /// What arrived: "ClaimSeat → 200", "DID_RENEW", "time passed (no event)".
        public var what: String
        /// The event of the replay entry that made the change; `nil` when time alone made it
        /// (a period ending with no notification).
        public var entryEventId: String?
        /// The member's revocation after the change (for a loss: reason, evidence, cause one level up).
        public var revocation: Revocation?

        /// The event to cite as the cause: the entry's own, else (a change time made) the event
        /// whose dates made it, as the revocation names it.
        public var eventId: String? { entryEventId ?? (kind == .gained ? nil : revocation?.eventId) }

        /// The reason code: `GAINED`, or the revocation's reason (`SEAT_REFUND`, `GROUP_EXPIRED` …).
        public var reasonCode: String {
            switch kind {
            case .gained: return "GAINED"
            case .lost, .reexplained: return revocation?.reason.rawValue ?? "NO_ACCESS"
            }
        }

        /// The reason in plain words: "joined with access", "seat refunded".
        public var reasonText: String {
            switch kind {
            case .gained: return text.hasSuffix("regained access") ? "regained access" : "joined with access"
            case .lost, .reexplained:
                if let revocation { return revocation.reason.explanation }
                return text.hasSuffix("no longer listed") ? "no longer listed" : "no access"
            }
        }

        /// The purchaser-level cause, one level up, in words: "SEAT_REFUND (seat refunded) at …, event …"; `nil` without one.
        public var causeText: String? {
            guard kind != .gained, let clause = revocation?.causeClause else { return nil }
            // The revocation's own event is named once (as the change's event), not again as its cause.
            return String(clause.dropFirst("caused by ".count))
        }
    }

    /// A span of time with access: `[start, end)`; `isOpen` when it lasts past the timeline's end.
    public struct Interval: Sendable, Hashable {
        /// When access began (Apple's time), or the timeline's start for access held before it.
        public var start: EpochMillis
        /// When access ended, or the timeline's end when the interval is open.
        public var end: EpochMillis
        /// Whether access still held at the timeline's end.
        public var isOpen: Bool

        /// Creates an interval.
        public init(start: EpochMillis, end: EpochMillis, isOpen: Bool) {
            self.start = start
            self.end = end
            self.isOpen = isOpen
        }
    }

    /// One member.
    public struct Row: Sendable, Hashable {
        /// ``StateComparison/identity(_:)``: role, transaction and claim ids.
        public var identity: String
        /// "m1 (claim 6ff243d4…)", control characters visible.
        public var label: String
        /// The member's role (for a member no longer listed: the role in their identity).
        public var role: MemberRole
        /// Access at the end of the timeline.
        public var hasAccess: Bool
        /// The spans in which the member had access, in time order.
        public var intervals: [Interval]
        /// In time order.
        public var changes: [Change]
    }

    /// The first moment shown.
    public var start: EpochMillis
    /// The last moment shown (the state's `asOf`, or the last entry when later).
    public var end: EpochMillis
    /// The moment the state was evaluated (drawn as the "as of" line).
    public var asOf: EpochMillis
    /// One per member: the state's members first, then those the replay names who are no longer listed.
    public var rows: [Row]

    /// Every member of `state` (then anyone the replay names who is no longer listed).
    public init(state: GroupState, replay: [ReplayEntry]) {
        self.init(members: state.members, replay: replay, asOf: state.asOf, includeUnlisted: true)
    }

    /// The rows of `members` only (a member audit's one person), from `replay` (which may be
    /// filtered to their changes, as ``MemberAudit/chain(for:in:)`` is).
    public init(members: [MemberState], replay: [ReplayEntry], asOf: EpochMillis, includeUnlisted: Bool = false) {
        var order: [String] = []
        var labels: [String: (String, MemberRole)] = [:]
        var changes: [String: [Change]] = [:]
        for member in members {
            let key = StateComparison.identity(member)
            if labels[key] == nil { order.append(key) }
            labels[key] = (StateComparison.label(member), member.role)
        }
        for entry in replay {
            for change in entry.changes {
                guard let key = change.memberIdentity, let kind = Self.kind(of: change) else { continue }
                if labels[key] == nil {
                    guard includeUnlisted else { continue }
                    order.append(key)
                    let role = MemberRole(rawValue: String(key.prefix { $0 != "|" }))
                    labels[key] = (DisplayText.visible(change.member ?? "?"), role)
                }
                changes[key, default: []].append(Change(at: entry.effectiveAt, kind: kind, text: change.text, what: entry.what,
                                                        entryEventId: entry.eventId, revocation: change.revocation))
            }
        }
        let first = ([replay.first?.effectiveAt] + members.map(\.accessSince)).compactMap { $0 }.min() ?? asOf
        let last = max(asOf, replay.last?.effectiveAt ?? asOf)
        let start = min(first, last), end = last
        self.start = start
        self.end = end
        self.asOf = asOf
        let byKey = Dictionary(members.map { (StateComparison.identity($0), $0) }, uniquingKeysWith: { first, _ in first })
        rows = order.map { key in
            let list = changes[key] ?? []
            var intervals: [Interval] = []
            var open: EpochMillis?
            for change in list {
                switch change.kind {
                case .gained: if open == nil { open = change.at }
                case .lost:
                    if let since = open { intervals.append(Interval(start: since, end: change.at, isOpen: false)) }
                    open = nil
                case .reexplained: break
                }
            }
            let member = byKey[key]
            // A member with access at the end whom the replay never saw gain it (a window that
            // starts later) had it from the start of the window.
            if open == nil, list.isEmpty, let member, member.hasAccess { open = max(member.accessSince ?? start, start) }
            if let since = open { intervals.append(Interval(start: since, end: end, isOpen: true)) }
            let (label, role) = labels[key] ?? ("?", .claim)
            return Row(identity: key, label: label, role: role, hasAccess: member?.hasAccess ?? (open != nil), intervals: intervals, changes: list)
        }
    }

    /// The row of `member`, if it has one.
    public func row(for member: MemberState) -> Row? {
        let key = StateComparison.identity(member)
        return rows.first { $0.identity == key }
    }

    /// Every change of every row, in time order (then row order): the accessible table under the chart.
    public var allChanges: [(row: Row, change: Change)] {
        var all: [(row: Row, change: Change, index: Int)] = []
        for (index, row) in rows.enumerated() { for change in row.changes { all.append((row, change, index)) } }
        return all.sorted { ($0.change.at, $0.index) < ($1.change.at, $1.index) }.map { ($0.row, $0.change) }
    }

    static func kind(of change: StateChange) -> ChangeKind? {
        switch change.field {
        case "member.added": return change.after["hasAccess"]?.boolValue == true ? .gained : .lost
        case "member.access": return change.after.boolValue == true ? .gained : .lost
        case "member.revocation": return .reexplained
        case "member.removed": return change.before["hasAccess"]?.boolValue == true ? .lost : .reexplained
        default: return nil
        }
    }
}
