import AppStoreModels

/// One event of the log: its id and position.
public struct EventReference: Sendable, Hashable {
    /// The event id (notification UUID, API-response id, decision digest).
    public var eventId: String
    /// The event's position in the log.
    public var position: Int64

    /// Creates a reference.
    public init(eventId: String, position: Int64) {
        self.eventId = eventId
        self.position = position
    }

    /// The JSON form.
    public var json: JSONValue { ["eventId": .string(eventId), "position": .int(position)] }
}

/// What made a transition: news (an event recorded) or time (a moment falling due).
public struct TransitionCauseKind: OpenStringEnum {
    /// The value as the contract prints it.
    public let rawValue: String
    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An event was recorded: the answer with it differs from the answer without it at the moment it was recorded.
    public static let news = Self(rawValue: "NEWS")
    /// A moment fell due (a period, grace or revocation date, a late-effective event): the answer changed with no news.
    public static let time = Self(rawValue: "TIME")
    /// The kinds this version derives.
    public static let knownValues: Set<String> = ["NEWS", "TIME"]
}

/// Why a transition happened: the event, or the moment, and one level up.
public struct TransitionCause: Sendable, Hashable {
    /// News or time.
    public var kind: TransitionCauseKind
    /// News: the event recorded. Time: the first known event that carries the moment that fell due
    /// (the transaction whose `expiresDate`, the renewal info whose grace end, …); `nil` when none carries it.
    public var event: EventReference?
    /// The event's `notificationType`, endpoint, or `Retraction`; `nil` for time or when the event has none.
    public var eventType: String?
    /// The event's subtype, when it has one.
    public var subtype: String?
    /// News from a retraction: the event it withdrew.
    public var retractedEventId: String?
    /// The last event known when the transition was derived (news: the event itself).
    public var knownThrough: EventReference
    /// One level up: for a loss the purchaser's subscription caused (`GROUP_EXPIRED`, `GROUP_REVOKED`,
    /// `SEAT_REFUND`), the purchaser-level event (``Revocation/cause`` of `after.reason`); else `nil`.
    public var upstream: RevocationCause?

    /// Creates a cause.
    public init(kind: TransitionCauseKind, event: EventReference?, eventType: String?, subtype: String?,
                retractedEventId: String?, knownThrough: EventReference, upstream: RevocationCause?) {
        self.kind = kind
        self.event = event
        self.eventType = eventType
        self.subtype = subtype
        self.retractedEventId = retractedEventId
        self.knownThrough = knownThrough
        self.upstream = upstream
    }

    /// The JSON form (`cause` of a transition).
    public var json: JSONValue {
        [
            "kind": .string(kind.rawValue), "event": event?.json ?? .null, "type": .optional(eventType),
            "subtype": .optional(subtype), "retractedEventId": .optional(retractedEventId),
            "knownThrough": knownThrough.json, "upstream": upstream?.json ?? .null,
        ]
    }
}
