import AppStoreModels
import Foundation
import GroupSimulator
import LedgerEvents
import LedgerStorage
import Projections
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// Appending batch by batch must leave exactly the projections a rebuild computes, also for
/// tangled histories: two purchasers, assigned holders moving between groups, group ids linked
/// late (Get Customer Groups before the purchase it names), claims and unclaims, placeholders,
/// all in random order and random batch sizes.
@Suite("Incremental projections equal a rebuild on tangled histories")
struct IncrementalEqualsRebuildTests {
    typealias B = ScenarioBuilder

    static func tangledHistory(seed: UInt64) -> B {
        var rng = SeededRandom(seed: seed)
        var b = B()
        let purchasers = ["2000000000000001", "2000000000000002"]
        let purchaserApps = ["705000000000000001", "705000000000000002"]
        let holders = (0..<5).map { "2000000000000\(100 + $0)" }
        let holderApps = (0..<5).map { "70500000000000\(100 + $0)" }
        let groupIds = ["g1", "g2", SandboxPlaceholder.groupId]
        let claims = ["c1", "c2", "c3"]
        let products = ["prodA", "prodB"]
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &rng)] }
        var time = B.base
        var serial = 0
        for _ in 0..<Int.random(in: 5...30, using: &rng) {
            time += EpochMillis.random(in: 0...100_000, using: &rng)
            switch Int.random(in: 0..<8, using: &rng) {
            case 0, 1:
                let h = Int.random(in: 0..<holders.count, using: &rng)
                serial += 1
                var tx = B.transaction(id: "\(holders[h])\(serial)", original: holders[h],
                                       app: Bool.random(using: &rng) ? holderApps[h] : SandboxPlaceholder.memberAppTransactionId,
                                       ownership: "ASSIGNED", purchase: time, expires: time + B.day, signed: time, model: "APPLE")
                if case .object(var object) = tx { object["productId"] = .string(pick(products)); tx = .object(object) }
                b.notification("SUBSCRIBED", at: time, transaction: tx)
            case 2:
                let p = Int.random(in: 0..<purchasers.count, using: &rng)
                let groups: [JSONValue] = (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                    ["groupId": .string(pick(groupIds)), "groupType": "FAMILY"]
                }
                b.api("GetCustomerGroups", path: "/groups/v1/currentGroups/\(Bool.random(using: &rng) ? purchasers[p] : purchaserApps[p])",
                      body: ["groups": .array(groups)], at: time)
            case 3:
                let members: [JSONValue] = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                    ["appTransactionId": .string(pick(holderApps + purchaserApps))]
                }
                b.api("GetGroupMembers", path: "/groups/v1/group/\(pick(groupIds))", body: ["members": .array(members), "hasMore": false], at: time)
            case 4:
                b.claim(pick(claims), purchaser: pick(purchasers), at: time, memberRef: "ref-\(Int.random(in: 0..<3, using: &rng))")
            case 5:
                b.unclaim(pick(claims), purchaser: pick(purchasers), at: time)
            default:
                let p = Int.random(in: 0..<purchasers.count, using: &rng)
                serial += 1
                b.notification("SUBSCRIBED", at: time, transaction: B.transaction(
                    id: "\(purchasers[p])\(serial)", original: purchasers[p], app: purchaserApps[p], quantity: 4,
                    purchase: time, expires: time + B.day))
            }
        }
        return b
    }

    @Test("random order and batch sizes, with and without the writer's cache: nothing stale", arguments: Array(UInt64(1)...UInt64(200)))
    func incrementalEqualsRebuild(seed: UInt64) throws {
        let history = Self.tangledHistory(seed: seed)
        var rng = SeededRandom(seed: seed &* 31)
        for useCache in [false, true] {
            let directory = try TemporaryDirectory(label: "tangled")
            let store = try directory.bareStore("l.sqlite")
            let cache: ProjectionCache? = useCache ? ProjectionCache() : nil
            let maintainer = ProjectionMaintainer(store: store, cache: cache)
            var pending = history.events.shuffled(using: &rng).map { ScenarioBuilder.newEvent($0) }
            while !pending.isEmpty {
                let size = Int.random(in: 1...max(1, min(4, pending.count)), using: &rng)
                let batch = Array(pending.prefix(size))
                pending.removeFirst(size)
                let keys = Dictionary(uniqueKeysWithValues: batch.map { ($0.eventId, $0.identifiers.map(\.value)) })
                _ = try store.write {
                    let result = try store.append(events: batch)
                    try maintainer.update(after: result.appended, eventKeys: keys)
                    return result
                }
                cache?.commit()
            }
            let stale = try ProjectionRebuilder(store: store).staleGroups(progress: nil)
            #expect(stale.isEmpty, "seed \(seed), cache \(useCache): \(stale)")
        }
    }
}
