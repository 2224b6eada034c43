import AppStoreModels

/// A derived transition as the derivation stores it: the feed row's fields and the subject's
/// identifiers (the columns a member lookup filters on).
public struct AccessTransitionRow: Sendable, Hashable {
    /// The transition's stable id.
    public var id: String
    /// `group:<key>` or `subscription:<otid>`.
    public var scope: String
    /// The subject's key within the scope.
    public var subjectKey: String
    /// The product, when named.
    public var productId: String?
    /// The kind, verbatim.
    public var kind: String
    /// When the ledger learned it.
    public var learnedAt: EpochMillis
    /// The transition's canonical JSON.
    public var body: String
    /// The subject's identifiers: group key, `originalTransactionId`, `appTransactionId`, seat claim id, member reference.
    public var groupKey: String?, originalTransactionId: String?, appTransactionId: String?, seatClaimId: String?, memberRef: String?

    /// Creates a row.
    public init(id: String, scope: String, subjectKey: String, productId: String?, kind: String, learnedAt: EpochMillis, body: String,
                groupKey: String?, originalTransactionId: String?, appTransactionId: String?, seatClaimId: String?, memberRef: String?) {
        self.id = id
        self.scope = scope
        self.subjectKey = subjectKey
        self.productId = productId
        self.kind = kind
        self.learnedAt = learnedAt
        self.body = body
        self.groupKey = groupKey
        self.originalTransactionId = originalTransactionId
        self.appTransactionId = appTransactionId
        self.seatClaimId = seatClaimId
        self.memberRef = memberRef
    }
}
