import AppStoreModels
import LedgerStorage
import Projections
@testable import SeatLedger

/// A group folded from its stored index rows and facts, as of its latest event: what two ledgers
/// must agree on when their projections are equal (the index resolves the same groups, and the
/// facts give them the same state).
struct FoldedGroup: Equatable {
    /// The group key.
    let groupKey: String
    /// `group show --json` of the group as of its latest event, canonical text.
    let state: String
}

extension LedgerStore {
    /// Every group in the index, folded as of its latest event, ascending by key.
    func foldedGroups() throws -> [FoldedGroup] {
        let maintainer = ProjectionMaintainer(store: self)
        return try allGroupKeys().compactMap { key in
            guard let (membership, facts) = try maintainer.group(key) else { return nil }
            let asOf = facts.map(\.occurredAt).max() ?? 0
            let state = GroupProjection.project(membership, facts: facts, asOf: asOf, knownAt: nil)
            return FoldedGroup(groupKey: key, state: state.json.canonicalString())
        }
    }

    /// ``foldedGroups()`` by key.
    func foldedStates() throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try foldedGroups().map { ($0.groupKey, $0.state) })
    }
}
