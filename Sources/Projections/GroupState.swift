import AppStoreModels

/// A group's purchaser status at a moment.
public struct GroupStatus: OpenStringEnum {
    /// The status code as `group show --json` prints it.
    public let rawValue: String
    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The current period has started and not ended (`purchaseDate ≤ T < expiresDate`): the group has access.
    public static let active = Self(rawValue: "ACTIVE")
    /// Past the period end but within billing grace (`gracePeriodExpiresDate` later): the purchaser and members keep access.
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    /// Past the period end with no grace left, while Apple still retries the charge: no access.
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    /// Past the period end (or the grace end) and not in billing retry: no access.
    public static let expired = Self(rawValue: "EXPIRED")
    /// Every transaction of the current period revoked or refunded by now: no access.
    public static let revoked = Self(rawValue: "REVOKED")
    /// No purchaser transaction known (organization and `unlinked:` groups, or a purchaser not seen yet).
    public static let unknown = Self(rawValue: "UNKNOWN")
    /// Every status this version computes.
    public static let knownValues: Set<String> = ["ACTIVE", "GRACE_PERIOD", "BILLING_RETRY", "EXPIRED", "REVOKED", "UNKNOWN"]

    /// Whether the purchaser (and so the group) has access in this status.
    public var grantsAccess: Bool { self == .active || self == .gracePeriod }
}

/// Why someone lost access. Known codes are static members; an unknown `revocationType` is kept verbatim.
public struct RevocationReason: OpenStringEnum {
    /// The reason code as `revocation.reason` prints it: a known code, or an unknown `revocationType` verbatim.
    public let rawValue: String
    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The member was removed by the purchaser or the organization, or left (`revocationType`).
    public static let assignmentRevoke = Self(rawValue: "ASSIGNMENT_REVOKE")
    /// The transaction was refunded in full (`revocationType`).
    public static let refundFull = Self(rawValue: "REFUND_FULL")
    /// The transaction was refunded, prorated (`revocationType`); a member's within 24 h of a seat refund is `SEAT_REFUND`.
    public static let refundProrated = Self(rawValue: "REFUND_PRORATED")
    /// Family Sharing of the subscription was revoked (`revocationType`).
    public static let familyRevoke = Self(rawValue: "FAMILY_REVOKE")
    /// Removed by the purchaser's seat refund: an unclaim within 24 h after a `REFUND`/`SEATS`, or a member revocation near it.
    public static let seatRefund = Self(rawValue: "SEAT_REFUND")
    /// A claim ended by our Unclaim Seat (a success, or a 404: the claim no longer exists).
    public static let unclaimedByDeveloper = Self(rawValue: "UNCLAIMED_BY_DEVELOPER")
    /// A claim an `UNCLAIM_SEATS` notification listed with no seat refund in the 24 h before (left, declined by a parent, …).
    public static let unclaimedByAppStore = Self(rawValue: "UNCLAIMED_BY_APP_STORE")
    /// The subscription period ended without a renewal (billing retry included).
    public static let expired = Self(rawValue: "EXPIRED")
    /// The purchaser's billing grace period ended without a successful renewal.
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    /// Cascade: the purchaser's subscription expired or its grace ended, taking the member's access with it.
    public static let groupExpired = Self(rawValue: "GROUP_EXPIRED")
    /// Cascade: the purchaser's subscription was revoked (refunded in full, say), taking the member's access with it.
    public static let groupRevoked = Self(rawValue: "GROUP_REVOKED")
    /// Revoked with no `revocationType` at all.
    public static let revoked = Self(rawValue: "REVOKED")
    /// The reasons this version names; any other value is a `revocationType` Apple sent, kept verbatim.
    public static let knownValues: Set<String> = [
        "ASSIGNMENT_REVOKE", "REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE", "SEAT_REFUND", "UNCLAIMED_BY_DEVELOPER",
        "UNCLAIMED_BY_APP_STORE", "EXPIRED", "GRACE_PERIOD_EXPIRED", "GROUP_EXPIRED", "GROUP_REVOKED", "REVOKED",
    ]

    /// Plain words for reports, e.g. "unclaimed by the App Store".
    public var explanation: String {
        switch rawValue {
        case "ASSIGNMENT_REVOKE": return "removed by the purchaser or the organization"
        case "REFUND_FULL": return "refunded in full"
        case "REFUND_PRORATED": return "refunded (prorated)"
        case "FAMILY_REVOKE": return "Family Sharing revoked"
        case "SEAT_REFUND": return "seat refunded"
        case "UNCLAIMED_BY_DEVELOPER": return "unclaimed by our server"
        case "UNCLAIMED_BY_APP_STORE": return "unclaimed by the App Store (left, declined by a parent, or seat refund)"
        case "EXPIRED": return "subscription expired"
        case "GRACE_PERIOD_EXPIRED": return "billing grace period expired"
        case "GROUP_EXPIRED": return "group subscription expired"
        case "GROUP_REVOKED": return "group subscription revoked or refunded"
        case "REVOKED": return "revoked"
        default: return "revoked (\(rawValue))"
        }
    }
}

/// The purchaser-level event behind a member's loss of access, one level up: which event
/// (`EXPIRED`, `GRACE_PERIOD_EXPIRED`, `REFUND_FULL`, `SEAT_REFUND` …), when, and its id.
public struct RevocationCause: Sendable, Hashable {
    /// What happened to the purchaser's subscription: the purchaser's own loss reason, or
    /// `SEAT_REFUND` for a seat refund.
    public var reason: RevocationReason
    /// When the purchaser-level event took effect: period or grace end, `revocationDate`, or the seat refund's signing time.
    public var at: EpochMillis
    /// The purchaser-level event.
    public var eventId: String

    /// Creates a cause.
    public init(reason: RevocationReason, at: EpochMillis, eventId: String) {
        self.reason = reason
        self.at = at
        self.eventId = eventId
    }

    /// The JSON form (`revocation.cause`).
    public var json: JSONValue { ["reason": .string(reason.rawValue), "at": .timestamp(at), "eventId": .string(eventId)] }
}

/// Why and when a member lost access, and which event says so.
public struct Revocation: Sendable, Hashable {
    /// Why access was lost: the member's own reason, or a cascade from the purchaser (`GROUP_EXPIRED`, `GROUP_REVOKED`).
    public var reason: RevocationReason
    /// When access ended (Apple's time); the member's `accessUntil` is the same moment.
    public var at: EpochMillis
    /// The event that caused it.
    public var eventId: String
    /// For a loss caused by the purchaser's subscription (`GROUP_EXPIRED`, `GROUP_REVOKED`,
    /// `SEAT_REFUND`): the purchaser-level event, its time and id. `nil` otherwise.
    public var cause: RevocationCause?

    /// Creates a revocation.
    public init(reason: RevocationReason, at: EpochMillis, eventId: String, cause: RevocationCause? = nil) {
        self.reason = reason
        self.at = at
        self.eventId = eventId
        self.cause = cause
    }

    /// The JSON form (`member.revocation`); `cause` only when there is one.
    public var json: JSONValue {
        guard case .object(var object) = JSONValue.object(["reason": .string(reason.rawValue), "at": .timestamp(at),
                                                           "eventId": .string(eventId)]) else { return .null }
        if let cause { object["cause"] = cause.json }
        return .object(object)
    }

    /// One sentence naming the purchaser-level event, e.g. "caused by EXPIRED (subscription
    /// expired) at 2026-10-31T00:00:00.000Z, event 5f…"; `nil` without a cause.
    public var causeText: String? {
        cause.map { "caused by \($0.reason.rawValue) (\($0.reason.explanation)) at \(Timestamp.iso8601($0.at)), event \($0.eventId)" }
    }
}

/// A member's role in a group.
public struct MemberRole: OpenStringEnum {
    /// The role as `group show --json` prints it: a known role, or an undocumented `inAppOwnershipType` verbatim.
    public let rawValue: String
    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The buyer of the group purchase, who holds one of its seats.
    public static let purchaser = Self(rawValue: "PURCHASER")
    /// An Apple-hosted invitee or organization seat with its own `ASSIGNED` transaction; takes a seat while linked with access.
    public static let assigned = Self(rawValue: "ASSIGNED")
    /// A developer-hosted member: a seat claim (Claim Seat, or listed by Get Seat Info), with no transaction of its own.
    public static let claim = Self(rawValue: "CLAIM")
    /// A family member with a `FAMILY_SHARED` copy of the purchaser's subscription.
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")
    /// The documented roles; any other value is an ownership type Apple has not documented.
    public static let knownValues: Set<String> = ["PURCHASER", "ASSIGNED", "CLAIM", "FAMILY_SHARED"]

    /// The role of a holder of their own transaction with this `inAppOwnershipType`: `ASSIGNED`,
    /// `FAMILY_SHARED`, or an ownership value Apple has not documented, kept verbatim.
    public init(heldOwnership ownership: InAppOwnershipType?) {
        self.init(rawValue: ownership?.rawValue ?? "ASSIGNED")
    }

    /// Whether this role is an ownership value Apple has not documented (a holder of their own
    /// transaction whose kind nobody knows yet: access from the transaction, flagged in audits).
    public var isUnknownOwnership: Bool { !Self.knownValues.contains(rawValue) }

    var rank: Int {
        switch self {
        case .purchaser: return 0
        case .assigned: return 1
        case .claim: return 2
        case .familyShared: return 3
        default: return 4
        }
    }
}

/// One member's access in a group.
public struct MemberState: Sendable, Hashable {
    /// How the member holds access: `PURCHASER`, `ASSIGNED`, `CLAIM`, `FAMILY_SHARED`, or an unknown ownership verbatim.
    public var role: MemberRole
    /// The member's own subscription (purchaser and transaction holders); `nil` for claims.
    public var originalTransactionId: String?
    /// From the member's transaction, or a claim's Claim Seat / Associate Seat request; `nil` when none says it.
    public var appTransactionId: String?
    /// The developer-hosted seat claim; `nil` for everyone but claims.
    public var seatClaimId: String?
    /// The app's own member id (`context.memberRef` of Claim or Associate Seat); claims only, `nil` when none was sent.
    public var memberRef: String?
    /// Whether the member has access at the state's `asOf`.
    public var hasAccess: Bool
    /// Start of the current (or last) continuous access (for a claim: of claim and purchaser access together); `nil` if unknown.
    public var accessSince: EpochMillis?
    /// When access ends (period end, grace end, own `expiresDate`) or ended (`revocation.at`); `nil` if unknown.
    public var accessUntil: EpochMillis?
    /// How access was lost (reason, time, event); `nil` while `hasAccess`, and for a claim whose group has no known purchaser.
    public var revocation: Revocation?
    /// Event ids of the evidence for this member (for audits).
    public var evidence: [String] = []

    /// The identifier that best names this member in reports.
    public var displayName: String {
        if let memberRef { return memberRef }
        if let seatClaimId { return "claim \(seatClaimId.prefix(8))…" }
        if let appTransactionId { return "app-tx \(appTransactionId)" }
        return "tx \(originalTransactionId ?? "?")"
    }

    /// Sort key of the JSON contract: role, then identifiers.
    var sortKey: (Int, String, String, String) {
        (role.rank, originalTransactionId ?? "", seatClaimId ?? "", appTransactionId ?? "")
    }
}

/// Seat counts of a group.
///
/// `total`, `renewalTotal` and `available` depend on the paid seats and are `nil` when no
/// purchaser transaction is known (organization and `unlinked:` groups). The other counts are
/// always numbers, as the JSON contract requires: with no known purchase nothing is refunded and
/// nothing is known to be over capacity, so they are 0.
public struct SeatCounts: Sendable, Hashable {
    /// Seats paid for in the current period, net of refunded seats.
    public var total: Int64?
    /// The seats of the next period: the pending `renewalQuantity`, else `total`.
    public var renewalTotal: Int64?
    /// Seats of the current period refunded (`revokedSeatQuantity`, plus whole seat additions refunded).
    public var refunded: Int64 = 0
    /// Active developer-hosted claims.
    public var claimed: Int64 = 0
    /// Active, linked `ASSIGNED` members.
    public var assigned: Int64 = 0
    /// Seats left: total − 1 (the purchaser's) − claimed − assigned, never below 0.
    public var available: Int64?
    /// How many seats must be given up to fit the current period (0 if none).
    public var overCapacity: Int64 = 0
    /// How many seats must be given up to fit the next period's size (0 if none).
    public var renewalOverCapacity: Int64 = 0
}

/// Apple's latest Get Seat Info.
public struct AppleSeatView: Sendable, Hashable {
    /// Apple's count of the group's paid seats (compared with `seats.total`); `nil` when the response omits it.
    public var totalSeatCount: Int64?
    /// Apple's count of seats still free (compared with `seats.available`); `nil` when the response omits it.
    public var availableSeatCount: Int64?
    /// The seat claims Apple lists as held, sorted (compared with our claims not unclaimed).
    public var assignedSeatClaimIds: [String]
    /// When Apple answered that Get Seat Info; drift compares our state at this moment.
    public var observedAt: EpochMillis
    /// The Get Seat Info event.
    public var eventId: String
}

/// A difference between our projection and Apple's view.
public struct Drift: Sendable, Hashable {
    /// What differs: `total`, `available` or `assignedSeatClaimIds`.
    public var field: String
    /// Our value at `apple.observedAt` (for `assignedSeatClaimIds`: the claim ids only we hold).
    public var ours: JSONValue
    /// Apple's value (for `assignedSeatClaimIds`: the claim ids only Apple lists).
    public var apple: JSONValue

    /// Creates a drift entry.
    public init(field: String, ours: JSONValue, apple: JSONValue) {
        self.field = field
        self.ours = ours
        self.apple = apple
    }
}

/// One group's state at (asOf, knownAt): the value `group show` prints.
public struct GroupState: Sendable, Hashable {
    /// The purchaser's `originalTransactionId`; else a linked `groupId`; else `unlinked:<originalTransactionId>` (lone holder).
    public var groupKey: String
    /// The purchaser's `originalTransactionId` (evidence can name it before any of its transactions); `nil` when none is known.
    public var purchaserOriginalTransactionId: String?
    /// The Apple `groupId`s linked to the group, sorted; `[]` when none.
    public var groupIds: [String]
    /// The product of the latest purchaser transaction, else of the latest member transaction; `nil` when none says.
    public var productId: String?
    /// `APPLE` or `DEVELOPER` (open) from that latest transaction; `nil` without `multiSeatInfo` (organization seats).
    public var invitationManagement: InvitationManagement?
    /// The purchaser's status at `asOf`; `UNKNOWN` with no purchaser transaction. Only `ACTIVE` and `GRACE_PERIOD` give access.
    public var status: GroupStatus
    /// The valid time evaluated (Apple's time: what was true then).
    public var asOf: EpochMillis
    /// `nil` means "everything recorded".
    public var knownAt: EpochMillis?
    /// Seat counts of the current period at `asOf`.
    public var seats: SeatCounts
    /// The purchaser (when known), claims and transaction holders, by role then ids; those who lost access stay listed.
    public var members: [MemberState]
    /// Apple's latest successful Get Seat Info for the purchaser; `nil` when none is recorded.
    public var apple: AppleSeatView?
    /// Each field where our state at `apple.observedAt` differs from Apple's view; `[]` when they agree or there is no view.
    public var drift: [Drift]
    /// When the purchaser's current period ends (renewal date), if known.
    public var periodEnd: EpochMillis?

    /// The JSON contract of `group show --json` (see `Events/projections.md`).
    public var json: JSONValue {
        [
            "groupKey": .string(groupKey),
            "purchaserOriginalTransactionId": .optional(purchaserOriginalTransactionId),
            "groupIds": .array(groupIds.map(JSONValue.string)),
            "productId": .optional(productId),
            "invitationManagement": .optional(invitationManagement?.rawValue),
            "status": .string(status.rawValue),
            "asOf": .timestamp(asOf),
            "knownAt": .timestamp(knownAt),
            "seats": [
                "total": .optional(seats.total), "renewalTotal": .optional(seats.renewalTotal),
                "refunded": .int(seats.refunded), "claimed": .int(seats.claimed), "assigned": .int(seats.assigned),
                "available": .optional(seats.available), "overCapacity": .int(seats.overCapacity),
                "renewalOverCapacity": .int(seats.renewalOverCapacity),
            ],
            "members": .array(members.map(\.json)),
            "apple": apple.map { apple in
                [
                    "totalSeatCount": .optional(apple.totalSeatCount),
                    "availableSeatCount": .optional(apple.availableSeatCount),
                    "assignedSeatClaimIds": .array(apple.assignedSeatClaimIds.map(JSONValue.string)),
                    "observedAt": .timestamp(apple.observedAt),
                ]
            } ?? .null,
            "drift": .array(drift.map { ["field": .string($0.field), "ours": $0.ours, "apple": $0.apple] }),
        ]
    }
}

extension MemberState {
    /// The member object of the JSON contract.
    public var json: JSONValue {
        [
            "role": .string(role.rawValue),
            "originalTransactionId": .optional(originalTransactionId),
            "appTransactionId": .optional(appTransactionId),
            "seatClaimId": .optional(seatClaimId),
            "memberRef": .optional(memberRef),
            "hasAccess": .bool(hasAccess),
            "accessSince": .timestamp(accessSince),
            "accessUntil": .timestamp(accessUntil),
            "revocation": revocation?.json ?? .null,
        ]
    }
}

extension MemberState {
    /// Reads back a member object of the JSON contract (``json``), as a stored group snapshot
    /// holds it; `nil` when it has no role. `evidence` is not in the contract and stays empty.
    public init?(json: JSONValue) {
        guard let role = json["role"]?.stringValue else { return nil }
        self.init(role: MemberRole(rawValue: role), originalTransactionId: json["originalTransactionId"]?.stringValue,
                  appTransactionId: json["appTransactionId"]?.stringValue, seatClaimId: json["seatClaimId"]?.stringValue,
                  memberRef: json["memberRef"]?.stringValue, hasAccess: json["hasAccess"]?.boolValue ?? false,
                  accessSince: Timestamp.parse(json["accessSince"]), accessUntil: Timestamp.parse(json["accessUntil"]),
                  revocation: json["revocation"].flatMap(Revocation.init(json:)))
    }
}

extension Revocation {
    /// Reads back the JSON form (``json``); `nil` for `null` or an object without reason, time and event.
    public init?(json: JSONValue) {
        guard let reason = json["reason"]?.stringValue, let at = Timestamp.parse(json["at"]),
              let eventId = json["eventId"]?.stringValue else { return nil }
        var cause: RevocationCause?
        if let c = json["cause"], let r = c["reason"]?.stringValue, let when = Timestamp.parse(c["at"]), let id = c["eventId"]?.stringValue {
            cause = RevocationCause(reason: RevocationReason(rawValue: r), at: when, eventId: id)
        }
        self.init(reason: RevocationReason(rawValue: reason), at: at, eventId: eventId, cause: cause)
    }
}
