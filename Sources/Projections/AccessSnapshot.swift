import AppStoreModels

/// One subject's access to one product at a moment, as a transition's `before` and `after` give
/// it: the fields of an ``EntitlementGrant`` a change of entitlement is made of.
public struct AccessSnapshot: Sendable, Hashable {
    /// Whether the subject has access.
    public var entitled: Bool
    /// Entitled: when access ends without news (period or grace end, `nil` when unknown); else when it ended.
    public var until: EpochMillis?
    /// How the access is (or was) held: `PURCHASED`, `ASSIGNED_SEAT`, `DEVELOPER_CLAIM`, `FAMILY_SHARED`, or an ownership verbatim.
    public var source: EntitlementSource
    /// Not entitled: why access ended (reason, time, event, and the purchaser-level cause one level up); `nil` while entitled.
    public var reason: Revocation?

    /// Creates a snapshot.
    public init(entitled: Bool, until: EpochMillis?, source: EntitlementSource, reason: Revocation?) {
        self.entitled = entitled
        self.until = until
        self.source = source
        self.reason = reason
    }

    /// The snapshot of a grant.
    public init(grant: EntitlementGrant) {
        self.init(entitled: grant.hasAccess, until: grant.until, source: grant.source, reason: grant.revocation)
    }

    /// The JSON form (`before` and `after` of a transition).
    public var json: JSONValue {
        ["entitled": .bool(entitled), "until": .timestamp(until), "source": .string(source.rawValue), "reason": reason?.json ?? .null]
    }
}

/// One entry of a scope's answer, and of the fold of its transitions: who, and their access.
public struct AccessEntry: Sendable, Hashable {
    /// The subject, with the identifiers known at the moment.
    public var subject: AccessSubject
    /// Their access.
    public var snapshot: AccessSnapshot

    /// Creates an entry.
    public init(subject: AccessSubject, snapshot: AccessSnapshot) {
        self.subject = subject
        self.snapshot = snapshot
    }
}
