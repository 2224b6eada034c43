import Foundation
import LedgerConcurrency
import Synchronization
import Testing

/// `BlockingThreads`: blocking work run from async code on threads of their own.
@Suite("BlockingThreads")
struct BlockingThreadsTests {
    /// A count the jobs share (a `Mutex` in a class, so escaping closures can hold it).
    final class Counter: Sendable {
        private let value = Mutex(0)
        /// Adds one and returns the count now.
        func increment() -> Int { value.withLock { $0 += 1; return $0 } }
        /// The count now.
        var count: Int { value.withLock { $0 } }
    }

    @Test("a job runs on one of the named threads and its value or error reaches the caller")
    func valueAndError() async throws {
        let threads = BlockingThreads(count: 2, name: "sl-test-block")
        let name = try await threads.run { ThreadName.current() }
        #expect(name == "sl-test-block-0" || name == "sl-test-block-1")
        struct Refused: Error, Equatable {}
        await #expect(throws: Refused()) { try await threads.run { () throws -> Int in throw Refused() } }
        threads.close()
    }

    @Test("three jobs that each block until all three have started all finish: they run on three threads at once, none on the caller's")
    func concurrentBlockingJobs() async throws {
        let threads = BlockingThreads(count: 3, name: "sl-test-wide")
        let started = Counter()
        let allStarted = OneShot<Void>()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<3 {
                group.addTask {
                    try await threads.run {
                        if started.increment() == 3 { allStarted.set(()) }
                        // Blocks this thread until the third job has started (−1: it never did, fewer threads ran them).
                        return allStarted.wait(timeout: .seconds(30)) == nil ? -1 : index
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results.sorted() == [0, 1, 2])
        threads.close()
    }

    @Test("after close a job is refused with CancellationError and never runs")
    func closedRefuses() async throws {
        let threads = BlockingThreads(count: 1, name: "sl-test-closed")
        #expect(try await threads.run { 7 } == 7)
        threads.close()
        let ran = Counter()
        await #expect(throws: CancellationError.self) { try await threads.run { _ = ran.increment() } }
        #expect(ran.count == 0)
    }
}
