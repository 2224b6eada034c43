import AppStoreModels
import Foundation
import LedgerEvents

/// Rejected inputs kept with their raw bytes, for `seatledger quarantine` and retries.
public protocol QuarantineStore {
    /// Quarantined inputs, optionally in one state.
    func quarantine(state: String?, limit: Int) throws -> [QuarantineRecord]
    /// One quarantine record.
    func quarantineRecord(id: Int64) throws -> QuarantineRecord?
    /// How many items are in `state` (`open`, `released`, `duplicate`, `dismissed`), without
    /// reading their raw bytes (`/metrics` asks at every scrape).
    func quarantineCount(state: String) throws -> Int
}
