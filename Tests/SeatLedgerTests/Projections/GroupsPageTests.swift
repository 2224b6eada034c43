import AppStoreModels
import Foundation
import Projections
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// `Ledger.groupsPage` (`GET /v1/groups`): a page folds only the groups it reaches, and gives
/// exactly the page that filtering and sorting every group gives.
@Suite("Groups, a page at a time")
struct GroupsPageTests {
    @Test("every page, for every limit and filter, is the slice of all groups filtered, in key order", arguments: [1, 2, 3, 100])
    func pagesAreSlices(limit: Int) throws {
        let built = try SnapshotLedger(seed: 78, groups: 6)
        let ledger = try built.open()
        let filters: [(String, (GroupState) -> Bool)] = [
            ("all", { _ in true }),
            ("expired", { $0.status == .expired }),
            ("with a product", { $0.productId != nil }),
            ("none", { _ in false }),
        ]
        for asOf in [built.now, built.now - 20 * ScenarioBuilder.day] {
            let all = try ledger.groups(asOf: asOf).sorted { $0.groupKey < $1.groupKey }
            #expect(all.count >= 6)
            for (name, keep) in filters {
                let expected = all.filter(keep)
                var paged: [GroupState] = []
                var cursor: String?
                var pages = 0
                repeat {
                    let (page, more) = try ledger.groupsPage(asOf: asOf, after: cursor, limit: limit, matching: keep)
                    #expect(page.count <= limit)
                    paged += page
                    cursor = more ? page.last?.groupKey : nil
                    pages += 1
                    #expect(more == (paged.count < expected.count), "\(name): more says whether groups follow")
                } while cursor != nil && pages < 1_000
                #expect(paged == expected, "\(name), limit \(limit), as of \(Timestamp.iso8601(asOf))")
            }
        }
    }
}
