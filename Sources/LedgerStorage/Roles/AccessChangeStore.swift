import AppStoreModels
import Foundation

/// The ledger's access transitions, their derivation's progress, and the lapse schedule
/// (`access_cursor`, `access_scopes`, `access_transitions`).
///
/// Written once over the engine's ``TransactionalStore/database``; an engine supplies only its
/// row-lock clause. The derivation runs in one write transaction that first locks the cursor row
/// (``lockedAccessCursor()``), so one process at a time derives, and the feed's `seq` is assigned
/// under that lock: gap-free and in commit order, so a reader that saw `seq` n never later finds
/// an n−1 it missed. Transitions already stored (by id) are never stored twice: a derivation
/// that repeats after a crash or on another node adds nothing.
public protocol AccessChangeStore: TransactionalStore {
    /// Appended to a `SELECT` that must lock the rows it reads until the transaction ends
    /// (PostgreSQL: ` FOR UPDATE`); empty where the write transaction already excludes every
    /// other writer (SQLite's `BEGIN IMMEDIATE`).
    var rowLockClause: String { get }
    /// Appended to a `SELECT` whose rows another process may hold: skip those (PostgreSQL:
    /// ` FOR UPDATE SKIP LOCKED`); empty where writers are serialised anyway.
    var skipLockedClause: String { get }
    /// Whether the ledger has the access-change tables (schema 6): `false` for an older
    /// PostgreSQL ledger whose tables' owner has not opened it since (its appends mark nothing).
    func hasAccessChangeTables() throws -> Bool
}

extension AccessChangeStore {
    // MARK: The append's mark (inside the append's transaction)

    /// Marks `scopes` as changed by the append whose head is `position` (inside its
    /// transaction): the next derivation through `position` re-derives them even when none of
    /// the new events names them (a group that lost events to another). Nothing on a ledger
    /// without the tables.
    public func markAccessScopesChanged(_ scopes: Set<String>, through position: Int64) throws {
        guard !scopes.isEmpty, try hasAccessChangeTables() else { return }
        for scope in scopes.sorted() {
            try database.execute("""
                INSERT INTO access_pending (scope, position) VALUES (?, ?)
                ON CONFLICT (scope) DO UPDATE SET position = excluded.position
                """, [.text(scope), .integer(position)])
        }
    }

    /// The scopes marked by appends through `position` (the derivation's read).
    public func changedAccessScopes(through position: Int64) throws -> Set<String> {
        Set(try database.query("SELECT scope FROM access_pending WHERE position <= ?", [.integer(position)]) { try $0.text(0) })
    }

    /// Forgets the marks of appends through `position` (inside the derivation's write, once what
    /// it derived from them is stored). A mark an append moved past `position` since stays.
    public func forgetChangedAccessScopes(through position: Int64) throws {
        try database.execute("DELETE FROM access_pending WHERE position <= ?", [.integer(position)])
    }

    // MARK: Derivation (inside the caller's write transaction)

    /// The cursor, locked until the transaction ends (inside a write transaction); `nil` when
    /// another process holds it (it is deriving: this one need not wait for it, and its writer
    /// is free for appends meanwhile).
    public func lockedAccessCursor() throws -> AccessCursor? {
        try database.query("SELECT position, horizon FROM access_cursor WHERE id = 1" + skipLockedClause) {
            AccessCursor(position: try $0.int64(0), horizon: try $0.int64(1))
        }.first
    }

    /// The cursor, unlocked (a status read).
    public func accessCursor() throws -> AccessCursor {
        try database.query("SELECT position, horizon FROM access_cursor WHERE id = 1") {
            AccessCursor(position: try $0.int64(0), horizon: try $0.int64(1))
        }.first ?? AccessCursor(position: 0, horizon: 0)
    }

    /// Moves the cursor (inside the transaction that locked it).
    public func setAccessCursor(_ cursor: AccessCursor) throws {
        try database.execute("UPDATE access_cursor SET position = ?, horizon = ? WHERE id = 1",
                             [.integer(cursor.position), .integer(cursor.horizon)])
    }

    /// The stored states of `scopes` (absent: never derived).
    public func accessScopeStates(_ scopes: Set<String>) throws -> [String: AccessScopeState] {
        var result: [String: AccessScopeState] = [:]
        try forEachChunk(of: scopes, size: 500) { marks, values in
            for state in try database.query("SELECT scope, clock, next_change FROM access_scopes WHERE scope IN (\(marks))",
                                             values, Self.scopeState) {
                result[state.scope] = state
            }
        }
        return result
    }

    /// The scopes whose answer changes by time at or before `moment`, soonest first, at most
    /// `limit` (an index range: the cost is what falls due, never every scope).
    public func dueAccessScopes(through moment: EpochMillis, limit: Int) throws -> [AccessScopeState] {
        try database.query("""
            SELECT scope, clock, next_change FROM access_scopes WHERE next_change IS NOT NULL AND next_change <= ?
             ORDER BY next_change, scope LIMIT ?
            """, [.integer(moment), .integer(Int64(limit))], Self.scopeState)
    }

    /// The scopes with a transition whose subject is named by one of `identifiers` (its
    /// `originalTransactionId`, `appTransactionId` or seat claim id): where a subject was before a
    /// new link moved it to another scope.
    public func accessScopes(namingAny identifiers: Set<String>) throws -> Set<String> {
        var scopes = Set<String>()
        try forEachChunk(of: identifiers, size: 300) { marks, values in
            for column in ["original_transaction_id", "app_transaction_id", "seat_claim_id"] {
                scopes.formUnion(try database.query("SELECT DISTINCT scope FROM access_transitions WHERE \(column) IN (\(marks))", values) {
                    try $0.text(0)
                })
            }
        }
        return scopes
    }

    /// The soonest moment any scope's answer changes by time; `nil` when none does.
    public func nextAccessChange() throws -> EpochMillis? {
        try database.query("SELECT MIN(next_change) FROM access_scopes WHERE next_change IS NOT NULL") { try $0.optionalInt64(0) }
            .first ?? nil
    }

    /// Stores each scope's state, replacing the one stored.
    public func saveAccessScopeStates(_ states: [AccessScopeState]) throws {
        for state in states {
            try database.execute("""
                INSERT INTO access_scopes (scope, clock, next_change) VALUES (?, ?, ?)
                ON CONFLICT (scope) DO UPDATE SET clock = excluded.clock, next_change = excluded.next_change
                """, [.text(state.scope), .integer(state.clock), .optional(state.nextChange)])
        }
    }

    /// Stores the transitions whose id is not stored yet, in order, each with the next `seq`;
    /// returns those stored (inside the transaction that locked the cursor).
    public func insertAccessTransitions(_ rows: [AccessTransitionRow]) throws -> [StoredAccessTransition] {
        guard !rows.isEmpty else { return [] }
        var present = try storedAccessTransitionIds(among: Set(rows.map(\.id)))
        var seq = try lastAccessTransitionSeq()
        var stored: [StoredAccessTransition] = []
        for row in rows where !present.contains(row.id) {
            present.insert(row.id)
            seq += 1
            try database.execute("""
                INSERT INTO access_transitions (seq, id, scope, subject_key, product_id, kind, learned_at, body,
                                                group_key, original_transaction_id, app_transaction_id, seat_claim_id, member_ref)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.integer(seq), .text(row.id), .text(row.scope), .text(row.subjectKey), .optional(row.productId), .text(row.kind),
                      .integer(row.learnedAt), .text(row.body), .optional(row.groupKey), .optional(row.originalTransactionId),
                      .optional(row.appTransactionId), .optional(row.seatClaimId), .optional(row.memberRef)])
            stored.append(StoredAccessTransition(seq: seq, id: row.id, scope: row.scope, subjectKey: row.subjectKey,
                                                 productId: row.productId, kind: row.kind, learnedAt: row.learnedAt, body: row.body))
        }
        return stored
    }

    /// Which of `ids` are stored already.
    public func storedAccessTransitionIds(among ids: Set<String>) throws -> Set<String> {
        var present = Set<String>()
        try forEachChunk(of: ids, size: 500) { marks, values in
            present.formUnion(try database.query("SELECT id FROM access_transitions WHERE id IN (\(marks))", values) { try $0.text(0) })
        }
        return present
    }

    /// Calls `body` with `values` in sorted chunks of at most `size`, each as its `?, ?, …`
    /// placeholders and its arguments (an `IN` list the engines' parameter limits allow).
    private func forEachChunk(of values: Set<String>, size: Int, _ body: (_ marks: String, _ arguments: [SQLValue]) throws -> Void) throws {
        let sorted = values.sorted()
        for start in stride(from: 0, to: sorted.count, by: size) {
            let chunk = sorted[start..<min(start + size, sorted.count)]
            try body(Array(repeating: "?", count: chunk.count).joined(separator: ", "), chunk.map { .text($0) })
        }
    }

    // MARK: The feed

    /// The last `seq` stored (0: none).
    public func lastAccessTransitionSeq() throws -> Int64 {
        try database.query("SELECT COALESCE(MAX(seq), 0) FROM access_transitions") { try $0.int64(0) }.first ?? 0
    }

    /// Up to `limit` transitions after `seq`, in feed order, that pass `filter`.
    public func accessTransitions(after seq: Int64, limit: Int, filter: AccessTransitionFilter = AccessTransitionFilter()) throws
        -> [StoredAccessTransition] {
        var conditions = ["seq > ?"]
        var arguments: [SQLValue] = [.integer(seq)]
        if let productId = filter.productId { conditions.append("product_id = ?"); arguments.append(.text(productId)) }
        if let scope = filter.scope { conditions.append("scope = ?"); arguments.append(.text(scope)) }
        if !filter.kinds.isEmpty {
            conditions.append("kind IN (" + Array(repeating: "?", count: filter.kinds.count).joined(separator: ", ") + ")")
            arguments += filter.kinds.sorted().map { .text($0) }
        }
        if let value = filter.mentioning {
            conditions.append("? IN (group_key, original_transaction_id, app_transaction_id, seat_claim_id, member_ref)")
            arguments.append(.text(value))
        }
        arguments.append(.integer(Int64(max(0, limit))))
        return try database.query("""
            SELECT seq, id, scope, subject_key, product_id, kind, learned_at, body FROM access_transitions
             WHERE \(conditions.joined(separator: " AND ")) ORDER BY seq LIMIT ?
            """, arguments, Self.storedTransition)
    }

    /// The transition at `seq`.
    public func accessTransition(seq: Int64) throws -> StoredAccessTransition? {
        try database.query("SELECT seq, id, scope, subject_key, product_id, kind, learned_at, body FROM access_transitions WHERE seq = ?",
                           [.integer(seq)], Self.storedTransition).first
    }

    static func scopeState(_ row: any SQLRow) throws -> AccessScopeState {
        AccessScopeState(scope: try row.text(0), clock: try row.int64(1), nextChange: try row.optionalInt64(2))
    }

    static func storedTransition(_ row: any SQLRow) throws -> StoredAccessTransition {
        StoredAccessTransition(seq: try row.int64(0), id: try row.text(1), scope: try row.text(2), subjectKey: try row.text(3),
                               productId: try row.optionalText(4), kind: try row.text(5), learnedAt: try row.int64(6), body: try row.text(7))
    }
}
