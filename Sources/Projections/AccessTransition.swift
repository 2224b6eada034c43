import AppStoreModels

/// What changed in a transition, from `before` to `after` (``AccessTransition``). The first that
/// applies, in this order, names it.
public struct AccessTransitionKind: OpenStringEnum {
    /// The value as the contract prints it.
    public let rawValue: String
    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Not entitled (or not known) before, entitled after. With `corrects`, access that an earlier
    /// transition said was lost in fact went on (a renewal signed before the lapse, learned late).
    public static let gained = Self(rawValue: "GAINED")
    /// Entitled before; not entitled after (`after.reason` says why), or no longer known (`after` `null`).
    public static let lost = Self(rawValue: "LOST")
    /// Entitled before and after, through another source.
    public static let sourceChanged = Self(rawValue: "SOURCE_CHANGED")
    /// Entitled before and after, with another end: a renewal, a billing grace period, a refund brought forward.
    public static let endMoved = Self(rawValue: "END_MOVED")
    /// Not entitled before and after, with another reason, end or source (Apple's notice naming a
    /// lapse already sent, a refund found to precede an expiry).
    public static let reasonChanged = Self(rawValue: "REASON_CHANGED")
    /// Access unchanged; the subject's identifiers changed (Associate Seat gave a claim its `appTransactionId`).
    public static let subjectChanged = Self(rawValue: "SUBJECT_CHANGED")
    /// Not known before; known after without access (a member whose access had ended before the ledger heard of them).
    public static let appeared = Self(rawValue: "APPEARED")
    /// Known without access before; no longer known after (its evidence retracted, the group's product changed).
    public static let removed = Self(rawValue: "REMOVED")
    /// The kinds this version derives.
    public static let knownValues: Set<String> = [
        "GAINED", "LOST", "SOURCE_CHANGED", "END_MOVED", "REASON_CHANGED", "SUBJECT_CHANGED", "APPEARED", "REMOVED",
    ]

    /// The kind of the change from `before` to `after` (`nil`: not in the answer); `nil` when nothing changed.
    public init?(before: AccessEntry?, after: AccessEntry?) {
        guard before != after else { return nil }
        let was = before?.snapshot, now = after?.snapshot
        self.init(was: was.map { ($0.entitled, $0.source.rawValue) }, now: now.map { ($0.entitled, $0.source.rawValue) },
                  snapshotChanged: was != now)
    }

    /// The rule, over what it reads: whether each side is known and entitled, its source, and
    /// whether the snapshots differ (a change of identifiers alone is `SUBJECT_CHANGED`). For a
    /// reader that holds snapshots as JSON (the reconciliation of stored transitions).
    public init(was: (entitled: Bool, source: String)?, now: (entitled: Bool, source: String)?, snapshotChanged: Bool) {
        switch (was?.entitled ?? false, now?.entitled ?? false) {
        case (false, true): self = .gained
        case (true, false): self = .lost
        case (true, true):
            if was?.source != now?.source { self = .sourceChanged }
            else if snapshotChanged { self = .endMoved }
            else { self = .subjectChanged }
        case (false, false):
            if was == nil { self = .appeared }
            else if now == nil { self = .removed }
            else if snapshotChanged { self = .reasonChanged }
            else { self = .subjectChanged }
        }
    }
}

/// One change of one subject's access to one product, derived from a scope's facts
/// (``AccessTransitionDeriver``). Folded in order (``AccessTransitions/fold(_:)``), the
/// transitions give the scope's current answer. See `Events/api/access-transitions.md`.
public struct AccessTransition: Sendable, Hashable {
    /// Stable: the same facts derive the same id (``AccessTransitionID``).
    public var id: String
    /// Scope, subject and product.
    public var key: AccessKey
    /// Who, with the identifiers known after the change (before it, when `after` is `nil`).
    public var subject: AccessSubject
    /// What changed.
    public var kind: AccessTransitionKind
    /// When the change takes effect, in Apple's time: time, the moment that fell due; news, when
    /// what the event says took effect (``EffectiveTimes``; a retraction: when the withdrawn event
    /// had), never after `learnedAt`.
    public var effectiveAt: EpochMillis
    /// When the ledger knew: news, the event's `recordedAt` (the latest `recordedAt` so far, should
    /// the recording clock step back); time, the moment itself.
    public var learnedAt: EpochMillis
    /// The access before; `nil` when the subject was not in the answer.
    public var before: AccessSnapshot?
    /// The access after; `nil` when the subject is no longer in the answer.
    public var after: AccessSnapshot?
    /// The event or moment that caused it, and one level up.
    public var cause: TransitionCause
    /// News about a moment at or before the latest earlier transition of the same key: that
    /// transition's id (it is reversed or amended, never rewritten); else `nil`.
    public var corrects: String?

    /// The product; `nil` for access whose transactions name none.
    public var productId: String? { key.productId }

    /// Creates a transition.
    public init(id: String, key: AccessKey, subject: AccessSubject, kind: AccessTransitionKind, effectiveAt: EpochMillis,
                learnedAt: EpochMillis, before: AccessSnapshot?, after: AccessSnapshot?, cause: TransitionCause, corrects: String?) {
        self.id = id
        self.key = key
        self.subject = subject
        self.kind = kind
        self.effectiveAt = effectiveAt
        self.learnedAt = learnedAt
        self.before = before
        self.after = after
        self.cause = cause
        self.corrects = corrects
    }

    /// The JSON form (keys sorted when written canonically), naming the ledger's app and environment.
    public func json(bundleId: String, environment: String) -> JSONValue {
        Self.json(id: id, kind: kind, productId: productId, subject: subject.json, bundleId: bundleId, environment: environment,
                  effectiveAt: effectiveAt, learnedAt: learnedAt, before: before?.json, after: after?.json, cause: cause, corrects: corrects)
    }

    /// The JSON form from its parts, `before` and `after` already JSON (a reader that holds the
    /// snapshots only as stored, such as the reconciliation of a ledger's stored transitions).
    public static func json(id: String, kind: AccessTransitionKind, productId: String?, subject: JSONValue, bundleId: String,
                            environment: String, effectiveAt: EpochMillis, learnedAt: EpochMillis, before: JSONValue?,
                            after: JSONValue?, cause: TransitionCause, corrects: String?) -> JSONValue {
        [
            "id": .string(id), "kind": .string(kind.rawValue), "subject": subject, "productId": .optional(productId),
            "bundleId": .string(bundleId), "environment": .string(environment),
            "effectiveAt": .timestamp(effectiveAt), "learnedAt": .timestamp(learnedAt),
            "before": before ?? .null, "after": after ?? .null,
            "cause": cause.json, "corrects": .optional(corrects),
        ]
    }
}
