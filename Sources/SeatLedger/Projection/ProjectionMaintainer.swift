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
    let store: any LedgerStore

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
    ///
    /// `provisionalFacts` (by event id) are facts the decoding threads already derived, with a
    /// placeholder position and recorded-at that are filled in here; events without an entry
    /// have their facts derived from the event.
    func update(after appended: [LedgerEvent], provisionalFacts: [String: EventFacts] = [:]) throws {
        guard !appended.isEmpty else { return }
        var known: [Int64: IdentifiedFacts] = [:]   // facts already in memory, by position
        known.reserveCapacity(appended.count)
        var newIdentifiers = Set<String>()
        for event in appended {
            let facts = Self.facts(of: event, provisional: provisionalFacts[event.eventId])
            let encoded = FactsCodec.encode(facts)
            try store.storeFacts(position: event.position, facts: encoded)
            // Fold exactly what a later read of the stored facts gives (as a rebuild would).
            let entry = IdentifiedFacts(FactsCodec.decode(encoded) ?? facts)
            newIdentifiers.formUnion(entry.identifiers)
            known[event.position] = entry
        }
        // Expand to the connected groups (two hops), then re-resolve that neighbourhood. An assigned
        // seat holder nothing links lives in `unlinked:<product>`, a group its own identifiers do
        // not name: reach it through that group's product row.
        var keys = try store.groupKeys(forAny: newIdentifiers.union(Self.unlinkedProductKeys(known.values)))
        var identifiers = newIdentifiers
        identifiers.formUnion(try store.groupIndexRows(groupKeys: keys).map(\.identifier))
        var positions = try store.positions(mentioningAny: identifiers)
        var facts = try loadIdentifiedFacts(positions, known: &known)
        var secondHop = Set<String>()
        for entry in facts { secondHop.formUnion(entry.identifiers) }
        secondHop.subtract(identifiers)
        secondHop.formUnion(Self.unlinkedProductKeys(facts))
        let moreKeys = try store.groupKeys(forAny: secondHop).subtracting(keys)
        if !moreKeys.isEmpty {
            keys.formUnion(moreKeys)
            let more = try store.groupIndexRows(groupKeys: moreKeys).map(\.identifier)
            let extra = try store.positions(mentioningAny: Set(more)).subtracting(positions)
            facts += try loadIdentifiedFacts(extra, known: &known)
            positions.formUnion(extra)
        }
        let allFacts = facts.map(\.facts)
        let resolved = GroupIdentityResolver.resolve(allFacts)
        let existing = try store.groupKeys(forAny: Set(resolved.keys))
        // Which facts mention each identifier, so each group finds its facts without testing them all.
        var factsMentioning: [String: [Int]] = [:]
        for (index, entry) in facts.enumerated() {
            for identifier in entry.identifiers { factsMentioning[identifier, default: []].append(index) }
        }
        // Replace the touched groups; never overwrite an existing group outside the neighbourhood
        // with a partial view of it.
        let writable = resolved.filter { keys.contains($0.key) || !existing.contains($0.key) }
        var rows: [GroupIndexRow] = []
        var states: [StoredGroupState] = []
        for (key, membership) in writable {
            rows += Self.rows(for: membership)
            states.append(Self.snapshot(membership, facts: Self.relevant(to: membership, in: allFacts, mentioning: factsMentioning)))
            keys.insert(key)
        }
        try store.replaceGroups(removing: keys, rows: rows, states: states)
    }

    /// The index identifiers (`product:<productId>`) of the unlinked groups the assigned seat
    /// holders in `entries` may belong to.
    static func unlinkedProductKeys<S: Sequence>(_ entries: S) -> Set<String> where S.Element == IdentifiedFacts {
        var keys = Set<String>()
        for entry in entries {
            for tx in entry.facts.transactions where tx.isAssigned { keys.insert("product:" + (tx.productId ?? "unknown")) }
        }
        return keys
    }

    /// Facts with the identifiers they mention, computed once.
    struct IdentifiedFacts {
        let facts: EventFacts
        let identifiers: Set<String>

        init(_ facts: EventFacts) {
            self.facts = facts
            self.identifiers = facts.identifiers
        }
    }

    /// The facts of an appended event: the workers' provisional facts with the event's position and
    /// recorded-at, or derived from the event when there are none (or they describe another event).
    static func facts(of event: LedgerEvent, provisional: EventFacts?) -> EventFacts {
        guard var facts = provisional, facts.eventId == event.eventId, facts.kind == event.kind,
              facts.occurredAt == event.occurredAt, facts.origin == event.origin else { return EventFacts(event) }
        facts.position = event.position
        facts.recordedAt = event.recordedAt
        return facts
    }

    /// ``loadFacts(_:)`` for the update: facts already in `known` are not read again, and what is
    /// read is remembered there. Ascending by position.
    private func loadIdentifiedFacts(_ positions: Set<Int64>, known: inout [Int64: IdentifiedFacts]) throws -> [IdentifiedFacts] {
        let missing = positions.filter { known[$0] == nil }
        if !missing.isEmpty {
            for fact in try loadFacts(missing) { known[fact.position] = IdentifiedFacts(fact) }
        }
        return positions.sorted().compactMap { known[$0] }
    }

    /// `membership.relevant(facts)`, found through the identifier index of `facts`: the facts that
    /// mention any identifier of the group, in their order in `facts`.
    static func relevant(to membership: GroupMembership, in facts: [EventFacts], mentioning: [String: [Int]]) -> [EventFacts] {
        var indices = Set<Int>()
        for identifier in membership.identifiers.union(membership.aliases) {
            if let found = mentioning[identifier] { indices.formUnion(found) }
        }
        return indices.sorted().map { facts[$0] }
    }

    /// A group's snapshot: folded as of its latest event, with everything recorded.
    static func snapshot(_ membership: GroupMembership, facts: [EventFacts]) -> StoredGroupState {
        let asOf = facts.map(\.occurredAt).max() ?? 0
        let state = GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: nil)
        return StoredGroupState(groupKey: membership.groupKey, state: state.json.canonicalString(), asOf: asOf,
                                lastPosition: facts.map(\.position).max() ?? 0)
    }
}
