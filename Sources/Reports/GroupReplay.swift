import AppStoreModels
import LedgerEvents
import Projections

/// One step of a group's history: an event (or a time-driven transition) and what it changed.
public struct ReplayEntry: Sendable {
    /// When it took effect (Apple's time).
    public var effectiveAt: EpochMillis
    /// The event, or `nil` for a transition driven by time alone (a period ending with no notification).
    public var eventId: String?
    /// The event's position in the ledger's log; `nil` for a transition driven by time alone.
    public var position: Int64?
    /// What arrived: `DID_RENEW`, `DID_CHANGE_RENEWAL_PREF / DECREASE_QUANTITY`, `GetSeatInfo → 200`.
    public var what: String
    /// When we recorded it.
    public var recordedAt: EpochMillis?
    /// When Apple signed it (`occurredAt`); later than ``effectiveAt`` for a late-signed event
    /// (a `REVOKE` whose `revocationDate` is hours before its `signedDate`). `nil` for time-driven entries.
    public var signedAt: EpochMillis? = nil
    /// Recorded well after it occurred (more than ``GroupReplay/lateThreshold``).
    public var isLate: Bool
    /// The path the event came by (`EventOrigin`: `webhook`, `file`, `stdin`, `spool`, `queue`,
    /// `api-client`, `backfill`, `recorded`, `quarantine-retry`, `operator`, or `live`).
    public var origin: String?
    /// How many more times the same event arrived (duplicates appended nothing).
    public var duplicateArrivals: Int
    /// What it changed.
    public var changes: [StateChange]
    /// The group right after it (for timelines and charts).
    public var after: StateSummary
    /// The retraction (`seatledger retract`) that withdrew this event from every projection, if
    /// any: the event is listed where it took effect, with no changes.
    public var retractedBy: RetractionMark? = nil

    /// The JSON form of `replay --json`.
    public var json: JSONValue {
        [
            "effectiveAt": .timestamp(effectiveAt), "eventId": .optional(eventId), "position": .optional(position),
            "what": .string(what), "recordedAt": .timestamp(recordedAt), "signedAt": .timestamp(signedAt), "late": .bool(isLate), "origin": .optional(origin),
            "backfill": .bool(origin == EventOrigin.backfill.rawValue), "duplicateArrivals": .count(duplicateArrivals),
            "synthetic": .bool(eventId == nil), "changes": .array(changes.map(\.json)), "after": after.json,
            "retractedBy": retractedBy.map(\.json) ?? .null,
        ]
    }
}

/// The retraction of a replayed event: which decision event withdrew it, and where it is in the log.
public struct RetractionMark: Sendable, Hashable {
    /// The retraction's event id.
    public var eventId: String
    /// The retraction's position.
    public var position: Int64
    /// When the retraction was recorded.
    public var recordedAt: EpochMillis

    /// JSON form.
    public var json: JSONValue {
        ["eventId": .string(eventId), "position": .int(position), "recordedAt": .timestamp(recordedAt)]
    }
}

/// Replays a group's events in effective order, describing the state change each caused.
public enum GroupReplay {
    /// An event recorded more than this long after it occurred is flagged late.
    public static let lateThreshold: EpochMillis = 3_600_000

    /// The entries of a group's history within `[from, to]` (Apple time), using events recorded by `knownAt`.
    ///
    /// Changes driven by time alone (a period or a member's own transaction ending) are entries with
    /// no event, dated at the moment the projected state changed (a revocation's `at`, an
    /// `accessUntil`, a period end). Those falling at or before an event's own time come first, and
    /// an event's entry lists only what the event itself changed: the state at its time without it
    /// against the state with it (see ``splitAtEvent(timeDriven:byEvent:net:)`` for a time-driven
    /// change the event alters at that same instant, such as a `DID_RENEW` exactly at the period end).
    ///
    /// - Parameters:
    ///   - now: the end of the replay when `to` is nil (time-driven transitions up to it are included).
    public static func entries(membership: GroupMembership, facts: [EventFacts], from: EpochMillis? = nil, to: EpochMillis? = nil,
                               knownAt: EpochMillis? = nil, now: EpochMillis, duplicateArrivals: [String: Int] = [:]) -> [ReplayEntry] {
        // Events in valid-time order, each at its effective time (a REVOKE signed at 09:00 whose
        // revocationDate is 00:00 is an entry at 00:00; a late-signed DID_RENEW at the period end).
        let recorded = facts.filter { fact in knownAt.map { fact.recordedAt <= $0 } ?? true }
        // Retracted events change nothing (the projection skips them); they are listed afterwards.
        var retractedBy: [String: EventFacts] = [:]
        for fact in recorded.sorted(by: { $0.position < $1.position }) {
            if let id = fact.retractedEventId, retractedBy[id] == nil { retractedBy[id] = fact }
        }
        let known = Retraction.withdraw(recorded)
        let times = EffectiveTimes(known)
        let visible = known.map { (fact: $0, at: times.effectiveAt($0)) }.sorted { ($0.at, $0.fact.eventId) < ($1.at, $1.fact.eventId) }
        let end = to ?? max(now, visible.map(\.fact.occurredAt).max() ?? now)
        var entries: [ReplayEntry] = []
        var previous: GroupState?
        var prefix: [EventFacts] = []
        func state(at t: EpochMillis) -> GroupState {
            GroupProjection.project(membership, facts: prefix, asOf: t, knownAt: nil)
        }
        func inRange(_ t: EpochMillis) -> Bool { (from.map { t >= $0 } ?? true) && t <= end }
        /// The time-driven segment ending exactly at the current event's time, held back until the
        /// event shows what it changes of it: (state before it, its changes, state after it).
        var pendingAtEvent: (start: GroupState, changes: [StateChange], state: GroupState)?
        func emitTime(at: EpochMillis, changes: [StateChange], after: GroupState) {
            guard !changes.isEmpty, inRange(at) else { return }
            entries.append(ReplayEntry(effectiveAt: at, eventId: nil, position: nil, what: "time passed (no event)",
                                       recordedAt: nil, isLate: false, origin: nil, duplicateArrivals: 0, changes: changes,
                                       after: StateSummary(after)))
        }
        /// Emits the time-driven changes in `(previous.asOf, t]` with the events so far, one entry per
        /// moment of change; with `holdLast`, a segment ending exactly at `t` is kept in `pendingAtEvent`.
        func advance(to t: EpochMillis, holdLast: Bool) {
            guard var last = previous, t > last.asOf else { return }
            let target = state(at: t)
            while !StateComparison.changes(from: last, to: target).isEmpty {
                let (at, moved) = firstChange(after: last, upTo: t, target: target, state: state)
                let changes = StateComparison.changes(from: last, to: moved)
                if holdLast, at == t {
                    pendingAtEvent = (last, changes, moved)
                } else {
                    emitTime(at: at, changes: changes, after: moved)
                }
                last = moved
            }
            previous = target
        }

        // Events sharing one effective instant (a late-signed DID_RENEW for the purchaser and for
        // each member, all effective at the period end) are applied together: what time alone did
        // up to the instant is split against what all of them did.
        var index = 0
        while index < visible.count, visible[index].at <= end {
            let effectiveAt = visible[index].at
            var batch: [EventFacts] = []
            while index < visible.count, visible[index].at == effectiveAt {
                batch.append(visible[index].fact)
                index += 1
            }
            advance(to: effectiveAt, holdLast: true)
            var applied: [(fact: EventFacts, changes: [StateChange], after: GroupState)] = []
            for fact in batch {
                let without = previous
                prefix.append(fact)
                let after = state(at: effectiveAt)
                applied.append((fact, StateComparison.changes(from: without, to: after), after))
                previous = after
            }
            if let pending = pendingAtEvent, let final = applied.last?.after {
                let split = splitAtEvent(timeDriven: pending.changes, byEvent: applied.flatMap(\.changes),
                                         net: StateComparison.changes(from: pending.start, to: final))
                emitTime(at: effectiveAt, changes: split.time, after: pending.state)
                // A change time also made is reported (in its net form, by the last event that
                // touched it) only when the events left it different from what time made.
                let timeKeys = Set(pending.changes.map(changeKey))
                let netByKey = Dictionary(split.event.map { (changeKey($0), $0) }, uniquingKeysWith: { first, _ in first })
                var lastToucher: [String: Int] = [:]
                for (offset, entry) in applied.enumerated() { for change in entry.changes { lastToucher[changeKey(change)] = offset } }
                for offset in applied.indices {
                    applied[offset].changes = applied[offset].changes.compactMap { change in
                        let key = changeKey(change)
                        guard timeKeys.contains(key) else { return change }
                        return lastToucher[key] == offset ? netByKey[key] : nil
                    }
                }
                pendingAtEvent = nil
            }
            guard inRange(effectiveAt) else { continue }
            for (fact, changes, after) in applied {
                entries.append(ReplayEntry(
                    effectiveAt: effectiveAt, eventId: fact.eventId, position: fact.position, what: describe(fact),
                    recordedAt: fact.recordedAt, signedAt: fact.occurredAt,
                    isLate: fact.recordedAt.saturatingSubtract(effectiveAt) > lateThreshold, origin: fact.origin.rawValue,
                    duplicateArrivals: duplicateArrivals[fact.eventId] ?? 0, changes: changes, after: StateSummary(after)))
            }
        }
        advance(to: end, holdLast: false)
        guard !retractedBy.isEmpty else { return entries }
        let recordedTimes = EffectiveTimes(recorded)
        var listed = entries.enumerated().map { (order: $0.offset, entry: $0.element) }
        for fact in recorded {
            guard let retraction = retractedBy[fact.eventId] else { continue }
            let at = recordedTimes.effectiveAt(fact)
            guard inRange(at) else { continue }
            let mark = RetractionMark(eventId: retraction.eventId, position: retraction.position, recordedAt: retraction.recordedAt)
            var entry = ReplayEntry(
                effectiveAt: at, eventId: fact.eventId, position: fact.position,
                what: describe(fact) + " [retracted at position \(retraction.position)]",
                recordedAt: fact.recordedAt, signedAt: fact.occurredAt,
                isLate: fact.recordedAt.saturatingSubtract(at) > lateThreshold, origin: fact.origin.rawValue,
                duplicateArrivals: duplicateArrivals[fact.eventId] ?? 0, changes: [],
                after: StateSummary(GroupProjection.project(membership, facts: known, asOf: at, knownAt: nil)))
            entry.retractedBy = mark
            listed.append((order: listed.count, entry: entry))
        }
        return listed.sorted { ($0.entry.effectiveAt, $0.order) < ($1.entry.effectiveAt, $1.order) }.map(\.entry)
    }

    /// What a change is about, to match changes of two comparisons: the field (a member's access
    /// and its revocation are one thing) and the member's identity.
    static func changeKey(_ change: StateChange) -> String {
        "\(change.field == "member.revocation" ? "member.access" : change.field)#\(change.memberIdentity ?? "")"
    }

    /// Splits what happened at an event's instant between time and the event.
    ///
    /// `timeDriven` are the changes time alone made up to the instant, `byEvent` those the event
    /// made on top, `net` the two together. What the event does not touch stays time-driven; what
    /// it touches goes, in its net form, to time when it ends the same way (a member's expiry whose
    /// reason the event corrects), to the event when it ends differently (`DID_FAIL_TO_RENEW` turning
    /// an expiry into billing grace), and to neither when the event undoes it (`DID_RENEW` at the
    /// period end).
    static func splitAtEvent(timeDriven: [StateChange], byEvent: [StateChange], net: [StateChange])
        -> (time: [StateChange], event: [StateChange]) {
        let timeByKey = Dictionary(timeDriven.map { (changeKey($0), $0) }, uniquingKeysWith: { first, _ in first })
        let eventKeys = Set(byEvent.map(changeKey))
        let netByKey = Dictionary(net.map { (changeKey($0), $0) }, uniquingKeysWith: { first, _ in first })
        let time = timeDriven.compactMap { change -> StateChange? in
            let key = changeKey(change)
            guard eventKeys.contains(key) else { return change }
            return netByKey[key].flatMap { $0.after == change.after ? $0 : nil }
        }
        let event = byEvent.compactMap { change -> StateChange? in
            let key = changeKey(change)
            guard let timeChange = timeByKey[key] else { return change }
            return netByKey[key].flatMap { $0.after != timeChange.after ? $0 : nil }
        }
        return (time, event)
    }

    /// The first moment in `(last.asOf, t]` at which the state (with no new event) differs from
    /// `last`, and the state then. `target` is the state at `t`, known to differ.
    ///
    /// Candidates are the moments the states name (revocations, access ends and starts, period
    /// ends); when none of them shows the change, a bisection finds it.
    static func firstChange(after last: GroupState, upTo t: EpochMillis, target: GroupState,
                            state: (EpochMillis) -> GroupState) -> (EpochMillis, GroupState) {
        let lower = last.asOf
        var candidates: Set<EpochMillis> = []
        for member in last.members + target.members {
            for moment in [member.revocation?.at, member.accessUntil, member.accessSince].compactMap({ $0 }) {
                candidates.insert(moment)
            }
        }
        for moment in [last.periodEnd, target.periodEnd].compactMap({ $0 }) { candidates.insert(moment) }
        for moment in candidates.filter({ $0 > lower && $0 < t }).sorted() {
            let moved = state(moment)
            if !StateComparison.changes(from: last, to: moved).isEmpty { return (moment, moved) }
        }
        // Bisection: the state at `hi` differs from `last`, the state at `lo` does not (or is `last`).
        var lo = lower, hi = t, moved = target
        // Unsigned width: times are Apple's numbers (any Int64) and `hi - lo` can exceed Int64.max.
        while UInt64(bitPattern: hi &- lo) > 1 {
            let mid = lo &+ Int64(bitPattern: UInt64(bitPattern: hi &- lo) / 2)
            let probe = state(mid)
            if StateComparison.changes(from: last, to: probe).isEmpty { lo = mid } else { hi = mid; moved = probe }
        }
        return (hi, moved)
    }

    /// "DID_CHANGE_RENEWAL_PREF / DECREASE_QUANTITY", "ClaimSeat → 200" or "StoreKit transaction"
    /// (what the app sent its server).
    public static func describe(_ fact: EventFacts) -> String {
        if fact.kind == .storeKit { return "StoreKit \(fact.type ?? "input")" }
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
    /// The purchaser's status right after the entry.
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
