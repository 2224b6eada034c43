import AppStoreModels
import Foundation
import LedgerEvents

/// The group index: which identifiers belong to which group, in which role; re-derivable from the log.
public protocol GroupIndexStore {
    /// Group keys any of `identifiers` belongs to.
    func groupKeys(forAny identifiers: Set<String>) throws -> Set<String>
    /// Index rows of the given groups.
    func groupIndexRows(groupKeys: Set<String>) throws -> [GroupIndexRow]
    /// Replaces the index rows of `removing` groups with new rows.
    func replaceGroups(removing: Set<String>, rows: [GroupIndexRow]) throws
    /// Every group key in the index, ascending by bytes.
    func allGroupKeys() throws -> [String]
    /// Deletes every group index row before a rebuild; events and facts are untouched.
    func clearProjections() throws
    /// Holds appends off for the rest of the caller's write transaction, so that the log a
    /// rebuild scans and the index it rewrites stay as they are until it commits (SQLite: the
    /// write transaction already does; PostgreSQL: the append lock, `ledger_head FOR UPDATE`).
    func holdAppendsForRebuild() throws
    /// Runs `body`, which refills the emptied projections inside the caller's write transaction,
    /// with the group index's secondary index (by group key) built once at the end instead of
    /// row by row, where the engine can do that without blocking readers (SQLite: they keep
    /// reading their snapshot). Other engines just run `body`.
    func withGroupKeyIndexBuiltAfter<T>(_ body: () throws -> T) throws -> T
    /// Adds the index rows of the groups a rebuild resolved to the index that
    /// ``clearProjections()`` emptied in this transaction: each row is new, so an engine may
    /// bulk-load them (PostgreSQL uses `COPY`) rather than upsert.
    func insertRebuiltGroups(rows: [GroupIndexRow]) throws
}
