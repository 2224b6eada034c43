import Foundation
import LedgerConcurrency
import Synchronization
import Testing

@Suite("OneShot")
struct OneShotTests {
    @Test("the first set wins; every thread and task waiter sees it once")
    func firstSetWins() async throws {
        let shot = OneShot<Int>()
        let threads = (0..<4).map { _ in onThread { shot.wait() } }
        let resumed = Counter()
        async let tasks: [Int] = withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    let value = await shot.value
                    resumed.increment()
                    return value
                }
            }
            var values: [Int] = []
            for await value in group { values.append(value) }
            return values
        }
        // Racing setters: exactly one succeeds.
        let setters = (0..<8).map { i in onThread { shot.set(100 + i) } }
        let wins = setters.map { $0.wait() }.filter { $0 }.count
        #expect(wins == 1)
        let value = try #require(shot.current)
        #expect((100..<108).contains(value))
        #expect(threads.map { $0.wait() } == Array(repeating: value, count: 4))
        #expect(await tasks == Array(repeating: value, count: 16))
        #expect(resumed.value == 16)
        #expect(!shot.set(1))
        #expect(await shot.value == value)   // set before the await: returns at once
    }

    @Test("a timed wait returns nil at the deadline and the value once set")
    func timedWait() {
        let shot = OneShot<String>()
        let start = MonotonicInstant.now
        #expect(shot.wait(timeout: .milliseconds(50)) == nil)
        #expect(start.duration(to: .now) >= .milliseconds(50))
        let setter = onThread { shot.set("done") }
        #expect(shot.wait(timeout: .seconds(10)) == "done")
        #expect(setter.wait())
    }

    @Test("running: the work's result on a global queue")
    func running() async {
        let shot = OneShot.running { (1...1000).reduce(0, +) }
        #expect(await shot.value == 500_500)
        #expect(shot.wait() == 500_500)
    }
}

/// Names collected from several threads.
///
/// On the kit's `Monitor` (POSIX mutex), not `Synchronization.Mutex`: ThreadSanitizer does not see
/// the futex-based `Mutex` of Linux and reports the accesses it guards as races (`.ci/run`).
final class Names: Sendable {
    private let names = Monitor<Set<String>>([])
    func insert(_ name: String) { names.withLock { _ = $0.insert(name) } }
    var count: Int { names.withLock { $0.count } }
    func contains(_ name: String) -> Bool { names.withLock { $0.contains(name) } }
}

@Suite("parallelMap")
struct ParallelMapTests {
    @Test("results in input order whatever the schedule", arguments: [1, 2, 3, 8])
    func order(workers: Int) {
        let items = Array(0..<5_000)
        // Uneven costs so workers finish out of order.
        let mapped = parallelMap(items, workers: workers) { item -> String in
            var x = UInt64(item)
            for _ in 0..<(item % 7 == 0 ? 2_000 : 10) { x = x &* 6364136223846793005 &+ 1 }
            return "\(item):\(x % 3)"
        }
        #expect(mapped.count == items.count)
        #expect(mapped.map { Int($0.split(separator: ":")[0])! } == items)
    }

    @Test("every item is transformed exactly once, and by more than one thread")
    func exactlyOnce() {
        // Run from a thread of its own, as the ledger's callers do (writer, rebuild threads).
        let result = onThread { () -> (out: [Int], calls: Int, helped: Bool) in
            let calls = Counter()
            let first = Names()
            let helped = OneShot<Bool>()
            let out = parallelMap(Array(0..<2_000), workers: 4) { item -> Int in
                calls.increment()
                let name = "\(pthread_self())"
                first.insert(name)
                if first.count > 1 { helped.set(true) }
                // The worker holding item 0 waits (bounded) until another worker has taken items.
                if item == 0 { _ = helped.wait(timeout: .seconds(10)) }
                return item * 2
            }
            return (out, calls.value, helped.current ?? false)
        }.wait()
        #expect(result.out == (0..<2_000).map { $0 * 2 })
        #expect(result.calls == 2_000)
        #expect(result.helped, "a second worker ran while the first was busy")
        #expect(parallelMap([Int](), workers: 4) { $0 } == [])
        #expect(parallelMap([7], workers: 4) { $0 + 1 } == [8])
    }
}

@Suite("Monitor")
struct MonitorTests {
    @Test("a timed wait wakes on the change, and times out without it")
    func timedWait() {
        let monitor = Monitor(0)
        let start = MonotonicInstant.now
        let timedOut = monitor.wait(until: { $0 > 0 }, deadline: .now.advanced(by: .milliseconds(30))) { _, ready in !ready }
        #expect(timedOut)
        #expect(start.duration(to: .now) >= .milliseconds(30))
        let waiter = onThread { monitor.wait(until: { $0 == 3 }, deadline: .now.advanced(by: .seconds(20))) { state, ready in ready ? state : -1 } }
        for _ in 0..<3 { monitor.update { $0 += 1 } }
        #expect(waiter.wait() == 3)
    }
}
