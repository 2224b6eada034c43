import Foundation
import JWSVerification

/// Walks a log in position order and finds the first break of the hash chain: a missing
/// position, a previous-hash link that does not match, or stored bytes that do not hash to the
/// stored hash. Every ``LedgerStore`` verifies its chain with it, so all engines judge alike.
///
/// ```swift
/// var verifier = ChainVerifier()
/// for (row, previousHash, hash) in rows {
///     if let broken = verifier.check(row, previousHash: previousHash, hash: hash) { return broken }
/// }
/// return verifier.intact()
/// ```
public struct ChainVerifier: Sendable {
    /// The hash of the last event checked (the genesis hash before any).
    public private(set) var previous = EventChain.genesis
    /// Events checked so far.
    public private(set) var checked: Int64 = 0

    /// A verifier at the start of the log.
    public init() {}

    /// The position the next row must have.
    public var expectedPosition: Int64 { checked + 1 }

    /// Checks the next stored row; returns the break it finds, or `nil` when the row links.
    public mutating func check(_ row: EventChain.Row, previousHash: Data, hash: Data) -> ChainVerification? {
        if row.position != expectedPosition {
            return broken(at: expectedPosition,
                          "position \(expectedPosition) is missing (next stored position is \(row.position))")
        }
        if previousHash != previous {
            return broken(at: row.position, "previous-hash link does not match the hash of position \(row.position - 1)")
        }
        if EventChain.hash(previous: previous, row: row) != hash {
            return broken(at: row.position, "stored bytes do not match the event's hash (edited after it was appended)")
        }
        previous = hash
        checked += 1
        return nil
    }

    /// A break at `position`, with what the verifier has checked before it.
    public func broken(at position: Int64, _ problem: String) -> ChainVerification {
        ChainVerification(eventsChecked: checked, firstBadPosition: position, problem: problem, headHash: nil)
    }

    /// The result when every row linked: the count and the head hash (hex).
    public func intact() -> ChainVerification {
        ChainVerification(eventsChecked: checked, firstBadPosition: nil, problem: nil,
                          headHash: checked == 0 ? nil : SHA256Digest.lowercaseHex(previous))
    }
}
