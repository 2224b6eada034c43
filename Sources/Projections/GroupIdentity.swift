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
/// assigned seat holder nothing links is a group of its own, `unlinked:<originalTransactionId>`. Placeholders are ignored.
/// The result does not depend on the order facts are added.
///
/// Streaming: ``add(_:)`` keeps only link evidence (memory grows with identifiers, not events),
/// so a rebuild can feed it the whole log.
public struct GroupIdentityResolver: Sendable {
    /// The prefix of keys of groups made of assigned seat holders with no linking evidence.
    public static let unlinkedPrefix = "unlinked:"

    /// The key of the group of an assigned seat holder nothing links: `unlinked:<originalTransactionId>`.
    public static func unlinkedKey(for originalTransactionId: String) -> String { unlinkedPrefix + originalTransactionId }

    private var purchasers = Set<String>()
    private var nonAssignedTransactionIds: [String: String] = [:]    // transactionId → otid
    private var nonAssignedAppTransactionIds: [String: String] = [:] // appTransactionId → otid
    private var memberTransactions: [String: (tx: TransactionFact, key: (EpochMillis, String))] = [:]
    private var memberByIdentifier: [String: String] = [:]
    private var claimPurchaser: [String: String] = [:]
    private var unclaimLinks: [(claims: [String], otid: String?, purchaserOTID: String?)] = []
    private var customerLinks = Set<CustomerLink>()
    private var memberGroupIds = Set<String>()
    private var claimAliases: [(alias: String, claim: String)] = []

    private struct CustomerLink: Hashable { let groupId: String; let customer: String }

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
        // Only a successful seat-endpoint response proves the path names a purchaser (a 404 for a
        // mistyped id must not create a group).
        if let p = fact.seatPathTransactionId, fact.isSuccessfulResponse {
            purchasers.insert(p)
            if let c = fact.seatPathClaimId { claimPurchaser[c] = p }
            if let c = fact.claimedSeatId { claimPurchaser[c] = p }
            for c in fact.seatInfo?.assignedSeatClaimIds ?? [] { claimPurchaser[c] = p }
        }
        for tx in fact.transactions {
            if tx.isAssigned {
                let otid = tx.originalTransactionId
                let key = (tx.signedDate ?? fact.occurredAt, tx.transactionId)
                if let existing = memberTransactions[otid], existing.key >= key {} else { memberTransactions[otid] = (tx, key) }
                memberByIdentifier[otid] = otid
                memberByIdentifier[tx.transactionId] = otid
                if let app = tx.appTransactionId, app != SandboxPlaceholder.memberAppTransactionId { memberByIdentifier[app] = otid }
            } else {
                if tx.isPurchaser { purchasers.insert(tx.originalTransactionId) }
                nonAssignedTransactionIds[tx.transactionId] = tx.originalTransactionId
                nonAssignedTransactionIds[tx.originalTransactionId] = tx.originalTransactionId
                if let app = tx.appTransactionId { nonAssignedAppTransactionIds[app] = tx.originalTransactionId }
            }
        }
        if !fact.unclaimSeatIds.isEmpty {
            unclaimLinks.append((fact.unclaimSeatIds, fact.unclaimOriginalTransactionId,
                                 fact.transactions.first(where: { $0.isPurchaser })?.originalTransactionId))
        }
        if fact.isSuccessfulResponse {
            if let customer = fact.customerId {
                for group in fact.customerGroups { customerLinks.insert(CustomerLink(groupId: group.groupId, customer: customer)) }
            }
            if let groupId = fact.membersGroupId {
                memberGroupIds.insert(groupId)
                for app in fact.memberAppTransactionIds { customerLinks.insert(CustomerLink(groupId: groupId, customer: app)) }
            }
        }
        if let claim = fact.claimedSeatId ?? fact.seatPathClaimId {
            // A claim's appTransactionId and memberRef also name the group (for `member show` / REF lookups).
            if let app = fact.requestAppTransactionId { claimAliases.append((app, claim)) }
            if let ref = fact.memberRef { claimAliases.append((ref, claim)) }
        }
    }

    private func purchaser(for id: String) -> String? {
        if purchasers.contains(id) { return id }
        if let p = nonAssignedTransactionIds[id], purchasers.contains(p) { return p }
        if let p = nonAssignedAppTransactionIds[id], purchasers.contains(p) { return p }
        return nil
    }

    /// The groups the evidence so far describes.
    public func groups() -> [String: GroupMembership] {
        var claims = claimPurchaser
        for link in unclaimLinks {
            guard let p = link.otid.flatMap({ purchaser(for: $0) }) ?? link.purchaserOTID else { continue }
            for c in link.claims where claims[c] == nil { claims[c] = p }
        }
        var groupPurchasers: [String: Set<String>] = [:]
        var groupMembers: [String: Set<String>] = [:]
        var knownGroupIds = memberGroupIds.subtracting([SandboxPlaceholder.groupId])
        for link in customerLinks {
            guard link.groupId != SandboxPlaceholder.groupId, link.customer != SandboxPlaceholder.memberAppTransactionId else { continue }
            knownGroupIds.insert(link.groupId)
            if let p = purchaser(for: link.customer) {
                groupPurchasers[link.groupId, default: []].insert(p)
            } else if let m = memberByIdentifier[link.customer] {
                groupMembers[link.groupId, default: []].insert(m)
            }
        }

        var groups: [String: GroupMembership] = [:]
        for p in purchasers {
            var membership = GroupMembership(groupKey: p)
            membership.purchaserOriginalTransactionId = p
            groups[p] = membership
        }
        var groupKeyOfGroupId: [String: String] = [:]
        for groupId in knownGroupIds {
            let candidates = groupPurchasers[groupId] ?? []
            if candidates.count == 1, let p = candidates.first {
                groups[p]?.groupIds.insert(groupId)
                groupKeyOfGroupId[groupId] = p
            } else {
                var membership = GroupMembership(groupKey: groupId)
                membership.groupIds = [groupId]
                groups[groupId] = membership
                groupKeyOfGroupId[groupId] = groupId
            }
        }
        for (claim, p) in claims { groups[p]?.seatClaimIds.insert(claim) }
        var linkedMembers = Set<String>()
        for (groupId, members) in groupMembers {
            guard let key = groupKeyOfGroupId[groupId] else { continue }
            for m in members {
                groups[key]?.memberOriginalTransactionIds.insert(m)
                linkedMembers.insert(m)
            }
        }
        // Each holder nothing links is a group of its own: nothing says two of them share a group,
        // and a catch-all group would make every append re-fold all of them.
        for (otid, entry) in memberTransactions where !linkedMembers.contains(otid) {
            var membership = GroupMembership(groupKey: Self.unlinkedKey(for: otid))
            membership.productId = entry.tx.productId ?? "unknown"
            membership.memberOriginalTransactionIds = [otid]
            groups[membership.groupKey] = membership
        }

        // Aliases: other identifiers of the purchaser, members and claims.
        for (id, otid) in nonAssignedTransactionIds where id != otid && purchasers.contains(otid) { groups[otid]?.aliases.insert(id) }
        for (app, otid) in nonAssignedAppTransactionIds where purchasers.contains(otid) { groups[otid]?.aliases.insert(app) }
        var groupsOfMember: [String: [String]] = [:]
        for (key, membership) in groups {
            for m in membership.memberOriginalTransactionIds { groupsOfMember[m, default: []].append(key) }
        }
        for (id, m) in memberByIdentifier where id != m {
            for key in groupsOfMember[m] ?? [] { groups[key]?.aliases.insert(id) }
        }
        for link in claimAliases {
            if let p = claims[link.claim] { groups[p]?.aliases.insert(link.alias) }
        }
        return groups
    }
}
