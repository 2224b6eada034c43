import AppStoreModels
import LedgerEvents

/// The identifiers that make up one group, grown from evidence.
public struct GroupMembership: Sendable, Hashable {
    /// The group's key (see ``GroupIdentityResolver``).
    public var groupKey: String
    /// The purchaser's `originalTransactionId`, when known.
    public var purchaserOriginalTransactionId: String?
    /// Linked `groupId`s.
    public var groupIds: Set<String> = []
    /// Developer-hosted seat claims.
    public var seatClaimIds: Set<String> = []
    /// `originalTransactionId`s of `ASSIGNED` seat holders.
    public var memberOriginalTransactionIds: Set<String> = []
    /// The product, for `unlinked:` groups (which have no purchaser to take it from).
    public var productId: String?
    /// Other identifiers that name this group or its members (transaction ids, `appTransactionId`s),
    /// for resolving a user's REF.
    public var aliases: Set<String> = []
    /// The app's member refs of the group's claims (`context.memberRef`): they resolve a user's
    /// REF but never find events, since apps reuse member ids across groups (index role `memberRef`).
    public var references: Set<String> = []

    /// Creates an empty membership for `groupKey`.
    public init(groupKey: String) { self.groupKey = groupKey }

    /// Every identifier whose events concern this group (for finding its events).
    public var identifiers: Set<String> {
        var ids = groupIds.union(seatClaimIds).union(memberOriginalTransactionIds)
        if let purchaserOriginalTransactionId { ids.insert(purchaserOriginalTransactionId) }
        return ids
    }
}

/// Resolves which identifiers form which group, as a pure function of a set of events.
///
/// Rules (`Events/projection-rules.md`): a purchaser's `originalTransactionId` is a group key;
/// seat endpoint paths and Claim Seat / Get Seat Info responses tie claim ids to it; Get Customer
/// Groups and Get Group Members tie `groupId`s to a purchaser or to assigned seat holders; an
/// assigned seat holder nothing links is a group of its own, `unlinked:<originalTransactionId>`.
/// Placeholders are ignored. The result does not depend on the order facts are added.
///
/// Streaming: ``add(_:)`` keeps only link evidence (memory grows with identifiers, not events),
/// so a rebuild can feed it the whole log. The rules live in ``IdentityEvidence``, which a
/// rebuild runs over interned integer identifiers instead of strings.
public struct GroupIdentityResolver: Sendable {
    /// The prefix of keys of groups made of assigned seat holders with no linking evidence.
    public static let unlinkedPrefix = "unlinked:"

    /// The key of the group of an assigned seat holder nothing links: `unlinked:<originalTransactionId>`.
    public static func unlinkedKey(for originalTransactionId: String) -> String { unlinkedPrefix + originalTransactionId }

    private var evidence = IdentityEvidence<String>()

    /// An empty resolver.
    public init() {}

    /// Groups keyed by group key, for a whole set of facts.
    public static func resolve(_ facts: [EventFacts]) -> [String: GroupMembership] {
        var resolver = GroupIdentityResolver()
        for fact in facts { resolver.add(fact) }
        return resolver.groups()
    }

    /// Records the link evidence of one event.
    public mutating func add(_ fact: EventFacts) {
        evidence.add(fact) { $0 }
    }

    /// The groups the evidence so far describes.
    public func groups() -> [String: GroupMembership] {
        evidence.groups(placeholderGroupId: SandboxPlaceholder.groupId,
                        placeholderMember: SandboxPlaceholder.memberAppTransactionId,
                        unlinkedKey: Self.unlinkedKey(for:))
            .mapValues { GroupMembership($0) { $0 } }
    }
}

extension GroupMembership {
    /// The membership of a group resolved over identifiers of type `ID`, named through `string`.
    public init<ID>(_ group: IdentityEvidence<ID>.Group, string: (ID) -> String) {
        self.init(groupKey: string(group.key))
        purchaserOriginalTransactionId = group.purchaser.map(string)
        groupIds = Set(group.groupIds.map(string))
        seatClaimIds = Set(group.seatClaimIds.map(string))
        memberOriginalTransactionIds = Set(group.members.map(string))
        productId = group.productId
        aliases = Set(group.aliases.map(string))
        references = Set(group.references.map(string))
    }
}
