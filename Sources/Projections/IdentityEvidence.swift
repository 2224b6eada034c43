import AppStoreModels
import LedgerEvents

/// The link evidence of a set of events and the groups it describes: the rules of
/// ``GroupIdentityResolver``, over any representation of identifiers.
///
/// `ID` is `String` for the resolver used on one group's events; a rebuild of a whole ledger runs
/// it over small integers from an interning table (each distinct identifier stored once), so its
/// maps hold integers instead of strings. The rules do not depend on the representation:
/// ``add(_:id:)`` receives the identifier strings of an event and keeps them as `id(string)`.
///
/// ```swift
/// var evidence = IdentityEvidence<String>()
/// for fact in facts { evidence.add(fact) { $0 } }
/// let groups = evidence.groups(placeholderGroupId: SandboxPlaceholder.groupId,
///                              placeholderMember: SandboxPlaceholder.memberAppTransactionId,
///                              unlinkedKey: GroupIdentityResolver.unlinkedKey(for:))
/// ```
public struct IdentityEvidence<ID: Hashable & Sendable>: Sendable {
    /// One group the evidence describes, its identifiers as `ID`s.
    public struct Group: Sendable {
        /// The group's key (see ``GroupIdentityResolver``).
        public var key: ID
        /// The purchaser's `originalTransactionId`, when known.
        public var purchaser: ID?
        /// Linked `groupId`s.
        public var groupIds: Set<ID> = []
        /// Developer-hosted seat claims.
        public var seatClaimIds: Set<ID> = []
        /// `originalTransactionId`s of the members' own transactions in the group: `ASSIGNED`
        /// seat holders, and `FAMILY_SHARED` or unknown-ownership holders linked to it.
        public var members: Set<ID> = []
        /// The product, for `unlinked:` groups.
        public var productId: String?
        /// Other identifiers that name the group or its members.
        public var aliases: Set<ID> = []
        /// The app's own member refs of the group's claims: they resolve a user's REF, and never
        /// route events (an app reuses its member ids across groups, so routing by them would tie
        /// every group holding an `m1` to every other).
        public var references: Set<ID> = []

        init(key: ID) { self.key = key }

        /// Every identifier of the group, aliases included, references not (what routes an event
        /// to it; an identifier can come more than once).
        public func forEachIdentifier(_ body: (ID) throws -> Void) rethrows {
            if let purchaser { try body(purchaser) }
            for id in groupIds { try body(id) }
            for id in seatClaimIds { try body(id) }
            for id in members { try body(id) }
            for id in aliases { try body(id) }
        }
    }

    /// An assigned seat holder's latest transaction: its product, and the order it was chosen by;
    /// and when the holder's first transaction started.
    private struct MemberTransaction: Sendable {
        let productId: String?
        let key: (EpochMillis, String)
        var start: EpochMillis
    }

    /// A listing or lookup that names `customer` in `groupId`, at Apple's time `at`.
    private struct CustomerLink: Hashable, Sendable { let groupId: ID; let customer: ID; let at: EpochMillis }

    private var purchasers = Set<ID>()
    private var nonAssignedTransactionIds: [ID: ID] = [:]    // transactionId → otid
    /// appTransactionId → otids of non-assigned transactions: one Apple Account has one
    /// appTransactionId per app, so a purchaser's group purchase and a personal subscription share it.
    private var nonAssignedAppTransactionIds = IdentifierSets<ID>()
    private var memberTransactions: [ID: MemberTransaction] = [:]
    /// Identifier → the assigned seat holders (otids) it names: a member who moved from one group to
    /// another has two holders behind one appTransactionId.
    private var memberByIdentifier = IdentifierSets<ID>()
    private var claimPurchaser: [ID: ID] = [:]
    private var unclaimLinks: [(claims: [ID], otid: ID?, purchaserOTID: ID?)] = []
    private var customerLinks = Set<CustomerLink>()
    private var memberGroupIds = Set<ID>()
    private var claimAliases = Set<ClaimAlias>()

    private struct ClaimAlias: Hashable, Sendable { let alias: ID; let claim: ID; let isMemberRef: Bool }

    /// No evidence yet.
    public init() {}

    /// Records the link evidence of one event; `id` turns each identifier string into an `ID`.
    ///
    /// Specialized here for the rebuild's interned ids: the rebuild lives in another module, where
    /// this generic code would otherwise run unspecialized (through value witnesses).
    @_specialize(exported: true, where ID == UInt32)
    public mutating func add(_ fact: EventFacts, id: (String) -> ID) {
        // Only a successful seat-endpoint response proves the path names a purchaser (a 404 for a
        // mistyped id must not create a group).
        if let path = fact.seatPathTransactionId, fact.isSuccessfulResponse {
            let p = id(path)
            purchasers.insert(p)
            if let c = fact.seatPathClaimId { claimPurchaser[id(c)] = p }
            if let c = fact.claimedSeatId { claimPurchaser[id(c)] = p }
            for c in fact.seatInfo?.assignedSeatClaimIds ?? [] { claimPurchaser[id(c)] = p }
        }
        for tx in fact.transactions {
            let otid = id(tx.originalTransactionId)
            let transaction = id(tx.transactionId)
            // Every holder of access from someone else's purchase (ASSIGNED, FAMILY_SHARED, an
            // unknown ownership) is a member by their own transaction, never a purchaser.
            if tx.isHeldAccess {
                let key = (tx.signedDate ?? fact.occurredAt, tx.transactionId)
                let start = tx.purchaseDate ?? fact.occurredAt
                if var existing = memberTransactions[otid] {
                    existing.start = min(existing.start, start)
                    if existing.key < key { existing = MemberTransaction(productId: tx.productId, key: key, start: existing.start) }
                    memberTransactions[otid] = existing
                } else {
                    memberTransactions[otid] = MemberTransaction(productId: tx.productId, key: key, start: start)
                }
                memberByIdentifier.insert(otid, for: otid)
                memberByIdentifier.insert(otid, for: transaction)
                if let app = tx.appTransactionId, app != SandboxPlaceholder.memberAppTransactionId {
                    memberByIdentifier.insert(otid, for: id(app))
                }
            } else {
                if tx.isPurchaser { purchasers.insert(otid) }
                nonAssignedTransactionIds[transaction] = otid
                nonAssignedTransactionIds[otid] = otid
                if let app = tx.appTransactionId { nonAssignedAppTransactionIds.insert(otid, for: id(app)) }
            }
        }
        if !fact.unclaimSeatIds.isEmpty {
            unclaimLinks.append((fact.unclaimSeatIds.map(id), fact.unclaimOriginalTransactionId.map(id),
                                 fact.transactions.first(where: { $0.isPurchaser }).map { id($0.originalTransactionId) }))
        }
        if fact.isSuccessfulResponse {
            if let customer = fact.customerId.map(id) {
                for group in fact.customerGroups {
                    customerLinks.insert(CustomerLink(groupId: id(group.groupId), customer: customer, at: fact.occurredAt))
                }
            }
            if let groupId = fact.membersGroupId.map(id) {
                memberGroupIds.insert(groupId)
                for app in fact.memberAppTransactionIds {
                    customerLinks.insert(CustomerLink(groupId: groupId, customer: id(app), at: fact.occurredAt))
                }
            }
        }
        if let claim = (fact.claimedSeatId ?? fact.seatPathClaimId).map(id) {
            // A claim's appTransactionId and memberRef also name the group (for `member show` / REF lookups).
            if let app = fact.requestAppTransactionId { claimAliases.insert(ClaimAlias(alias: id(app), claim: claim, isMemberRef: false)) }
            if let ref = fact.memberRef { claimAliases.insert(ClaimAlias(alias: id(ref), claim: claim, isMemberRef: true)) }
        }
    }

    /// Adds the evidence of `later`, gathered from events that all come after this evidence's
    /// events in log order, with its identifiers turned into this evidence's by `map`.
    ///
    /// The result is the evidence that adding all the events in log order would have given, so a
    /// rebuild can gather the evidence of two halves of the log on two threads and join them
    /// (`map` must be one-to-one: the same identifier string gives the same `ID`). Where ``add(_:id:)``
    /// lets a later event overwrite (a claim's purchaser, a transaction's original transaction),
    /// `later` wins; what it keeps as sets, it unites; a member's latest transaction is the later
    /// of the two, the earlier one on a tie, as adding in order keeps.
    @_specialize(exported: true, where ID == UInt32, Other == UInt32)
    public mutating func absorb<Other>(_ later: consuming IdentityEvidence<Other>, mapping map: (Other) -> ID) {
        // Each of `later`'s maps is emptied once merged, so its memory goes as this one grows.
        for p in later.purchasers { purchasers.insert(map(p)) }
        later.purchasers = []
        for (transaction, otid) in later.nonAssignedTransactionIds { nonAssignedTransactionIds[map(transaction)] = map(otid) }
        later.nonAssignedTransactionIds = [:]
        nonAssignedAppTransactionIds.insertAll(later.nonAssignedAppTransactionIds, mapping: map)
        later.nonAssignedAppTransactionIds = IdentifierSets()
        for (otid, entry) in later.memberTransactions {
            let id = map(otid)
            if var existing = memberTransactions[id] {
                existing.start = min(existing.start, entry.start)
                if existing.key < entry.key { existing = MemberTransaction(productId: entry.productId, key: entry.key, start: existing.start) }
                memberTransactions[id] = existing
            } else {
                memberTransactions[id] = MemberTransaction(productId: entry.productId, key: entry.key, start: entry.start)
            }
        }
        later.memberTransactions = [:]
        memberByIdentifier.insertAll(later.memberByIdentifier, mapping: map)
        later.memberByIdentifier = IdentifierSets()
        for (claim, p) in later.claimPurchaser { claimPurchaser[map(claim)] = map(p) }
        later.claimPurchaser = [:]
        for link in later.unclaimLinks {
            unclaimLinks.append((link.claims.map(map), link.otid.map(map), link.purchaserOTID.map(map)))
        }
        later.unclaimLinks = []
        for link in later.customerLinks {
            customerLinks.insert(CustomerLink(groupId: map(link.groupId), customer: map(link.customer), at: link.at))
        }
        later.customerLinks = []
        for groupId in later.memberGroupIds { memberGroupIds.insert(map(groupId)) }
        later.memberGroupIds = []
        for link in later.claimAliases {
            claimAliases.insert(ClaimAlias(alias: map(link.alias), claim: map(link.claim), isMemberRef: link.isMemberRef))
        }
    }

    private func purchaser(for id: ID) -> ID? {
        if purchasers.contains(id) { return id }
        if let p = nonAssignedTransactionIds[id], purchasers.contains(p) { return p }
        // An appTransactionId names a purchaser when exactly one of its non-assigned transactions is one.
        var found: ID?
        for p in nonAssignedAppTransactionIds.values(for: id) where purchasers.contains(p) {
            guard found == nil || found == p else { return nil }
            found = p
        }
        return found
    }

    /// The assigned seat holder `customer` names in a listing at `at`: of the holders behind it,
    /// the one whose transactions started last at or before `at` (else the earliest), ties by id.
    private func member(for customer: ID, at: EpochMillis) -> ID? {
        let holders = memberByIdentifier.values(for: customer)
        guard holders.count > 1 else { return holders.first }
        // A total order that does not depend on how IDs are represented: start, then the latest
        // transaction's (signed date, transaction id).
        func order(_ otid: ID) -> (EpochMillis, EpochMillis, String) {
            guard let entry = memberTransactions[otid] else { return (.max, .max, "") }
            return (entry.start, entry.key.0, entry.key.1)
        }
        let started = holders.filter { order($0).0 <= at }
        return started.isEmpty ? holders.min { order($0) < order($1) } : started.max { order($0) < order($1) }
    }

    /// The groups the evidence so far describes, by key.
    ///
    /// `placeholderGroupId` and `placeholderMember` are the sandbox placeholders as `ID`s (`nil`
    /// when no event mentioned them); `unlinkedKey` gives the key of the group of an assigned seat
    /// holder nothing links (``GroupIdentityResolver/unlinkedKey(for:)``).
    @_specialize(exported: true, where ID == UInt32)
    public func groups(placeholderGroupId: ID?, placeholderMember: ID?, unlinkedKey: (ID) -> ID) -> [ID: Group] {
        var claims = claimPurchaser
        for link in unclaimLinks {
            guard let p = link.otid.flatMap({ purchaser(for: $0) }) ?? link.purchaserOTID else { continue }
            for c in link.claims where claims[c] == nil { claims[c] = p }
        }
        var groupPurchasers: [ID: Set<ID>] = [:]
        var groupMembers: [ID: Set<ID>] = [:]
        var knownGroupIds = memberGroupIds
        if let placeholderGroupId { knownGroupIds.remove(placeholderGroupId) }
        for link in customerLinks {
            guard link.groupId != placeholderGroupId, link.customer != placeholderMember else { continue }
            knownGroupIds.insert(link.groupId)
            if let p = purchaser(for: link.customer) {
                groupPurchasers[link.groupId, default: []].insert(p)
            } else if let m = member(for: link.customer, at: link.at) {
                groupMembers[link.groupId, default: []].insert(m)
            }
        }

        // The groups in an array, found through `slot`: a group is changed in place (a dictionary of
        // groups would move each one out and back for every identifier added).
        var list: [Group] = []
        var slot: [ID: Int] = [:]
        list.reserveCapacity(purchasers.count)
        slot.reserveCapacity(purchasers.count)
        func put(_ group: Group) {
            if let index = slot[group.key] { list[index] = group } else { slot[group.key] = list.count; list.append(group) }
        }
        for p in purchasers {
            var group = Group(key: p)
            group.purchaser = p
            put(group)
        }
        var groupKeyOfGroupId: [ID: ID] = [:]
        for groupId in knownGroupIds {
            let candidates = groupPurchasers[groupId] ?? []
            if candidates.count == 1, let p = candidates.first {
                if let index = slot[p] { list[index].groupIds.insert(groupId) }
                groupKeyOfGroupId[groupId] = p
            } else {
                var group = Group(key: groupId)
                group.groupIds = [groupId]
                put(group)
                groupKeyOfGroupId[groupId] = groupId
            }
        }
        for (claim, p) in claims { if let index = slot[p] { list[index].seatClaimIds.insert(claim) } }
        var linkedMembers = Set<ID>()
        for (groupId, members) in groupMembers {
            guard let key = groupKeyOfGroupId[groupId] else { continue }
            for m in members {
                if let index = slot[key] { list[index].members.insert(m) }
                linkedMembers.insert(m)
            }
        }
        // Each holder nothing links is a group of its own: nothing says two of them share a group,
        // and a catch-all group would make every append re-fold all of them.
        for (otid, entry) in memberTransactions where !linkedMembers.contains(otid) {
            // A holder whose transaction carries a purchaser's originalTransactionId (a family
            // member's copy of the group purchase) is linked to that purchaser's group.
            if purchasers.contains(otid), let index = slot[otid] {
                list[index].members.insert(otid)
                continue
            }
            let key = unlinkedKey(otid)
            if slot[key] == nil {
                var group = Group(key: key)
                group.productId = entry.productId ?? "unknown"
                put(group)
            }
            if let index = slot[key] { list[index].members.insert(otid) }
        }

        // Aliases: other identifiers of the purchaser, members and claims.
        for (id, otid) in nonAssignedTransactionIds where id != otid && purchasers.contains(otid) {
            if let index = slot[otid] { list[index].aliases.insert(id) }
        }
        nonAssignedAppTransactionIds.forEach { app, otid in
            if purchasers.contains(otid), let index = slot[otid] { list[index].aliases.insert(app) }
        }
        var groupsOfMember: [ID: [Int]] = [:]
        for (index, group) in list.enumerated() {
            for m in group.members { groupsOfMember[m, default: []].append(index) }
        }
        memberByIdentifier.forEach { id, m in
            guard id != m else { return }
            for index in groupsOfMember[m] ?? [] { list[index].aliases.insert(id) }
        }
        for link in claimAliases {
            guard let p = claims[link.claim], let index = slot[p] else { continue }
            if link.isMemberRef { list[index].references.insert(link.alias) } else { list[index].aliases.insert(link.alias) }
        }
        var groups = [ID: Group](minimumCapacity: list.count)
        while let group = list.popLast() { groups[group.key] = group }
        return groups
    }
}
