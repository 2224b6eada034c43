import AppStoreModels

/// Derives a scope's access transitions one event, or one stretch of time, at a time (pure: the
/// caller says what was recorded and what time it is).
///
/// The rule (the specification ``AccessTransitions/derive(_:facts:now:)`` applies to a whole log):
///
/// - **News.** Event `k`, in position order, is learned at its `recordedAt`: each subject's
///   entitlement per product at (asOf: that moment, the events before `k`) is compared with the
///   one at (asOf: that moment, the events through `k`); each difference is a transition caused by `k`.
/// - **Time.** Between event `k` and the next (or the moment asked for), with the events through
///   `k`, each moment the answer changes by time alone (a period end, a grace end, a revocation
///   date, an event that takes effect later than it was recorded) is a transition caused by time,
///   learned at that moment. The moments come from ``AccessScope/candidateChange(after:facts:)``;
///   the answer is evaluated at each.
///
/// The deriver keeps its last answer, so it compares each step with what it emitted: folded in
/// order, the transitions give ``current``. An event already applied (its id seen, or a position
/// not after the last) derives nothing: a restart can replay its tail.
public struct AccessTransitionDeriver: Sendable {
    /// What is derived.
    public let scope: AccessScope
    /// The events applied, in position order.
    public private(set) var facts: [EventFacts] = []
    /// The moment the answer is derived through (the latest `recordedAt` applied, or the moment
    /// ``advance(to:)`` reached); `nil` before the first event.
    public private(set) var clock: EpochMillis?
    /// The answer at ``clock`` with ``facts``: the fold of every transition derived so far.
    public private(set) var current: [AccessKey: AccessEntry] = [:]
    /// The last event applied.
    public private(set) var lastEvent: EventReference?
    private var eventIds: Set<String> = []
    /// The latest transition of each key: its id and effective moment (for `corrects`).
    private var latest: [AccessKey: Latest] = [:]

    private struct Latest: Sendable, Hashable {
        var id: String
        var effectiveAt: EpochMillis
    }

    /// A deriver for `scope` that knows nothing yet.
    public init(scope: AccessScope) {
        self.scope = scope
    }

    /// Applies one more event: first the changes by time up to its `recordedAt`, then the
    /// changes it makes. Returns them in that order; `[]` for an event already applied.
    public mutating func append(_ fact: EventFacts) -> [AccessTransition] {
        if eventIds.contains(fact.eventId) { return [] }
        if let lastEvent, fact.position <= lastEvent.position { return [] }
        let moment = max(clock ?? fact.recordedAt, fact.recordedAt)
        var transitions = advance(to: moment)
        let previous = facts
        facts.append(fact)
        eventIds.insert(fact.eventId)
        let event = EventReference(eventId: fact.eventId, position: fact.position)
        lastEvent = event
        clock = moment
        let answer = scope.answer(facts: facts, asOf: moment)
        let effective = min(moment, Self.effectiveTime(of: fact, facts: facts, previous: previous))
        let cause = TransitionCause(kind: .news, event: event, eventType: fact.type, subtype: fact.subtype,
                                    retractedEventId: fact.retractedEventId, knownThrough: event, upstream: nil)
        transitions += emit(answer, effectiveAt: effective, learnedAt: moment, cause: cause, news: true)
        return transitions
    }

    /// The changes by time from ``clock`` up to and including `moment`, with the events applied;
    /// ``clock`` becomes `moment` when it is later. `[]` before the first event.
    ///
    /// Advance only through moments by which every event recorded has been appended: an event
    /// recorded at or before the clock is learned at the clock, not at its `recordedAt`, and the
    /// list then differs from the one ``AccessTransitions/derive(_:facts:now:)`` gives.
    public mutating func advance(to moment: EpochMillis) -> [AccessTransition] {
        guard let start = clock, let lastEvent, moment > start else { return [] }
        var transitions: [AccessTransition] = []
        var cursor = start
        while let next = scope.candidateChange(after: cursor, facts: facts), next <= moment {
            let answer = scope.answer(facts: facts, asOf: next)
            if answer != current {
                let cause = TransitionCause(kind: .time, event: dueEvent(at: next), eventType: nil, subtype: nil,
                                            retractedEventId: nil, knownThrough: lastEvent, upstream: nil)
                transitions += emit(answer, effectiveAt: next, learnedAt: next, cause: cause, news: false)
            }
            cursor = next
        }
        clock = moment
        return transitions
    }

    /// The next moment after ``clock`` at which the answer changes with no news (for a
    /// scheduler: wake then and ``advance(to:)``); `nil` when it never does.
    public func nextChange() -> EpochMillis? {
        guard var cursor = clock else { return nil }
        while let next = scope.candidateChange(after: cursor, facts: facts) {
            if scope.answer(facts: facts, asOf: next) != current { return next }
            cursor = next
        }
        return nil
    }

    /// The first moment after ``clock`` at which the answer *may* change with no news (the least
    /// date the facts carry after it: ``AccessScope/candidateChange(after:facts:)``), without
    /// evaluating it; `nil` when none can. ``nextChange()`` is the moment it does change; this is
    /// at or before it, and costs no fold, so a schedule of many scopes keeps this and
    /// ``advance(to:)`` finds out (waking at a candidate where nothing changes costs one look).
    public func candidateChange() -> EpochMillis? {
        guard let clock else { return nil }
        return scope.candidateChange(after: clock, facts: facts)
    }

    // MARK: Steps

    /// The transitions from ``current`` to `answer`, by key; ``current`` becomes `answer`.
    private mutating func emit(_ answer: [AccessKey: AccessEntry], effectiveAt effective: EpochMillis,
                               learnedAt: EpochMillis, cause: TransitionCause, news: Bool) -> [AccessTransition] {
        var transitions: [AccessTransition] = []
        for key in Set(current.keys).union(answer.keys).sorted() {
            let before = current[key], after = answer[key]
            guard let kind = AccessTransitionKind(before: before, after: after) else { continue }
            var cause = cause
            cause.upstream = after?.snapshot.reason?.cause
            let id = AccessTransitionID.make(key: key, kind: kind, cause: cause, at: learnedAt)
            // News about a moment at or before the latest transition of the key: it was derived
            // without this news, and this transition reverses or amends it.
            let corrects = news ? latest[key].flatMap { $0.effectiveAt >= effective ? $0.id : nil } : nil
            let subject = (after ?? before)!.subject
            transitions.append(AccessTransition(id: id, key: key, subject: subject, kind: kind, effectiveAt: effective,
                                                learnedAt: learnedAt, before: before?.snapshot, after: after?.snapshot,
                                                cause: cause, corrects: corrects))
            latest[key] = Latest(id: id, effectiveAt: effective)
        }
        current = answer
        return transitions
    }

    /// When what `fact` says takes effect (``EffectiveTimes`` over the events known with it); for
    /// a retraction, when the event it withdraws had taken effect (over the events before it).
    static func effectiveTime(of fact: EventFacts, facts: [EventFacts], previous: [EventFacts]) -> EpochMillis {
        if let retracted = fact.retractedEventId {
            let before = Retraction.withdraw(previous)
            guard let target = before.first(where: { $0.eventId == retracted }) else { return fact.occurredAt }
            return EffectiveTimes(before).effectiveAt(target)
        }
        return EffectiveTimes(Retraction.withdraw(facts)).effectiveAt(fact)
    }

    /// The first event applied (in position order) that carries `moment` (or the millisecond
    /// before it: a date equal to the moment evaluated changes the answer just after) as one of
    /// the dates the folds compare: an expiry, grace end, revocation, purchase or signing date.
    func dueEvent(at moment: EpochMillis) -> EventReference? {
        func carries(_ fact: EventFacts, _ date: EpochMillis) -> Bool {
            if fact.transactions.contains(where: { $0.expiresDate == date || $0.revocationDate == date || $0.purchaseDate == date }) {
                return true
            }
            if fact.renewals.contains(where: { $0.gracePeriodExpiresDate == date }) { return true }
            return fact.occurredAt == date || fact.transactions.contains { $0.signedDate == date }
                || fact.renewals.contains { $0.signedDate == date }
        }
        let live = Retraction.withdraw(facts)
        for date in [moment, moment - 1] {
            if let fact = live.first(where: { carries($0, date) }) {
                return EventReference(eventId: fact.eventId, position: fact.position)
            }
        }
        return nil
    }
}
