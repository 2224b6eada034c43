import Foundation
import JWSVerification

/// The result of recomputing the hash chain.
public struct ChainVerification: Sendable, Equatable {
    /// Events checked.
    public let eventsChecked: Int64
    /// The first position where the chain breaks, if it does.
    public let firstBadPosition: Int64?
    /// What is wrong there.
    public let problem: String?
    /// The hash of the last event (hex), when intact.
    public let headHash: String?

    /// Whether the whole chain is intact.
    public var isIntact: Bool { firstBadPosition == nil }

    /// Creates a result (for other ``LedgerStore`` implementations).
    public init(eventsChecked: Int64, firstBadPosition: Int64?, problem: String?, headHash: String?) {
        self.eventsChecked = eventsChecked
        self.firstBadPosition = firstBadPosition
        self.problem = problem
        self.headHash = headHash
    }
}
