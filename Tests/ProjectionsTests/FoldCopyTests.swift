import AppStoreModels
import LedgerEvents
@testable import Projections
import Testing

/// The fold's copy avoidance (issue 25, `groups --json` target): what it returns must be exactly
/// what the plain operations return, and the shared storage and the fact box must keep value
/// semantics.
@Suite("Projections: the fold's filters, sorts and the boxed facts")
struct FoldCopyTests {
    static func facts(_ id: String, at occurredAt: EpochMillis, claim: String? = nil, unclaims: [String] = []) -> EventFacts {
        var facts = EventFacts(position: occurredAt, eventId: id, kind: .apiResponse, occurredAt: occurredAt,
                               recordedAt: occurredAt + 5, origin: .recorded)
        facts.claimedSeatId = claim
        facts.unclaimSeatIds = unclaims
        return facts
    }

    @Test("subset is filter, element for element", arguments: [0, 1, 2, 3, 5, 8, 13])
    func subsetIsFilter(threshold: Int) {
        let values = [5, 1, 8, 3, 13, 2, 0, 8]
        #expect(values.subset { $0 >= threshold } == values.filter { $0 >= threshold })
        #expect([Int]().subset { $0 >= threshold } == [])
    }

    @Test("subset keeping every element returns the array itself, its storage shared")
    func subsetSharesStorage() {
        let values = (0..<100).map { "value \($0)" }
        let kept = values.subset { !$0.isEmpty }
        #expect(kept == values)
        #expect(kept.withUnsafeBufferPointer { $0.baseAddress } == values.withUnsafeBufferPointer { $0.baseAddress })
    }

    @Test("sortedIfNeeded is sorted(by:), and an already sorted array comes back as itself",
          arguments: [[3, 1, 2], [1, 2, 3], [2, 2, 1], [1], [], [5, 4, 3, 2, 1], [1, 1, 1]] as [[Int]])
    func sortedIfNeededIsSorted(values: [Int]) {
        #expect(values.sortedIfNeeded(by: <) == values.sorted(by: <))
        let sorted = values.sorted()
        let again = sorted.sortedIfNeeded(by: <)
        #expect(again == sorted)
        if !sorted.isEmpty {
            #expect(again.withUnsafeBufferPointer { $0.baseAddress } == sorted.withUnsafeBufferPointer { $0.baseAddress })
        }
    }

    @Test("a copy of boxed facts changed afterwards leaves the original as it was")
    func boxedFactsAreValues() {
        let original = Self.facts("e1", at: 1_000, claim: "claim-1", unclaims: ["claim-0"])
        var copy = original
        #expect(copy == original)
        #expect(copy.hashValue == original.hashValue)
        copy.claimedSeatId = "claim-2"
        copy.unclaimSeatIds.append("claim-3")
        #expect(original.claimedSeatId == "claim-1")
        #expect(original.unclaimSeatIds == ["claim-0"])
        #expect(copy.claimedSeatId == "claim-2")
        #expect(copy.unclaimSeatIds == ["claim-0", "claim-3"])
        #expect(copy != original)
        // Equal fields in different boxes are equal facts.
        #expect(Self.facts("e1", at: 1_000, claim: "claim-1", unclaims: ["claim-0"]) == original)
        #expect(Self.facts("e1", at: 1_001, claim: "claim-1", unclaims: ["claim-0"]) != original)
    }

    @Test("mentions(anyOf:) answers what the identifier set answers",
          arguments: [[], ["claim-1"], ["claim-0"], ["nobody"], ["nobody", "claim-0"], ["e1"]] as [Set<String>])
    func mentionsIsIdentifiers(ids: Set<String>) {
        let facts = Self.facts("e1", at: 1_000, claim: "claim-1", unclaims: ["claim-0"])
        #expect(facts.mentions(anyOf: ids) == !facts.identifiers.isDisjoint(with: ids))
        var membership = GroupMembership(groupKey: "g")
        membership.seatClaimIds = ids
        #expect(membership.relevant([facts]).count == (facts.mentions(anyOf: membership.identifiers) ? 1 : 0))
    }
}
