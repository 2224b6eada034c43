import AppStoreModels
import Foundation
import LedgerEvents

/// An event's metadata and decoded JSON text, read for deriving its facts (without the raw bytes).
public struct EventForFacts: Sendable {
    /// The event with an empty `raw`, `hash` and `verification`, and `decoded` not yet parsed (`null`).
    public let metadata: LedgerEvent
    /// The stored decoded JSON text.
    public let decodedText: String

    /// Creates a row (for other ``LedgerStore`` implementations).
    public init(metadata: LedgerEvent, decodedText: String) {
        self.metadata = metadata
        self.decodedText = decodedText
    }

    /// The event with `decoded` parsed from ``decodedText`` (`null` when the text does not parse).
    public func parsed() -> LedgerEvent {
        with(decoded: (try? JSONValue.parse(decodedText)) ?? .null)
    }

    /// The event with only the parts of ``decodedText`` that `pruning` keeps (`null` when the
    /// text does not parse: exactly when ``parsed()`` gives `null`).
    public func parsed(pruning: JSONPruning) -> LedgerEvent {
        with(decoded: (try? JSONValue.parse(decodedText, pruning: pruning)) ?? .null)
    }

    private func with(decoded: JSONValue) -> LedgerEvent {
        let m = metadata
        return LedgerEvent(position: m.position, eventId: m.eventId, kind: m.kind, type: m.type, subtype: m.subtype,
                           status: m.status, occurredAt: m.occurredAt, recordedAt: m.recordedAt, source: m.source,
                           origin: m.origin, raw: m.raw, decoded: decoded, verification: m.verification, hash: m.hash)
    }
}

/// A run of stored facts rows, copied out of SQLite into one buffer (cheap to hand to another thread).
public struct FactsRowBatch: Sendable {
    /// The rows' positions, ascending.
    public private(set) var positions: [Int64] = []
    /// Where each row's bytes end in ``bytes`` (row `i` spans `ends[i-1]..<ends[i]`).
    public private(set) var ends: [Int] = []
    /// Every row's bytes, back to back.
    public private(set) var bytes: [UInt8] = []

    /// An empty batch with room for `rows` rows of about `bytesPerRow` bytes.
    public init(reservingRows rows: Int, bytesPerRow: Int = 256) {
        positions.reserveCapacity(rows)
        ends.reserveCapacity(rows)
        bytes.reserveCapacity(rows * bytesPerRow)
    }

    /// The number of rows.
    public var count: Int { positions.count }

    /// Appends a row.
    public mutating func append(position: Int64, _ row: UnsafeRawBufferPointer) {
        positions.append(position)
        bytes.append(contentsOf: row)
        ends.append(bytes.count)
    }

    /// Calls `body` with row `index`'s bytes (valid only during the call).
    public func withRow<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let start = index == 0 ? 0 : ends[index - 1]
        return try bytes.withUnsafeBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[start..<ends[index]])) }
    }
}
