import AppStoreModels

/// A group's purchaser status at a moment.
public struct GroupStatus: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let active = Self(rawValue: "ACTIVE")
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    public static let expired = Self(rawValue: "EXPIRED")
    public static let revoked = Self(rawValue: "REVOKED")
    public static let unknown = Self(rawValue: "UNKNOWN")
    public static let knownValues: Set<String> = ["ACTIVE", "GRACE_PERIOD", "BILLING_RETRY", "EXPIRED", "REVOKED", "UNKNOWN"]

    /// Whether the purchaser (and so the group) has access in this status.
    public var grantsAccess: Bool { self == .active || self == .gracePeriod }
}

/// Why someone lost access. Known codes are static members; an unknown `revocationType` is kept verbatim.
public struct RevocationReason: OpenStringEnum {
    public let rawValue: String
    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let assignmentRevoke = Self(rawValue: "ASSIGNMENT_REVOKE")
    public static let refundFull = Self(rawValue: "REFUND_FULL")
    public static let refundProrated = Self(rawValue: "REFUND_PRORATED")
    public static let familyRevoke = Self(rawValue: "FAMILY_REVOKE")
    public static let seatRefund = Self(rawValue: "SEAT_REFUND")
    public static let unclaimedByDeveloper = Self(rawValue: "UNCLAIMED_BY_DEVELOPER")
    public static let unclaimedByAppStore = Self(rawValue: "UNCLAIMED_BY_APP_STORE")
    public static let expired = Self(rawValue: "EXPIRED")
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let groupExpired = Self(rawValue: "GROUP_EXPIRED")
    public static let groupRevoked = Self(rawValue: "GROUP_REVOKED")
    /// Revoked with no `revocationType` at all.
    public static let revoked = Self(rawValue: "REVOKED")
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
    public var reason: RevocationReason
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
    public let rawValue: String
    /// Wraps any value.
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let purchaser = Self(rawValue: "PURCHASER")
    public static let assigned = Self(rawValue: "ASSIGNED")
    public static let claim = Self(rawValue: "CLAIM")
    /// A family member with a `FAMILY_SHARED` copy of the purchaser's subscription.
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")
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
    public var role: MemberRole
    public var originalTransactionId: String?
    public var appTransactionId: String?
    public var seatClaimId: String?
    public var memberRef: String?
    public var hasAccess: Bool
    public var accessSince: EpochMillis?
    public var accessUntil: EpochMillis?
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
    public var totalSeatCount: Int64?
    public var availableSeatCount: Int64?
    public var assignedSeatClaimIds: [String]
    public var observedAt: EpochMillis
    /// The Get Seat Info event.
    public var eventId: String
}

/// A difference between our projection and Apple's view.
public struct Drift: Sendable, Hashable {
    public var field: String
    public var ours: JSONValue
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
    public var groupKey: String
    public var purchaserOriginalTransactionId: String?
    public var groupIds: [String]
    public var productId: String?
    public var invitationManagement: InvitationManagement?
    public var status: GroupStatus
    public var asOf: EpochMillis
    /// `nil` means "everything recorded".
    public var knownAt: EpochMillis?
    public var seats: SeatCounts
    public var members: [MemberState]
    public var apple: AppleSeatView?
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
