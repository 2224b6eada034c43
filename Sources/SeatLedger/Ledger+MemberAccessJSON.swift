import AppStoreModels
import LedgerStorage
import Projections

extension Ledger {
    /// The `member show --json` output for `identifier`: ``MemberInGroup/json(_:)`` of
    /// ``memberAccess(_:asOf:knownAt:)``, element for element, read in one snapshot of the ledger.
    ///
    /// Why it does not simply print ``memberAccess(_:asOf:knownAt:)``: reading and folding the
    /// member's groups is most of the work of a `GET /v1/members/{id}`, which an app server asks
    /// on every sign-in. So a group whose stored snapshot holds at `asOf` (``ProjectionSnapshots``: every event recorded,
    /// `knownAt` `nil`, projections built by this build's rules) gives its member objects and
    /// status from the snapshot's text; only the events that mention `identifier` are read, for
    /// the transactions that tie it to a member (``transactionOwners(of:in:)``). A group without
    /// such a snapshot, or where the identifier names a seat holder the group does not show then
    /// (shown on their own, in their `unlinked:` group), is folded as ``memberAccess(_:asOf:knownAt:)``
    /// folds it. `MemberAccessSnapshotTests` checks both paths give the same bytes.
    public func memberAccessJSON(_ identifier: String, asOf: EpochMillis, knownAt: EpochMillis? = nil) throws -> JSONValue {
        try store.read {
            let linked = try linkedIdentifiers(of: identifier, knownAt: knownAt)
            var entries = try memberEntries(identifier, asOf: asOf, knownAt: knownAt, mentioning: nil)
            for id in linked {
                // The app's user id answers for the Apple identities the app server linked to it.
                guard let more = try memberEntries(id, asOf: asOf, knownAt: knownAt, mentioning: nil) else { continue }
                var all = entries ?? []
                for entry in more where !all.contains(where: { $0.groupKey == entry.groupKey && $0.member == entry.member }) { all.append(entry) }
                entries = all
            }
            guard let entries else {
                if !linked.isEmpty { return .array([]) }
                throw GroupNotFound(reference: identifier)
            }
            return .array(entries.map(\.json))
        }
    }

    /// One group's entry of a member lookup: the `member show --json` element and what the
    /// entitlement read adds to it (the group's product and purchaser).
    struct MemberEntry {
        let groupKey: String
        let status: String
        let asOf: EpochMillis
        /// The member object of `group show --json`.
        let member: JSONValue
        let productId: String?
        let purchaserOriginalTransactionId: String?

        /// The `member show --json` element.
        var json: JSONValue {
            ["groupKey": .string(groupKey), "status": .string(status), "asOf": .timestamp(asOf), "member": member]
        }
    }

    /// The entries of ``memberAccessJSON(_:asOf:knownAt:)``, `nil` when `identifier` names no
    /// group; read inside the caller's read snapshot. `mentioning`, when the caller has them, are
    /// the facts of every event that mentions `identifier` (else they are read when needed).
    func memberEntries(_ identifier: String, asOf: EpochMillis, knownAt: EpochMillis?,
                       mentioning: [EventFacts]?) throws -> [MemberEntry]? {
        let keys = try groupKeys(for: identifier)
        guard !keys.isEmpty else { return nil }
        let maintainer = ProjectionMaintainer(store: store)
        let servesSnapshots = try knownAt == nil && store.hasGroupSnapshots && snapshotsFollowCurrentRules()
        var owners: Set<String>?
        var entries: [MemberEntry] = []
        for key in keys {
            if servesSnapshots {
                if owners == nil {
                    // The identifier's own events hold every transaction that carries it: each
                    // one mentions it, so `event_keys` finds it under the identifier.
                    let facts = try mentioning ?? maintainer.loadFacts(try store.positions(mentioningAny: [identifier]))
                    owners = Self.transactionOwners(of: identifier, in: facts)
                }
                if let found = try snapshotMemberAccess(identifier, inGroup: key, asOf: asOf, owners: owners ?? []) {
                    entries += found
                    continue
                }
            }
            entries += try foldedMemberAccess(identifier, inGroup: key, asOf: asOf, knownAt: knownAt, maintainer: maintainer).map {
                MemberEntry(groupKey: $0.group.groupKey, status: $0.group.status.rawValue, asOf: $0.group.asOf, member: $0.member.json,
                            productId: $0.group.productId, purchaserOriginalTransactionId: $0.group.purchaserOriginalTransactionId)
            }
        }
        return entries
    }

    /// The parts of a stored `group show --json` text a member lookup reads.
    private static let memberLookupPruning = JSONPruning.members(["status": .all, "members": .all, "productId": .all,
                                                                  "purchaserOriginalTransactionId": .all])

    /// The `member show --json` entries of group `key` from its stored snapshot; `nil` when the
    /// snapshot is missing, does not hold at `asOf` or cannot be read, or when the identifier names
    /// a seat holder of the group that the snapshot does not show (the caller folds then).
    ///
    /// `owners` are the `originalTransactionId`s of the transactions that carry the identifier,
    /// from every event mentioning it. A fold takes them from the group's events only; the two
    /// agree on every `originalTransactionId` the lookup compares with them (the group's members
    /// and seat holders), because the event that ties such an id to the identifier mentions that
    /// id, which is one of the group's identifiers, so it is one of the group's events.
    private func snapshotMemberAccess(_ identifier: String, inGroup key: String, asOf: EpochMillis,
                                      owners: Set<String>) throws -> [MemberEntry]? {
        guard let snapshot = try store.groupSnapshots(from: key, through: key)[key], snapshot.holds(at: asOf),
              let state = try? JSONValue.parse(snapshot.state, pruning: Self.memberLookupPruning),
              let status = state["status"]?.stringValue, let members = state["members"]?.arrayValue else { return nil }
        let rows = try store.groupIndexRows(groupKeys: [key])
        guard let membership = ProjectionMaintainer.memberships(from: rows)[key] else { return [] }
        let namesPurchaser = rows.contains { $0.identifier == identifier && $0.role == "purchaser" }
        var present = Set<String>()
        var entries: [MemberEntry] = []
        for member in members {
            let otid = member["originalTransactionId"]?.stringValue
            if let otid { present.insert(otid) }
            let named = ["originalTransactionId", "appTransactionId", "seatClaimId", "memberRef"]
                .contains { member[$0]?.stringValue == identifier }
                || (otid.map(owners.contains) ?? false)
                || (namesPurchaser && member["role"]?.stringValue == MemberRole.purchaser.rawValue)
            if named {
                entries.append(MemberEntry(groupKey: key, status: status, asOf: asOf, member: member,
                                           productId: state["productId"]?.stringValue,
                                           purchaserOriginalTransactionId: state["purchaserOriginalTransactionId"]?.stringValue))
            }
        }
        guard !membership.memberOriginalTransactionIds.contains(where: { owners.contains($0) && !present.contains($0) }) else { return nil }
        return entries
    }
}
