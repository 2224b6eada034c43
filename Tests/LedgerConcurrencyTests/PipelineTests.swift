import LedgerConcurrency
import Synchronization
import Testing

/// `pipelined`: every chunk produced, transformed and consumed exactly once, in order, with the
/// transform overlapping the next production; errors stop it without leaving a transform running.
@Suite("pipelined chunks")
struct PipelineTests {
    @Test("results are consumed in production order, each once", arguments: [0, 1, 2, 7, 64])
    func inOrder(count: Int) throws {
        var consumed: [[Int]] = []
        var produced: [Int] = []
        try pipelined(chunks: count, produce: { index -> [Int] in
            produced.append(index)
            return Array(index * 10..<index * 10 + 3)
        }, transform: { chunk in chunk.map { $0 * 2 } }, consume: { consumed.append($0) })
        #expect(produced == Array(0..<count))
        #expect(consumed == (0..<count).map { index in (index * 10..<index * 10 + 3).map { $0 * 2 } })
    }

    @Test("a chunk is transformed while the next one is produced")
    func overlaps() throws {
        // The transform of chunk 0 waits until chunk 1 has been produced: without the overlap
        // this would never finish (the wait has a deadline so that a failure is a failure, not a hang).
        let secondProduced = OneShot<Bool>()
        var results: [String] = []
        try pipelined(chunks: 2, produce: { index -> Int in
            if index == 1 { secondProduced.set(true) }
            return index
        }, transform: { index -> String in
            index == 0 ? (secondProduced.wait(timeout: .seconds(10)) == true ? "overlapped" : "waited alone") : "second"
        }, consume: { results.append($0) })
        #expect(results == ["overlapped", "second"])
    }

    struct Stop: Error, Equatable {}

    @Test("an error in produce or consume stops it; no transform runs past the return")
    func errorsStop() {
        let running = Atomic<Int>(0)
        let transform: @Sendable (Int) -> Int = { value in
            running.add(1, ordering: .relaxed)
            defer { running.subtract(1, ordering: .relaxed) }
            return value
        }
        var consumed: [Int] = []
        #expect(throws: Stop.self) {
            try pipelined(chunks: 10, produce: { index -> Int in
                if index == 4 { throw Stop() }
                return index
            }, transform: transform, consume: { consumed.append($0) })
        }
        #expect(consumed == [0, 1, 2])
        #expect(running.load(ordering: .relaxed) == 0)
        #expect(throws: Stop.self) {
            try pipelined(chunks: 10, produce: { $0 }, transform: transform, consume: { value in
                if value == 2 { throw Stop() }
            })
        }
        #expect(running.load(ordering: .relaxed) == 0)
    }
}
