import Foundation

/// Whether records copied from another store continue a destination's chain: the copy-continuity
/// check, written once for every engine.
public enum ChainContinuity {
    /// Checks that each of `records` continues the chain after `head` (its position is the one
    /// after, its previous hash is the head's hash, and its hash matches its contents) and returns
    /// the head after the last one; throws ``ChainContinuityError`` at the first that does not.
    public static func check(_ records: [StoredEventRecord], after head: (position: Int64, hash: Data),
                             location: String) throws(ChainContinuityError) -> (position: Int64, hash: Data) {
        var head = head
        for record in records {
            let event = record.event
            guard event.position == head.position + 1 else {
                throw ChainContinuityError(location: location, position: event.position,
                                           problem: "the destination's next position is \(head.position + 1)")
            }
            guard record.previousHash == head.hash else {
                throw ChainContinuityError(location: location, position: event.position,
                                           problem: "its previous hash does not match the destination's head")
            }
            guard EventChain.hash(previous: head.hash, row: record.chainRow) == event.hash else {
                throw ChainContinuityError(location: location, position: event.position,
                                           problem: "its hash does not match its contents")
            }
            head = (event.position, event.hash)
        }
        return head
    }
}
