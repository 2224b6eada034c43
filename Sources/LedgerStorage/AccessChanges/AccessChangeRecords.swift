import AppStoreModels
import Foundation

/// One stored access transition (`access_transitions`): the feed's row. `seq` is the feed's
/// cursor, gap-free and in commit order (assigned under the derivation lock, see
/// ``AccessChangeStore``); `body` is the transition's canonical JSON (`AccessTransition.json`).
public struct StoredAccessTransition: Sendable, Hashable {
    /// The feed position, from 1.
    public var seq: Int64
    /// The transition's stable id (`at1;…`).
    public var id: String
    /// `group:<key>` or `subscription:<originalTransactionId>`.
    public var scope: String
    /// The subject's key within the scope.
    public var subjectKey: String
    /// The product; `nil` when the transactions name none.
    public var productId: String?
    /// The transition's kind (`GAINED`, `LOST`, …), verbatim.
    public var kind: String
    /// When the ledger learned it (epoch ms).
    public var learnedAt: EpochMillis
    /// The transition as canonical JSON.
    public var body: String

    /// Creates a row.
    public init(seq: Int64, id: String, scope: String, subjectKey: String, productId: String?, kind: String,
                learnedAt: EpochMillis, body: String) {
        self.seq = seq
        self.id = id
        self.scope = scope
        self.subjectKey = subjectKey
        self.productId = productId
        self.kind = kind
        self.learnedAt = learnedAt
        self.body = body
    }
}

/// Where the derivation of one scope stands (`access_scopes`): the moment its transitions are
/// derived through, and the next moment its answer changes without news (what the lapse
/// scheduler wakes for; `nil`: never).
public struct AccessScopeState: Sendable, Hashable {
    /// `group:<key>` or `subscription:<originalTransactionId>`.
    public var scope: String
    /// The deriver's clock after its last derivation (epoch ms).
    public var clock: EpochMillis
    /// When the answer next changes by time alone; `nil` when it never does.
    public var nextChange: EpochMillis?

    /// Creates a state.
    public init(scope: String, clock: EpochMillis, nextChange: EpochMillis?) {
        self.scope = scope
        self.clock = clock
        self.nextChange = nextChange
    }
}

/// How far the ledger's access transitions are derived (`access_cursor`): every event through
/// `position`, and changes by time through `horizon`.
public struct AccessCursor: Sendable, Hashable {
    /// The last event position derived (0: none).
    public var position: Int64
    /// The moment changes by time are derived through (epoch ms; 0: none).
    public var horizon: EpochMillis

    /// Creates a cursor.
    public init(position: Int64, horizon: EpochMillis) {
        self.position = position
        self.horizon = horizon
    }
}

/// Which transitions a feed read returns (every filter `nil`: all).
public struct AccessTransitionFilter: Sendable, Hashable {
    /// Only this product.
    public var productId: String?
    /// Only these kinds (empty: all).
    public var kinds: Set<String>
    /// Only this scope (`group:<key>` or `subscription:<otid>`).
    public var scope: String?
    /// Only transitions whose body names this identifier (a member page: an `originalTransactionId`,
    /// `appTransactionId`, seat claim id or member reference).
    public var mentioning: String?

    /// Creates a filter.
    public init(productId: String? = nil, kinds: Set<String> = [], scope: String? = nil, mentioning: String? = nil) {
        self.productId = productId
        self.kinds = kinds
        self.scope = scope
        self.mentioning = mentioning
    }
}
