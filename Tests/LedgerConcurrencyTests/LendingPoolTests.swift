import Foundation
import LedgerConcurrency
import Testing

/// A resource that records how many borrowers hold it at once, and when it is freed.
///
/// `@unchecked Sendable`: `holders` and `most` are changed only inside `Monitor`s.
private final class Resource: @unchecked Sendable {
    let id: Int
    private let holders = Monitor((now: 0, most: 0))
    private let freed: Monitor<[Int]>
    init(id: Int, freed: Monitor<[Int]>) {
        self.id = id
        self.freed = freed
    }
    deinit { freed.update { $0.append(id) } }
    func hold(_ body: () -> Void) {
        holders.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
        body()
        holders.withLock { $0.now -= 1 }
    }
    func holdReturning<T>(_ body: () -> T) -> T {
        var result: T?
        hold { result = body() }
        return result!
    }
    var mostHolders: Int { holders.withLock { $0.most } }
}

@Suite("LendingPool")
struct LendingPoolTests {
    @Test("each resource is lent to one borrower at a time (8 threads × 200 lends, 3 resources); three borrowers at once hold all three")
    func oneBorrowerAtATime() throws {
        let freed = Monitor<[Int]>([])
        let resources = (0..<3).map { Resource(id: $0, freed: freed) }
        let pool = LendingPool(resources)
        let lends = Counter()
        let used = Names()
        let threads = (0..<8).map { _ in
            onThread { () -> Int in
                var sum = 0
                for index in 0..<200 {
                    sum += (try? pool.lend { resource -> Int in
                        resource.hold {
                            lends.increment()
                            // Some work, so that borrowers overlap and others wait.
                            var x = UInt64(index)
                            for _ in 0..<200 { x = x &* 6364136223846793005 &+ 1 }
                            _ = x
                        }
                        return 1
                    }) ?? 0
                }
                return sum
            }
        }
        #expect(threads.map { $0.wait() } == Array(repeating: 200, count: 8))
        #expect(lends.value == 1_600)
        #expect(resources.allSatisfy { $0.mostHolders <= 1 }, "a resource lent to two borrowers at once")
        // Three borrowers that each hold their resource until all three hold one: the pool must
        // lend all three at once (a deadline, not a hang, if it does not).
        let inside = Monitor(0)
        let together = (0..<3).map { _ in
            onThread { () -> Bool in
                (try? pool.lend { resource -> Bool in
                    used.insert("together-\(resource.id)")
                    return resource.holdReturning {
                        inside.update { $0 += 1 }
                        return inside.wait(until: { $0 == 3 }, deadline: .now.advanced(by: .seconds(20))) { _, ready in ready }
                    }
                }) ?? false
            }
        }
        #expect(together.map { $0.wait() } == [true, true, true])
        #expect((0..<3).allSatisfy { id in used.contains("together-\(id)") })
        #expect(resources.map(\.mostHolders) == [1, 1, 1])
    }

    @Test("after close a borrower waiting or arriving gets Closed without running its body; a lent resource is dropped when it comes back")
    func close() throws {
        let freed = Monitor<[Int]>([])
        let pool = LendingPool([Resource(id: 7, freed: freed)])
        let holding = OneShot<Void>()
        let release = OneShot<Void>()
        // The one resource is lent and held until `release`.
        let holder = onThread { () -> Bool in
            (try? pool.lend { _ in
                holding.set(())
                release.wait()
                return true
            }) ?? false
        }
        holding.wait()
        let waiterRan = Counter()
        let waiter = onThread { () -> String in
            do {
                try pool.lend { _ in waiterRan.increment() }
                return "lent"
            } catch is LendingPool<Resource>.Closed {
                return "closed"
            } catch {
                return "\(error)"
            }
        }
        pool.close()
        #expect(waiter.wait() == "closed")
        #expect(freed.withLock { $0 } == [], "the lent resource is not freed while its borrower holds it")
        release.set(())
        #expect(holder.wait())
        #expect(freed.withLock { $0 } == [7], "dropped when it came back to the closed pool")
        #expect(throws: LendingPool<Resource>.Closed.self) { try pool.lend { _ in waiterRan.increment() } }
        #expect(waiterRan.value == 0)
    }

    @Test("an error from the body reaches the borrower; the resource goes back to the pool")
    func bodyError() throws {
        struct Refused: Error {}
        let freed = Monitor<[Int]>([])
        let pool = LendingPool([Resource(id: 1, freed: freed)])
        #expect(throws: Refused.self) { try pool.lend { _ in throw Refused() } }
        #expect(try pool.lend { $0.id } == 1)
    }
}
