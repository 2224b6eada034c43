import AppStoreModels
import Foundation
import LedgerEvents

/// How a retry resolves its quarantine rows once its events were appended, decided once for every
/// engine: an appended event resolves its row (``NewEventForRetry/appendedResolution(at:)``); a
/// duplicate resolves it as `duplicate` only when it is the input's own event (an envelope's
/// history items do not); a row several events resolve ends with the last of them.
public struct QuarantineRetryPlan: Sendable {
    /// One quarantine row's new state.
    public struct Resolution: Sendable, Equatable {
        /// The quarantine id.
        public let id: Int64
        /// `released`, `duplicate`, `dismissed`…
        public let state: String
        /// The resolution text.
        public let resolution: String

        /// Creates a resolution.
        public init(id: Int64, state: String, resolution: String) {
            self.id = id
            self.state = state
            self.resolution = resolution
        }
    }

    /// One resolution per row, in the order the rows were first resolved.
    public let resolutions: [Resolution]

    /// Plans the resolutions of `items` given the append's `outcomes` (same order).
    public init(items: [NewEventForRetry], outcomes: [AppendOutcome]) {
        var order: [Int64] = []
        var latest: [Int64: Resolution] = [:]
        for (item, outcome) in zip(items, outcomes) {
            let (state, text): (String, String)
            switch outcome {
            case .appended(let position):
                (state, text) = item.appendedResolution(at: position)
            case .duplicate(let position):
                guard item.isPrimary else { continue }
                (state, text) = ("duplicate", "already in the ledger at position \(position)")
            }
            if latest.updateValue(Resolution(id: item.quarantineId, state: state, resolution: text), forKey: item.quarantineId) == nil {
                order.append(item.quarantineId)
            }
        }
        resolutions = order.compactMap { latest[$0] }
    }
}
