import AppStoreModels
import Foundation
import LedgerEvents

/// What an engine supplies for an append: its append lock and the rows it writes, each in its own
/// SQL, inside the caller's write transaction. Nothing here decides anything: which messages are
/// duplicates, their positions and chain hashes, which rejections need a row, and how a retry
/// resolves its quarantine rows are ``AppendPlan``, ``QuarantinePlan`` and ``QuarantineRetryPlan``,
/// and the sequence that runs them is ``LedgerAppend``, written once for every engine.
public protocol AppendRows: AnyObject {
    /// Takes the append lock until the caller's write transaction ends and reads the head under
    /// it: the last position and its chain hash (`(0, genesis)` when empty). May be called again
    /// in the same transaction (a retraction locks before it checks, then appends).
    func lockHeadForAppend() throws -> (position: Int64, hash: Data)
    /// The positions of those of `eventIds` already stored, keyed by the ids' UTF-8 bytes (as the
    /// UNIQUE index compares them), read under the append lock.
    func storedPositions(ofEventIds eventIds: [String]) throws -> [[UInt8]: Int64]
    /// The lowest open quarantine id for each (SHA-256, error code) among `digests`.
    func openQuarantineIds(digests: Set<String>) throws -> [QuarantinePlan.Key: Int64]
    /// Writes what `plan` appends (`events`, `event_decoded`, `event_keys`), its arrivals and the
    /// `quarantine` rows `quarantine` needs, all recorded at `plan.recordedAt`, and moves the head
    /// to `plan.head`. Returns the ids given to `quarantine.new`, in order; their record-chain
    /// links are the caller's.
    func writeAppend(_ plan: AppendPlan, quarantine: QuarantinePlan) throws -> [Int64]
    /// The states of the quarantine rows `ids`, locked until the caller's write transaction ends
    /// (a concurrent retry or dismissal of the same row waits, then finds it resolved).
    func lockQuarantineStates(ids: [Int64]) throws -> [Int64: String]
    /// Sets each row's state and resolution, resolved at `now`; record-chain links are the caller's.
    func resolveQuarantine(_ resolutions: [QuarantineRetryPlan.Resolution], at now: EpochMillis) throws
    /// Appends links covering `items` to the record chain (when the ledger has one), inside the
    /// caller's write transaction.
    func linkRecords(_ items: [(kind: RecordChain.Kind, subject: String, digest: Data)]) throws
}
