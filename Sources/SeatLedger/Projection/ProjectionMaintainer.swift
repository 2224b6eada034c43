import AppStoreModels
import EventStore
import Foundation
import LedgerEvents
import Projections

/// Keeps the materialized projections (group index and snapshots) in step with the log.
///
/// Called inside the append transaction, so projections commit with their events or not at all.
/// A batch re-folds only the groups its events touch.
struct ProjectionMaintainer {
    let store: EventStore

    // MARK: Index rows ⇄ memberships

    static func rows(for membership: GroupMembership) -> [GroupIndexRow] {
        let key = membership.groupKey
        var rows: [GroupIndexRow] = [GroupIndexRow(identifier: key, groupKey: key, role: "key")]
        if let p = membership.purchaserOriginalTransactionId { rows.append(GroupIndexRow(identifier: p, groupKey: key, role: "purchaser")) }
        rows += membership.groupIds.map { GroupIndexRow(identifier: $0, groupKey: key, role: "groupId") }
        rows += membership.seatClaimIds.map { GroupIndexRow(identifier: $0, groupKey: key, role: "claim") }
        rows += membership.memberOriginalTransactionIds.map { GroupIndexRow(identifier: $0, groupKey: key, role: "member") }
        rows += membership.aliases.map { GroupIndexRow(identifier: $0, groupKey: key, role: "alias") }
        if let product = membership.productId {
            rows.append(GroupIndexRow(identifier: "product:" + product, groupKey: key, role: "product"))
        }
        return rows
    }

    static func memberships(from rows: [GroupIndexRow]) -> [String: GroupMembership] {
        var result: [String: GroupMembership] = [:]
        for row in rows {
            var membership = result[row.groupKey] ?? GroupMembership(groupKey: row.groupKey)
            switch row.role {
            case "purchaser": membership.purchaserOriginalTransactionId = row.identifier
            case "groupId": membership.groupIds.insert(row.identifier)
            case "claim": membership.seatClaimIds.insert(row.identifier)
            case "member": membership.memberOriginalTransactionIds.insert(row.identifier)
            case "alias": membership.aliases.insert(row.identifier)
            case "product": membership.productId = String(row.identifier.dropFirst("product:".count))
            default: break
            }
            result[row.groupKey] = membership
        }
        return result
    }

    // MARK: Loading

    /// Facts at the given positions, re-derived from the event when the cached facts are missing.
    func loadFacts(_ positions: Set<Int64>) throws -> [EventFacts] {
        let stored = try store.facts(at: positions)
        var facts: [EventFacts] = []
        facts.reserveCapacity(positions.count)
        for position in positions.sorted() {
            if let blob = stored[position], let fact = FactsCodec.decode(blob) {
                facts.append(fact)
            } else if let event = try store.event(at: position) {
                facts.append(EventFacts(event))
            }
        }
        return facts
    }

    /// A group's membership and the facts of every event that concerns it.
    func group(_ key: String) throws -> (GroupMembership, [EventFacts])? {
        guard let membership = Self.memberships(from: try store.groupIndexRows(groupKeys: [key]))[key] else { return nil }
        let positions = try store.positions(mentioningAny: membership.identifiers.union(membership.aliases))
        return (membership, membership.relevant(try loadFacts(positions)))
    }

    // MARK: Maintaining

    /// Stores the new events' facts and re-folds the groups they touch (inside the append transaction).
    func update(after appended: [LedgerEvent]) throws {
        guard !appended.isEmpty else { return }
        var newIdentifiers = Set<String>()
        for event in appended {
            let facts = EventFacts(event)
            try store.storeFacts(position: event.position, facts: FactsCodec.encode(facts))
            newIdentifiers.formUnion(facts.identifiers)
        }
        // Expand to the connected groups (two hops), then re-resolve that neighbourhood.
        var keys = try store.groupKeys(forAny: newIdentifiers)
        var identifiers = newIdentifiers
        identifiers.formUnion(try store.groupIndexRows(groupKeys: keys).map(\.identifier))
        var positions = try store.positions(mentioningAny: identifiers)
        var facts = try loadFacts(positions)
        let secondHop = facts.reduce(into: Set<String>()) { $0.formUnion($1.identifiers) }.subtracting(identifiers)
        let moreKeys = try store.groupKeys(forAny: secondHop).subtracting(keys)
        if !moreKeys.isEmpty {
            keys.formUnion(moreKeys)
            let more = try store.groupIndexRows(groupKeys: moreKeys).map(\.identifier)
            let extra = try store.positions(mentioningAny: Set(more)).subtracting(positions)
            facts += try loadFacts(extra)
            positions.formUnion(extra)
        }
        let resolved = GroupIdentityResolver.resolve(facts)
        let existing = try store.groupKeys(forAny: Set(resolved.keys))
        // Replace the touched groups; never overwrite an existing group outside the neighbourhood
        // with a partial view of it.
        let writable = resolved.filter { keys.contains($0.key) || !existing.contains($0.key) }
        var rows: [GroupIndexRow] = []
        var states: [StoredGroupState] = []
        for (key, membership) in writable {
            rows += Self.rows(for: membership)
            states.append(Self.snapshot(membership, facts: membership.relevant(facts)))
            keys.insert(key)
        }
        try store.replaceGroups(removing: keys, rows: rows, states: states)
    }

    /// A group's snapshot: folded as of its latest event, with everything recorded.
    static func snapshot(_ membership: GroupMembership, facts: [EventFacts]) -> StoredGroupState {
        let asOf = facts.map(\.occurredAt).max() ?? 0
        let state = GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: nil)
        return StoredGroupState(groupKey: membership.groupKey, state: state.json.canonicalString(), asOf: asOf,
                                lastPosition: facts.map(\.position).max() ?? 0)
    }

    // MARK: Rebuilding

    /// Recomputes every group from the log: the identity resolver streams the facts, then each
    /// group is folded from its own events. Memory grows with identifiers, not events.
    func recompute(progress: ((String) -> Void)? = nil) throws -> [String: (GroupMembership, StoredGroupState)] {
        var result: [String: (GroupMembership, StoredGroupState)] = [:]
        try recompute(progress: progress) { membership, snapshot in result[membership.groupKey] = (membership, snapshot) }
        return result
    }

    /// Streaming form: `each` receives every group as soon as it is folded (nothing is held).
    func recompute(progress: ((String) -> Void)? = nil, each: (GroupMembership, StoredGroupState) throws -> Void) throws {
        var resolver = GroupIdentityResolver()
        var count = 0
        try store.forEachFacts { position, blob in
            guard let fact = try FactsCodec.decode(blob) ?? store.event(at: position).map(EventFacts.init) else { return }
            resolver.add(fact)
            count += 1
            if count % 100_000 == 0 { progress?("resolved identities of \(count) events") }
        }
        var done = Set<String>()
        let groups = resolver.groups()
        // Route every event to the groups it concerns, then fold group by group from a sorted stream.
        var groupsOfIdentifier: [String: [String]] = [:]
        for (key, membership) in groups {
            for identifier in membership.identifiers.union(membership.aliases) { groupsOfIdentifier[identifier, default: []].append(key) }
        }
        var folded = 0
        try store.forEachGroupsFacts(assign: { position, blob in
            guard let fact = try FactsCodec.decode(blob) ?? store.event(at: position).map(EventFacts.init) else { return [] }
            var keys = Set<String>()
            for identifier in fact.identifiers { keys.formUnion(groupsOfIdentifier[identifier] ?? []) }
            return Array(keys)
        }, body: { key, rows in
            guard let membership = groups[key] else { return }
            let facts = try rows.compactMap { position, blob in try FactsCodec.decode(blob) ?? store.event(at: position).map(EventFacts.init) }
            try each(membership, Self.snapshot(membership, facts: facts))
            done.insert(key)
            folded += 1
            if folded % 10_000 == 0 { progress?("folded \(folded) of \(groups.count) groups") }
        })
        // A group none of whose events could be routed (cannot happen for resolved groups) still gets a snapshot.
        for (key, membership) in groups where !done.contains(key) {
            try each(membership, Self.snapshot(membership, facts: []))
        }
    }

    /// Stores facts for events that have none (written before facts existed, or by an older decoder).
    func backfillMissingFacts() throws {
        for position in try store.positionsWithoutFacts() {
            if let event = try store.event(at: position) {
                try store.storeFacts(position: position, facts: FactsCodec.encode(EventFacts(event)))
            }
        }
    }
}
