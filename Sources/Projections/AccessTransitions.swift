import AppStoreModels

/// A scope's access transitions over a whole log, and their fold (pure). See
/// ``AccessTransitionDeriver`` for the rule and `Events/api/access-transitions.md` for the contract.
///
/// ```swift
/// let transitions = AccessTransitions.derive(.group("2000000000000001"), facts: facts, now: now)
/// AccessTransitions.fold(transitions) == AccessScope.group("2000000000000001").answer(facts: facts, asOf: now)
/// ```
public enum AccessTransitions {
    /// Every transition of `scope` from `facts` (one scope's events, applied in position order;
    /// a repeated event id counts once), with the changes by time after the last event up to
    /// `now`. A `now` before the last event's `recordedAt` adds no change by time.
    public static func derive(_ scope: AccessScope, facts: [EventFacts], now: EpochMillis) -> [AccessTransition] {
        var deriver = AccessTransitionDeriver(scope: scope)
        var transitions: [AccessTransition] = []
        for fact in facts.sorted(by: { $0.position < $1.position }) { transitions += deriver.append(fact) }
        transitions += deriver.advance(to: now)
        return transitions
    }

    /// The state the transitions leave, applied in order: each key's last `after` (a key whose
    /// last `after` is `nil` is gone), with the subject that transition names.
    public static func fold(_ transitions: [AccessTransition]) -> [AccessKey: AccessEntry] {
        var state: [AccessKey: AccessEntry] = [:]
        for transition in transitions {
            state[transition.key] = transition.after.map { AccessEntry(subject: transition.subject, snapshot: $0) }
        }
        return state
    }

    /// The next moment after `now` at which `scope`'s answer from `facts` changes with no news;
    /// `nil` when it never does (what a scheduler wakes for).
    public static func nextChange(_ scope: AccessScope, facts: [EventFacts], after now: EpochMillis) -> EpochMillis? {
        let answer = scope.answer(facts: facts, asOf: now)
        var cursor = now
        while let next = scope.candidateChange(after: cursor, facts: facts) {
            if scope.answer(facts: facts, asOf: next) != answer { return next }
            cursor = next
        }
        return nil
    }
}
