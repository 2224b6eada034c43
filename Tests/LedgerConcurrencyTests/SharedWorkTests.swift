import Foundation
import LedgerConcurrency
import Synchronization
import Testing

@Suite("SharedWork and Handoff")
struct SharedWorkTests {
    @Test("threads that join a batch share it, each item once, results in input order", arguments: [0, 1, 3])
    func shared(helpers: Int) {
        let work = SharedWork<Int, String>(Array(0..<3_000))
        let calls = Counter()
        let transform: @Sendable (Int) -> String = { item in
            calls.increment()
            var x = UInt64(item)
            for _ in 0..<(item % 5 == 0 ? 1_000 : 5) { x = x &* 6364136223846793005 &+ 1 }
            return "\(item)"
        }
        let joined = (0..<helpers).map { _ in onThread { work.work(transform) } }
        let results = work.finish(transform)
        for helper in joined { helper.wait() }
        #expect(results == (0..<3_000).map { "\($0)" })
        #expect(calls.value == 3_000, "every item transformed exactly once")
        #expect(!work.hasUnclaimed)
        // A thread arriving after everything was claimed returns at once, transforming nothing.
        work.work(transform)
        #expect(calls.value == 3_000)
    }

    @Test("an empty batch finishes at once; a batch nobody helps is done by its owner")
    func edges() {
        let empty = SharedWork<Int, Int>([])
        #expect(!empty.hasUnclaimed)
        #expect(empty.finish { $0 } == [])
        let alone = SharedWork<Int, Int>([1, 2, 3])
        #expect(alone.hasUnclaimed)
        #expect(alone.count == 3)
        #expect(alone.finish { $0 * 10 } == [10, 20, 30])
    }

    @Test("a value that is not Sendable moves to another thread and is used there")
    func handoff() {
        final class Tally { var total = 0 }   // not Sendable: only the compiler-checked handoff lets it cross
        let tally = Tally()
        tally.total = 40
        let handOver = Handoff(tally)
        let seen = onThread { () -> Int in
            let moved = handOver.take()
            moved.total += 2
            return moved.total
        }
        #expect(seen.wait() == 42)
    }
}
