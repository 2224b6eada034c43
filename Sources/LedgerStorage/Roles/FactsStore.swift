import AppStoreModels
import Foundation
import LedgerEvents

/// A cache of each event's projection facts (``FactsCodec`` bytes), re-derivable from the log.
public protocol FactsStore {
    /// Stores the projection facts of an event.
    func storeFacts(position: Int64, facts: Data) throws
    /// Stored facts of the given positions, by position.
    func facts(at positions: Set<Int64>) throws -> [Int64: Data]
    /// Positions of events without stored facts, ascending.
    func positionsWithoutFacts() throws -> [Int64]
    /// Makes sure reading events for facts (``eventsForFacts(_:)``) does not read their raw bytes
    /// (SQLite: a covering index, created here for a ledger that lacks one). Inside a write
    /// transaction. An engine that keeps large values apart from the row does nothing.
    func ensureEventMetadataIndex() throws
    /// The events at `positions` (ascending) with their decoded JSON as text and no raw bytes.
    func eventsForFacts(_ positions: ArraySlice<Int64>) throws -> [EventForFacts]
    /// Streams the stored facts rows whose positions lie in `positions`, in position order,
    /// `batchSize` rows at a time.
    func forEachFactsBatch(batchSize: Int, positions: ClosedRange<Int64>, _ body: (FactsRowBatch) throws -> Void) throws
    /// Total rows and bytes of stored facts.
    func factsVolume() throws -> (rows: Int64, bytes: Int64)
}
