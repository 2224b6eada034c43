import AppStoreModels

/// Who a transition is about, with the identifiers the projections know for them.
///
/// In a group: the purchaser, an assigned or family holder (their own `originalTransactionId`),
/// or a developer-hosted claim (its `seatClaimId`, with the `appTransactionId` and `memberRef`
/// its Claim or Associate Seat named). In an individual subscription: the subscriber. The app's
/// user id is not here: links are a person's, resolved across scopes by whoever reads the transitions.
public struct AccessSubject: Sendable, Hashable {
    /// The scope the subject was derived in.
    public var scope: AccessScope
    /// The subject's key within the scope: `claim:<seatClaimId>`, else `tx:<originalTransactionId>`.
    public var key: String
    /// The subject's own subscription; `nil` for a claim.
    public var originalTransactionId: String?
    /// The subject's `appTransactionId`, when known (a claim's may come later, by Associate Seat).
    public var appTransactionId: String?
    /// The developer-hosted seat claim; `nil` for everyone but claims.
    public var seatClaimId: String?
    /// The app's member reference of a claim, when Claim or Associate Seat sent one.
    public var memberRef: String?
    /// The group purchaser's (or the individual subscriber's) `originalTransactionId`, when known.
    public var purchaserOriginalTransactionId: String?

    /// The group, `nil` for an individual subscription.
    public var groupKey: String? { scope.groupKey }

    /// Creates a subject.
    public init(scope: AccessScope, key: String, originalTransactionId: String?, appTransactionId: String?,
                seatClaimId: String?, memberRef: String?, purchaserOriginalTransactionId: String?) {
        self.scope = scope
        self.key = key
        self.originalTransactionId = originalTransactionId
        self.appTransactionId = appTransactionId
        self.seatClaimId = seatClaimId
        self.memberRef = memberRef
        self.purchaserOriginalTransactionId = purchaserOriginalTransactionId
    }

    /// The holder of `grant` in `scope`.
    public init(scope: AccessScope, grant: EntitlementGrant) {
        let key = grant.seatClaimId.map { "claim:" + $0 } ?? grant.originalTransactionId.map { "tx:" + $0 }
            ?? "app:" + (grant.appTransactionId ?? "")
        self.init(scope: scope, key: key, originalTransactionId: grant.originalTransactionId,
                  appTransactionId: grant.appTransactionId, seatClaimId: grant.seatClaimId, memberRef: grant.memberRef,
                  purchaserOriginalTransactionId: grant.purchaserOriginalTransactionId)
    }

    /// The JSON form (`subject` of a transition).
    public var json: JSONValue {
        [
            "scope": .string(scope.key), "key": .string(key), "groupKey": .optional(groupKey),
            "originalTransactionId": .optional(originalTransactionId), "appTransactionId": .optional(appTransactionId),
            "seatClaimId": .optional(seatClaimId), "memberRef": .optional(memberRef),
            "purchaserOriginalTransactionId": .optional(purchaserOriginalTransactionId),
        ]
    }
}

/// What a transition's state belongs to: one subject's access to one product in one scope.
public struct AccessKey: Sendable, Hashable, Comparable {
    /// ``AccessScope/key``.
    public var scope: String
    /// ``AccessSubject/key``.
    public var subject: String
    /// The product; `nil` for access whose transactions name none.
    public var productId: String?

    /// Creates a key.
    public init(scope: String, subject: String, productId: String?) {
        self.scope = scope
        self.subject = subject
        self.productId = productId
    }

    /// Orders by scope, subject, then product (`nil` first).
    public static func < (a: Self, b: Self) -> Bool {
        (a.scope, a.subject, a.productId == nil ? 0 : 1, a.productId ?? "") < (b.scope, b.subject, b.productId == nil ? 0 : 1, b.productId ?? "")
    }
}
