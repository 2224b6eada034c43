import LedgerStorage
import Projections
import Synchronization

/// The access derivers the last derivations left, by scope, so that the next event of a scope
/// is appended to its deriver instead of replaying the scope's whole log (bounded: the least
/// recently used go first; a scope not here is replayed from the store, which derives the same).
///
/// The whole cache holds for one cursor position, the one the last derivation committed: when a
/// derivation starts elsewhere (another process derived in between), every entry is stale and
/// the cache empties. Only one derivation at a time uses it (`serve`'s follower: read by the
/// plan on the background reader, fed by ``keep(_:storedBy:)`` once the plan is stored); the
/// lock is uncontended.
public final class AccessDeriverCache: Sendable {
    struct Entry: Sendable {
        var deriver: AccessTransitionDeriver
        var lastUse: UInt64
    }

    private struct State: Sendable {
        var entries: [String: Entry] = [:]
        var uses: UInt64 = 0
        /// The cursor position the entries were derived through (`nil`: none yet).
        var validThrough: Int64?
    }

    private let state = Mutex(State())
    /// The most scopes kept.
    public let capacity: Int

    /// An empty cache of at most `capacity` scopes.
    public init(capacity: Int = 4_096) {
        self.capacity = max(1, capacity)
    }

    /// How many scopes it holds.
    public var count: Int { state.withLock { $0.entries.count } }

    /// The deriver of `scope` as of the cursor `position`; `nil` when there is none, or the
    /// cache holds for another position (then it empties).
    func deriver(_ scope: String, at position: Int64) -> AccessTransitionDeriver? {
        state.withLock { state in
            guard state.validThrough == position else {
                state.entries.removeAll(keepingCapacity: true)
                state.validThrough = nil
                return nil
            }
            return state.entries[scope]?.deriver
        }
    }

    /// Keeps the derivers a committed derivation left, valid through its cursor `derivedThrough`
    /// (the others stay valid: their scopes had nothing in it). Past ``capacity``, the least
    /// recently used quarter goes at once, so the sort is paid once per `capacity / 4` new scopes.
    func store(_ derivers: [String: AccessTransitionDeriver], derivedThrough: Int64) {
        state.withLock { state in
            for (scope, deriver) in derivers {
                state.uses += 1
                state.entries[scope] = Entry(deriver: deriver, lastUse: state.uses)
            }
            state.validThrough = derivedThrough
            if state.entries.count > capacity {
                let keep = capacity - capacity / 4
                let cut = state.entries.map(\.value.lastUse).sorted()[state.entries.count - keep - 1]
                state.entries = state.entries.filter { $0.value.lastUse > cut }
            }
        }
    }

    /// Keeps a plan's derivers when `derivation` stored it (not busy, and its cursor is the
    /// plan's); otherwise keeps nothing: the entries then no longer match the stored cursor and
    /// the next plan empties the cache. Outside the write transaction: replacing entries frees
    /// the old derivers' facts, work the writer need not do.
    public func keep(_ plan: AccessDerivationPlan, storedBy derivation: AccessDerivation) {
        guard !derivation.busy, derivation.cursor == plan.cursor else { return }
        store(plan.derivers, derivedThrough: plan.cursor.position)
    }
}
