import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import Projections

/// Keeps the stored projections (each event's facts, the group index and the group snapshots) in
/// step with the log.
///
/// Called inside the append transaction, so they commit with their events or not at all. A batch
/// re-resolves only the groups its events touch, and folds those again for their snapshots
/// (``ProjectionSnapshots``: the `groups` listing serves them; every other read folds the group's
/// facts at the moment it asks about, `GroupProjection` being pure).
struct ProjectionMaintainer {
    let store: any LedgerStore
    /// Facts and identifier positions kept across the appends of one writer (see ``ProjectionCache``).
    var cache: ProjectionCache?

    // MARK: Index rows ⇄ memberships

    static func rows(for membership: GroupMembership) -> [GroupIndexRow] {
        let key = membership.groupKey
        var rows: [GroupIndexRow] = [GroupIndexRow(identifier: key, groupKey: key, role: "key")]
        if let p = membership.purchaserOriginalTransactionId { rows.append(GroupIndexRow(identifier: p, groupKey: key, role: "purchaser")) }
        rows += membership.groupIds.map { GroupIndexRow(identifier: $0, groupKey: key, role: "groupId") }
        rows += membership.seatClaimIds.map { GroupIndexRow(identifier: $0, groupKey: key, role: "claim") }
        rows += membership.memberOriginalTransactionIds.map { GroupIndexRow(identifier: $0, groupKey: key, role: "member") }
        rows += membership.aliases.map { GroupIndexRow(identifier: $0, groupKey: key, role: "alias") }
        rows += membership.references.map { GroupIndexRow(identifier: $0, groupKey: key, role: "memberRef") }
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
            case "memberRef": membership.references.insert(row.identifier)
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
        try groupWithRows(key).map { ($0.membership, $0.facts) }
    }

    /// ``group(_:)`` with the index rows it was read from (a member lookup reads their roles).
    func groupWithRows(_ key: String) throws -> (membership: GroupMembership, facts: [EventFacts], rows: [GroupIndexRow])? {
        let rows = try store.groupIndexRows(groupKeys: [key])
        guard let membership = Self.memberships(from: rows)[key] else { return nil }
        let positions = try store.positions(mentioningAny: membership.identifiers.union(membership.aliases))
        return (membership, membership.relevant(try loadFacts(positions)), rows)
    }

    // MARK: Maintaining

    /// Stores the new events' facts and re-resolves the groups they touch (inside the append transaction).
    ///
    /// `provisionalFacts` (by event id) are facts the decoding threads already derived, with a
    /// placeholder position and recorded-at that are filled in here; events without an entry
    /// have their facts derived from the event.
    ///
    /// With a ``cache``, `eventKeys` (by event id: the identifier values the event is indexed
    /// under in `event_keys`) keeps the cached identifier positions complete; facts and positions
    /// read from the store are remembered for the next batches.
    ///
    /// Returns the keys of the groups it re-resolved: the neighbourhood of the new events.
    ///
    /// `foldsSnapshots` `false`: the touched groups' snapshots are only deleted, for the caller
    /// to fold later (``Ledger/foldDeferredSnapshots(limit:)``).
    @discardableResult
    func update(after appended: [LedgerEvent], provisionalFacts: [String: EventFacts] = [:],
                eventKeys: [String: [String]] = [:], foldsSnapshots: Bool = true) throws -> Set<String> {
        guard let first = appended.first else { return [] }
        cache?.begin(appendingAt: first.position)
        var known: [Int64: IdentifiedFacts] = [:]   // facts already in memory, by position
        known.reserveCapacity(appended.count)
        var newIdentifiers = Set<String>()
        for event in appended {
            let facts = Self.facts(of: event, provisional: provisionalFacts[event.eventId])
            let encoded = FactsCodec.encode(facts)
            try store.storeFacts(position: event.position, facts: encoded)
            // Resolve from exactly what a later read of the stored facts gives (as a rebuild does).
            let entry = IdentifiedFacts(FactsCodec.decode(encoded) ?? facts)
            newIdentifiers.formUnion(entry.identifiers)
            known[event.position] = entry
            cache?.appended(entry, at: event.position, keys: eventKeys[event.eventId])
        }
        // Expand to everything connected (groups through the index, events through their
        // identifiers) until nothing new turns up, then re-resolve that neighbourhood.
        var keys = Set<String>()
        var identifiers = Set<String>()
        var storedRows: [GroupIndexRow] = []
        var positions = Set<Int64>()
        var facts: [IdentifiedFacts] = []
        var frontier = newIdentifiers
        while !frontier.isEmpty {
            identifiers.formUnion(frontier)
            let moreKeys = try store.groupKeys(forAny: frontier).subtracting(keys)
            keys.formUnion(moreKeys)
            let moreRows = moreKeys.isEmpty ? [] : try store.groupIndexRows(groupKeys: moreKeys)
            storedRows += moreRows
            // A `product:` row names every unlinked holder of that product, and a `memberRef` row an
            // app's member id that other groups reuse: never expand through them (that tied every
            // group holding an `m1` to every other, and each append re-folded them all).
            let rowIdentifiers = Set(moreRows.lazy.filter { $0.role != "product" && $0.role != "memberRef" }.map(\.identifier))
            let extra = try self.positions(mentioningAny: frontier.union(rowIdentifiers)).subtracting(positions)
            positions.formUnion(extra)
            let loaded = try loadIdentifiedFacts(extra, known: &known)
            facts += loaded
            var next = rowIdentifiers
            for entry in loaded { next.formUnion(entry.identifiers) }
            frontier = next.subtracting(identifiers)
        }
        facts.sort { $0.facts.position < $1.facts.position }
        let resolved = GroupIdentityResolver.resolve(facts.map(\.facts))
        let existing = try store.groupKeys(forAny: Set(resolved.keys))
        // Replace the touched groups; never overwrite an existing group outside the neighbourhood
        // with a partial view of it.
        let writable = resolved.filter { keys.contains($0.key) || !existing.contains($0.key) }
        var storedRowsByKey: [String: Set<GroupIndexRow>] = [:]
        for row in storedRows { storedRowsByKey[row.groupKey, default: []].insert(row) }
        var rows: [GroupIndexRow] = []
        var removing = keys
        for (key, membership) in writable {
            let groupRows = Self.rows(for: membership)
            if let stored = storedRowsByKey[key], keys.contains(key), stored.isSubset(of: groupRows) {
                // The group only gained rows (a group growing batch after batch): keep its stored rows
                // and add the new ones instead of deleting and re-inserting them all.
                removing.remove(key)
                rows += groupRows.filter { !stored.contains($0) }
            } else {
                rows += groupRows
                removing.insert(key)
            }
        }
        try store.replaceGroups(removing: removing, rows: rows)
        let touched = keys.union(writable.keys)
        // Access transitions: every group re-resolved here is derived again, named by the new events or not.
        try store.markAccessScopesChanged(Set(touched.map { "group:" + $0 }), through: appended[appended.count - 1].position)
        if foldsSnapshots {
            try refreshSnapshots(of: touched, resolved: writable, at: first.recordedAt, known: &known)
        } else {
            try store.deleteGroupSnapshots(groupKeys: touched)
        }
        return touched
    }

    /// Replaces the snapshots of the `touched` groups with folds at `moment` (the batch's
    /// recording time), or deletes them (a group gone from the index, or not existing yet then):
    /// no stored snapshot outlives a change to its group's facts (``ProjectionSnapshots``).
    ///
    /// Each group is folded from exactly what a read of it gives (the events mentioning its
    /// identifiers and aliases, ``group(_:)``), from the facts this update already holds.
    private func refreshSnapshots(of touched: Set<String>, resolved: [String: GroupMembership], at moment: EpochMillis,
                                  known: inout [Int64: IdentifiedFacts]) throws {
        guard !touched.isEmpty else { return }
        var snapshots: [GroupSnapshot] = []
        // A PostgreSQL ledger its tables' owner has not upgraded yet has no snapshots to keep.
        if store.hasGroupSnapshots {
            for key in touched.sorted() {
                guard let membership = resolved[key] else { continue }
                let positions = try self.positions(mentioningAny: membership.identifiers.union(membership.aliases))
                let facts = membership.relevant(try loadIdentifiedFacts(positions, known: &known).map(\.facts))
                if let snapshot = ProjectionSnapshots.make(membership, facts: facts, at: moment) { snapshots.append(snapshot) }
            }
        }
        try store.deleteGroupSnapshots(groupKeys: touched.subtracting(snapshots.map(\.groupKey)))
        try store.storeGroupSnapshots(snapshots)
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

    /// ``loadFacts(_:)`` for the update: facts already in `known` or in the cache are not read
    /// again, and what is read is remembered in both. Ascending by position.
    private func loadIdentifiedFacts(_ positions: Set<Int64>, known: inout [Int64: IdentifiedFacts]) throws -> [IdentifiedFacts] {
        var missing = Set<Int64>()
        for position in positions where known[position] == nil {
            if let cached = cache?.facts(at: position) { known[position] = cached } else { missing.insert(position) }
        }
        if !missing.isEmpty {
            for fact in try loadFacts(missing) {
                let entry = IdentifiedFacts(fact)
                known[fact.position] = entry
                cache?.remember(entry, at: fact.position)
            }
        }
        return positions.sorted().compactMap { known[$0] }
    }

    /// `store.positions(mentioningAny:)`, answered from the cache for identifiers it holds.
    private func positions(mentioningAny identifiers: Set<String>) throws -> Set<Int64> {
        guard let cache else { return try store.positions(mentioningAny: identifiers) }
        var result = Set<Int64>()
        var missing = Set<String>()
        for identifier in identifiers {
            if let cached = cache.positions(mentioning: identifier) { result.formUnion(cached) } else { missing.insert(identifier) }
        }
        guard !missing.isEmpty else { return result }
        // Read inside the append transaction, so it includes this batch's own rows; one round trip
        // for all of them (a PostgreSQL ledger would otherwise pay one per identifier).
        for (identifier, found) in try store.positions(byIdentifier: missing) {
            cache.remember(found, mentioning: identifier)
            result.formUnion(found)
        }
        return result
    }
}

/// What one writer remembers between its appends so that re-folding a large group (a purchaser
/// with many members and claims, touched batch after batch) does not re-read and re-decode all of
/// its events from the store on every batch.
///
/// It holds facts by position and the positions of identifiers (`event_keys`), both of which
/// never change once written. It is only trusted while this writer is the only one appending:
/// an append that does not start right after the last position it saw committed (another process
/// appended in between) empties it, and so does any batch that does not commit (``abandon()``).
/// Bounded: past ``maximumFacts`` facts or ``maximumIdentifiers`` identifiers it starts over.
///
/// Used by the single writer thread only (not `Sendable`).
final class ProjectionCache {
    private var facts: [Int64: ProjectionMaintainer.IdentifiedFacts] = [:]
    private var positionsByIdentifier: [String: Set<Int64>] = [:]
    /// The last position of the last committed batch the cache reflects.
    private var committedThrough: Int64?
    /// The last position appended by the batch in progress.
    private var pendingThrough: Int64?
    static let maximumFacts = 50_000
    static let maximumIdentifiers = 200_000

    /// Starts a batch whose first event is at `position` (inside its transaction).
    func begin(appendingAt position: Int64) {
        if let committedThrough, position != committedThrough + 1 { clear() }
        pendingThrough = position - 1
    }

    /// Records an event of the batch in progress: its facts, and its position under each of its
    /// identifier values whose positions are cached (others are read when first needed).
    func appended(_ entry: ProjectionMaintainer.IdentifiedFacts, at position: Int64, keys: [String]?) {
        facts[position] = entry
        pendingThrough = max(pendingThrough ?? position, position)
        guard let keys else {
            // Without the event's keys the cached positions could miss it: start over.
            positionsByIdentifier.removeAll(keepingCapacity: true)
            return
        }
        for key in keys where positionsByIdentifier[key] != nil { positionsByIdentifier[key]?.insert(position) }
    }

    /// Cached facts at `position`.
    func facts(at position: Int64) -> ProjectionMaintainer.IdentifiedFacts? { facts[position] }

    /// Remembers facts read from the store.
    func remember(_ entry: ProjectionMaintainer.IdentifiedFacts, at position: Int64) { facts[position] = entry }

    /// Every position mentioning `identifier`, if cached.
    func positions(mentioning identifier: String) -> Set<Int64>? { positionsByIdentifier[identifier] }

    /// Remembers the positions read from the store for `identifier` (complete at this point).
    func remember(_ positions: Set<Int64>, mentioning identifier: String) { positionsByIdentifier[identifier] = positions }

    /// The batch in progress committed: the cache now reflects the log through its last position.
    func commit() {
        if let pendingThrough { committedThrough = pendingThrough }
        pendingThrough = nil
        if facts.count > Self.maximumFacts || positionsByIdentifier.count > Self.maximumIdentifiers {
            let through = committedThrough
            clear()
            committedThrough = through
        }
    }

    /// The batch in progress did not commit: nothing it added can be trusted.
    func abandon() {
        clear()
    }

    private func clear() {
        facts.removeAll()
        positionsByIdentifier.removeAll()
        committedThrough = nil
        pendingThrough = nil
    }
}
