import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import LedgerStoreConformance
import Testing

/// ``QuarantineRetryPlan``: how a retry resolves its quarantine rows, as pure code.
@Suite("Quarantine retry plan (pure)")
struct QuarantineRetryPlanTests {
    static func item(_ id: Int64, _ n: Int, primary: Bool = true, state: String? = nil) -> NewEventForRetry {
        NewEventForRetry(quarantineId: id, event: TestData.apiEvent(n), isPrimary: primary, resolvedState: state,
                         resolutionText: state.map { "\($0) by ops" })
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let items: [NewEventForRetry]
        let outcomes: [AppendOutcome]
        let expected: [QuarantineRetryPlan.Resolution]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "an appended event releases its row", items: [item(1, 1)], outcomes: [.appended(position: 5)],
             expected: [.init(id: 1, state: "released", resolution: "appended at position 5")]),
        Case(name: "a duplicate of the input's own event resolves it as duplicate", items: [item(2, 1)],
             outcomes: [.duplicate(existingPosition: 3)],
             expected: [.init(id: 2, state: "duplicate", resolution: "already in the ledger at position 3")]),
        Case(name: "a duplicate history item resolves nothing", items: [item(3, 1, primary: false)],
             outcomes: [.duplicate(existingPosition: 3)], expected: []),
        Case(name: "several events of one row: the last resolution, once, in first-resolved order",
             items: [item(4, 1), item(9, 2), item(4, 3, primary: false)],
             outcomes: [.appended(position: 7), .appended(position: 8), .appended(position: 9)],
             expected: [.init(id: 4, state: "released", resolution: "appended at position 9"),
                        .init(id: 9, state: "released", resolution: "appended at position 8")]),
        Case(name: "a decision sets its own state and names its position", items: [item(5, 1, state: "dismissed")],
             outcomes: [.appended(position: 2)],
             expected: [.init(id: 5, state: "dismissed", resolution: "dismissed by ops (decision at position 2)")]),
    ]

    @Test("resolutions from outcomes", arguments: cases)
    func resolutions(_ example: Case) {
        #expect(QuarantineRetryPlan(items: example.items, outcomes: example.outcomes).resolutions == example.expected)
    }
}
