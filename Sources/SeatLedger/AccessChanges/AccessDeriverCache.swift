import LedgerStorage
import Projections
import Synchronization

/// The access derivers the last derivations left, by scope, so that the next event of a scope
/// is appended to its deriver instead of replaying the scope's whole log (bounded: the least
/// recently used go first; a scope not here is replayed from the store, which derives the same).
///
/// Only the derivation (one at a time, on the pool's writer) uses it; the lock is uncontended.
public final class AccessDeriverCache: Sendable {
    struct Entry: Sendable {
        var deriver: AccessTransitionDeriver
        /// The cursor position it was derived through: another value means another process
        /// derived in between, and the entry is stale.
        var derivedThrough: Int64
        var lastUse: UInt64
    }

    private struct State: Sendable {
        var entries: [String: Entry] = [:]
        var uses: UInt64 = 0
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

    func entry(_ scope: String) -> Entry? {
        state.withLock { $0.entries[scope] }
    }

    /// Keeps the derivers a committed derivation left (`derivedThrough`: its cursor), evicting
    /// the least recently used beyond ``capacity``.
    func store(_ derivers: [String: AccessTransitionDeriver], derivedThrough: Int64) {
        state.withLock { state in
            for (scope, deriver) in derivers {
                state.uses += 1
                state.entries[scope] = Entry(deriver: deriver, derivedThrough: derivedThrough, lastUse: state.uses)
            }
            // Entries the derivation did not touch stay valid through the new cursor too.
            for key in state.entries.keys where derivers[key] == nil { state.entries[key]?.derivedThrough = derivedThrough }
            if state.entries.count > capacity {
                let excess = state.entries.count - capacity
                for (key, _) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }).prefix(excess) {
                    state.entries.removeValue(forKey: key)
                }
            }
        }
    }

    /// Forgets everything (a derivation failed: what it changed did not commit).
    func clear() {
        state.withLock { $0.entries.removeAll() }
    }
}
