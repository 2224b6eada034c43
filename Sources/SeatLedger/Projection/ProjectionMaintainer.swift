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
            if let text = stored[position], let json = try? JSONValue.parse(text), let fact = EventFacts(encoded: json) {
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
        return (membership, try loadFacts(positions).filter { membership.concerns($0) })
    }

    // MARK: Maintaining

    /// Stores the new events' facts and re-folds the groups they touch (inside the append transaction).
    func update(after appended: [LedgerEvent]) throws {
        guard !appended.isEmpty else { return }
        var newIdentifiers = Set<String>()
        for event in appended {
            let facts = EventFacts(event)
            try store.storeFacts(position: event.position, facts: facts.encoded.canonicalString())
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
            states.append(Self.snapshot(membership, facts: facts.filter { membership.concerns($0) }))
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
        var resolver = GroupIdentityResolver()
        var count = 0
        try store.forEachFacts { _, text in
            guard let json = try? JSONValue.parse(text), let fact = EventFacts(encoded: json) else { return }
            resolver.add(fact)
            count += 1
            if count % 100_000 == 0 { progress?("resolved identities of \(count) events") }
        }
        var result: [String: (GroupMembership, StoredGroupState)] = [:]
        let groups = resolver.groups()
        for (index, (key, membership)) in groups.sorted(by: { $0.key < $1.key }).enumerated() {
            let positions = try store.positions(mentioningAny: membership.identifiers.union(membership.aliases))
            let facts = try loadFacts(positions).filter { membership.concerns($0) }
            result[key] = (membership, Self.snapshot(membership, facts: facts))
            if (index + 1) % 1000 == 0 { progress?("folded \(index + 1) of \(groups.count) groups") }
        }
        return result
    }

    /// Stores facts for events that have none (written before facts existed, or by an older decoder).
    func backfillMissingFacts() throws {
        for position in try store.positionsWithoutFacts() {
            if let event = try store.event(at: position) {
                try store.storeFacts(position: position, facts: EventFacts(event).encoded.canonicalString())
            }
        }
    }
}
