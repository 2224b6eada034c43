import AppStoreModels
import Foundation

/// One row of the group index: an identifier that belongs to a group, in a role.
public struct GroupIndexRow: Sendable, Hashable {
    /// The identifier (transaction id, groupId, seatClaimId, appTransactionId …).
    public let identifier: String
    /// The group it belongs to.
    public let groupKey: String
    /// `purchaser`, `groupId`, `claim`, `member`, `alias` or `product`.
    public let role: String

    /// Creates a row.
    public init(identifier: String, groupKey: String, role: String) {
        self.identifier = identifier
        self.groupKey = groupKey
        self.role = role
    }
}
