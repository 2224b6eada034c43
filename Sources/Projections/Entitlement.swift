import AppStoreModels

/// How a person holds a product: the kind of access an entitlement comes through.
public struct EntitlementSource: OpenStringEnum {
    /// The value as the entitlement contract prints it.
    public let rawValue: String
    /// Wraps any value: a holder's undocumented `inAppOwnershipType` is kept verbatim.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Bought by the person: an individual subscription, or the group purchaser's own seat.
    public static let purchased = Self(rawValue: "PURCHASED")
    /// A family member's `FAMILY_SHARED` copy of someone's subscription.
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")
    /// An Apple-hosted invitee's or an organization's assigned seat (`ASSIGNED`).
    public static let assignedSeat = Self(rawValue: "ASSIGNED_SEAT")
    /// A developer-hosted seat claim (Claim Seat).
    public static let developerClaim = Self(rawValue: "DEVELOPER_CLAIM")
    /// The documented sources.
    public static let knownValues: Set<String> = ["PURCHASED", "FAMILY_SHARED", "ASSIGNED_SEAT", "DEVELOPER_CLAIM"]

    /// The source of a group member's access with `role`.
    public init(role: MemberRole) {
        switch role {
        case .purchaser: self = .purchased
        case .familyShared: self = .familyShared
        case .assigned: self = .assignedSeat
        case .claim: self = .developerClaim
        default: self.init(rawValue: role.rawValue)
        }
    }
}

/// One way a person holds (or held) a product: a membership of a group or an individual subscription.
public struct EntitlementGrant: Sendable, Hashable {
    /// How the access is held.
    public var source: EntitlementSource
    /// The product; `nil` when no transaction names it.
    public var productId: String?
    /// Whether it gives access at the moment asked about.
    public var hasAccess: Bool
    /// Start of its current (or last) continuous access.
    public var since: EpochMillis?
    /// When it ends without new news (period end, grace end) or ended.
    public var until: EpochMillis?
    /// Why it ended; `nil` while it lasts.
    public var revocation: Revocation?
    /// The group's (or the individual subscription's) status.
    public var status: GroupStatus
    /// The group, `nil` for an individual subscription.
    public var groupKey: String?
    /// The group purchaser's (or the individual subscriber's) `originalTransactionId`.
    public var purchaserOriginalTransactionId: String?
    /// The holder's own subscription; `nil` for a developer-hosted claim.
    public var originalTransactionId: String?
    /// The holder's `appTransactionId`, when known.
    public var appTransactionId: String?
    /// The developer-hosted seat claim, for claims.
    public var seatClaimId: String?
    /// The app's member reference of a claim.
    public var memberRef: String?

    /// A group member's access in group `groupKey` (product `productId`, purchaser status `status`).
    public init(member: MemberState, groupKey: String, productId: String?, purchaserOriginalTransactionId: String?,
                status: GroupStatus) {
        source = EntitlementSource(role: member.role)
        self.productId = productId
        hasAccess = member.hasAccess
        since = member.accessSince
        until = member.accessUntil
        revocation = member.revocation
        self.status = status
        self.groupKey = groupKey
        self.purchaserOriginalTransactionId = purchaserOriginalTransactionId
        originalTransactionId = member.originalTransactionId
        appTransactionId = member.appTransactionId
        seatClaimId = member.seatClaimId
        memberRef = member.memberRef
    }

    /// An individual subscriber's access.
    public init(subscription: SubscriptionState) {
        source = .purchased
        productId = subscription.productId
        hasAccess = subscription.hasAccess
        since = subscription.accessSince
        until = subscription.accessUntil
        revocation = subscription.revocation
        status = subscription.status
        groupKey = nil
        purchaserOriginalTransactionId = subscription.originalTransactionId
        originalTransactionId = subscription.originalTransactionId
        appTransactionId = subscription.appTransactionId
        seatClaimId = nil
        memberRef = nil
    }

    /// The JSON form (the `through` of the entitlement contract, or an element of `alsoThrough`).
    public var json: JSONValue {
        [
            "source": .string(source.rawValue), "entitled": .bool(hasAccess),
            "since": .timestamp(since), "until": .timestamp(until),
            "status": .string(status.rawValue),
            "groupKey": .optional(groupKey), "purchaserOriginalTransactionId": .optional(purchaserOriginalTransactionId),
            "originalTransactionId": .optional(originalTransactionId), "appTransactionId": .optional(appTransactionId),
            "seatClaimId": .optional(seatClaimId), "memberRef": .optional(memberRef),
            "revocation": revocation?.json ?? .null,
        ]
    }

    /// Orders the grants of one product: entitled first, then the one whose access lasts (or
    /// lasted) longest, then by identifiers.
    static func precedes(_ a: Self, _ b: Self) -> Bool {
        if a.hasAccess != b.hasAccess { return a.hasAccess }
        let aUntil = a.until ?? .max, bUntil = b.until ?? .max
        if aUntil != bUntil { return aUntil > bUntil }
        return (a.source.rawValue, a.groupKey ?? "", a.originalTransactionId ?? "", a.seatClaimId ?? "")
            < (b.source.rawValue, b.groupKey ?? "", b.originalTransactionId ?? "", b.seatClaimId ?? "")
    }
}

/// A person's entitlement to one product at a moment, from every way they hold it.
public struct ProductEntitlement: Sendable, Hashable {
    /// The product; `nil` for access whose transactions name none.
    public var productId: String?
    /// Whether any grant gives access at the moment.
    public var entitled: Bool
    /// Entitled: the earliest start among the grants giving access; else the start of the access that ended last.
    public var since: EpochMillis?
    /// Entitled: when access ends without news (the latest end among the grants giving access,
    /// `nil` when one of them has no known end); else when it ended.
    public var until: EpochMillis?
    /// The next moment this answer changes without news: the earliest end among the grants
    /// giving access (a source may end while another goes on); `nil` when none is known.
    public var changesAt: EpochMillis?
    /// Not entitled: why the access that ended last ended (reason, time, event, cause one level up).
    public var reason: Revocation?
    /// Every grant of the product, entitled first (``EntitlementGrant/precedes(_:_:)``); the first is
    /// `through`, the others `alsoThrough`.
    public var grants: [EntitlementGrant]

    /// The JSON form: one element of `entitlements`.
    public func json(bundleId: String, environment: String) -> JSONValue {
        [
            "productId": .optional(productId), "entitled": .bool(entitled),
            "since": .timestamp(since), "until": .timestamp(until),
            "bundleId": .string(bundleId), "environment": .string(environment),
            "through": grants.first?.json ?? .null,
            "reason": reason?.json ?? .null,
            "alsoThrough": .array(grants.dropFirst().map(\.json)),
        ]
    }
}

/// Gathers a person's grants into one entitlement per product (pure).
public enum Entitlements {
    /// One entitlement per product: entitled products first, then by product id (`nil` last).
    public static func byProduct(_ grants: [EntitlementGrant]) -> [ProductEntitlement] {
        var products: [String?: [EntitlementGrant]] = [:]
        for grant in grants where !(products[grant.productId]?.contains(grant) ?? false) {
            products[grant.productId, default: []].append(grant)
        }
        return products.map { productId, grants in
            let ordered = grants.sorted(by: EntitlementGrant.precedes)
            let entitled = ordered.filter(\.hasAccess)
            var result = ProductEntitlement(productId: productId, entitled: !entitled.isEmpty, grants: ordered)
            if entitled.isEmpty {
                result.since = ordered.first?.since
                result.until = ordered.first?.until
                result.reason = ordered.first?.revocation
            } else {
                result.since = entitled.compactMap(\.since).min()
                result.until = entitled.contains { $0.until == nil } ? nil : entitled.compactMap(\.until).max()
                result.changesAt = entitled.compactMap(\.until).min()
            }
            return result
        }.sorted { a, b in
            if a.entitled != b.entitled { return a.entitled }
            switch (a.productId, b.productId) {
            case let (x?, y?): return x < y
            case (_?, nil): return true
            default: return false
            }
        }
    }
}
