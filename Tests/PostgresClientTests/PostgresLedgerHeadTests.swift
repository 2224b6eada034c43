import Foundation
import GroupSimulator
import PostgresClient
import PostgresTestSupport
import Testing

/// The gap-free, commit-ordered position prototype (`PostgresLedgerHead`), and the sequence bug it avoids.
@Suite("PostgreSQL gap-free commit-ordered position")
struct PostgresLedgerHeadTests {
    struct Rollback: Error {}

    @Test("the classic bug: with a sequence, a tailing reader sees a gap, then an event appears below what it passed")
    func sequenceSkipsEvents() throws {
        let cluster = try PostgresTestCluster()
        let slow = try cluster.connect()
        let fast = try cluster.connect()
        let reader = try cluster.connect()
        try slow.execute("CREATE TABLE seq_log (position bigserial PRIMARY KEY, payload text NOT NULL)")
        try slow.execute("BEGIN")
        try slow.query("INSERT INTO seq_log (payload) VALUES ('slow')")  // takes position 1, not yet committed
        try fast.query("INSERT INTO seq_log (payload) VALUES ('fast')")  // takes 2, commits at once
        let seen = try reader.query("SELECT position FROM seq_log WHERE position > 0 ORDER BY position").map { try $0.int64(0) }
        #expect(seen == [2], "the reader passes position 2 while 1 is invisible")
        try slow.execute("COMMIT")
        let later = try reader.query("SELECT position FROM seq_log WHERE position > 2 ORDER BY position").map { try $0.int64(0) }
        #expect(later.isEmpty, "a reader resuming after 2 never reads event 1: it is skipped for good")
        #expect(try reader.scalarInt64("SELECT count(*) FROM seq_log WHERE position <= 2") == 2)
    }

    @Test("the head serialises appenders (a second one waits for the lock) and a rollback consumes nothing")
    func serialisesAndRollbackConsumesNothing() throws {
        let cluster = try PostgresTestCluster()
        let first = try cluster.connect()
        let second = try cluster.connect()
        try PostgresLedgerHead.createSchema(on: first)
        // Outside a transaction reserve would release the lock at once: refused.
        #expect(throws: PostgresError.self) { try PostgresLedgerHead.reserve(1, on: first) }

        try first.execute("BEGIN")
        #expect(try PostgresLedgerHead.reserve(3, on: first) == 1...3)
        try second.execute("SET lock_timeout = '200ms'")
        let blocked = #expect(throws: PostgresError.self) { try PostgresLedgerHead.append([Data([1])], on: second) }
        #expect(blocked?.isLockNotAvailable == true, "the second appender waits for the first: \(String(describing: blocked))")
        try first.execute("ROLLBACK")

        #expect(try PostgresLedgerHead.append([Data([1]), Data([2])], on: second) == 1...2, "the rolled-back 1…3 were not consumed")
        #expect(throws: Rollback.self) {
            try first.transaction {
                _ = try PostgresLedgerHead.reserve(5, on: first)
                throw Rollback()
            }
        }
        #expect(try PostgresLedgerHead.append([Data([3])], on: first) == 3...3)
        #expect(try PostgresLedgerHead.head(on: second) == 3)
        #expect(try PostgresLedgerHead.read(after: 0, limit: 10, on: second).map(\.position) == [1, 2, 3])
    }

    @Test("4 concurrent writers × 500 batches, one tailing reader: never a gap, never a late position, exactly 1…N")
    func concurrentWritersAndTailingReader() throws {
        let cluster = try PostgresTestCluster()
        let setup = try cluster.connect()
        try PostgresLedgerHead.createSchema(on: setup)
        let url = cluster.url()
        let writers = 4
        let batchesPerWriter = 500
        let state = Guarded(RunState())
        let group = DispatchGroup()

        for writer in 0..<writers {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let connection = try PostgresConnection(url: url)
                    var random = SeededRandom(seed: UInt64(writer + 1))
                    for batch in 0..<batchesPerWriter {
                        let size = Int(random.next() % 4) + 1
                        let payloads = (0..<size).map { Data("w\(writer)-b\(batch)-i\($0)".utf8) }
                        if random.next() % 10 == 0 {
                            // Take positions and write rows, then roll back: must consume nothing.
                            do {
                                _ = try connection.transaction {
                                    let positions = try PostgresLedgerHead.reserve(size, on: connection)
                                    try PostgresLedgerHead.insert(payloads, from: positions.lowerBound, on: connection)
                                    throw Rollback()
                                }
                            } catch is Rollback {
                                state.withValue { $0.rolledBack += size }
                            }
                            continue
                        }
                        let positions = try PostgresLedgerHead.append(payloads, on: connection)
                        state.withValue { state in
                            for (offset, payload) in payloads.enumerated() { state.committed[positions.lowerBound + Int64(offset)] = payload }
                        }
                    }
                } catch {
                    state.withValue { $0.failures.append("writer \(writer): \(error)") }
                }
                state.withValue { $0.writersFinished += 1 }
            }.start()
        }

        group.enter()
        Thread {
            defer { group.leave() }
            do {
                let connection = try PostgresConnection(url: url)
                var last: Int64 = 0
                var reads = 0
                var finalPass = false
                while true {
                    if state.withValue({ $0.writersFinished == writers }) { finalPass = true }
                    let entries = try PostgresLedgerHead.read(after: last, limit: 500, on: connection)
                    reads += 1
                    for entry in entries {
                        if entry.position != last + 1 {
                            state.withValue { $0.failures.append("gap: after \(last) the reader saw \(entry.position)") }
                        }
                        last = max(last, entry.position)
                    }
                    if !entries.isEmpty, !finalPass { state.withValue { $0.nonEmptyReadsDuringWrites += 1 } }
                    if reads % 10 == 0 || finalPass {
                        // Nothing may ever appear at or below a position the reader has passed.
                        let below = try connection.scalarInt64("SELECT count(*) FROM ledger_log WHERE position <= $1", [.int64(last)]) ?? -1
                        if below != last {
                            state.withValue { $0.failures.append("late arrival: \(below) rows at or below \(last)") }
                        }
                    }
                    if finalPass, entries.isEmpty { break }
                }
                state.withValue { $0.readerLast = last; $0.reads = reads }
            } catch {
                state.withValue { $0.failures.append("reader: \(error)") }
            }
        }.start()

        let started = Date()
        let finished = group.wait(timeout: .now() + 240)
        let seconds = Date().timeIntervalSince(started)
        #expect(finished == .success, "writers and reader finished")
        let result = state.withValue { $0 }
        #expect(result.failures.isEmpty, "\(result.failures.prefix(10))")
        let total = Int64(result.committed.count)
        #expect(total > 0)
        #expect(result.readerLast == total, "the reader reached the last position")
        #expect(result.nonEmptyReadsDuringWrites > 1, "the reader tailed while writers were appending")
        #expect(result.rolledBack > 0, "some batches were rolled back")
        // Exactly 1…N, each with the payload its writer appended.
        let stored = try setup.query("SELECT position, payload FROM ledger_log ORDER BY position", resultFormat: .binary)
        #expect(Int64(stored.rowCount) == total)
        #expect(try stored.map { try $0.int64(0) } == Array(1...max(total, 1)).prefix(Int(total)).map { $0 })
        #expect(try stored.allSatisfy { try result.committed[$0.int64(0)] == $0.bytea(1) })
        #expect(try PostgresLedgerHead.head(on: setup) == total)
        print("ledger head: \(writers) writers × \(batchesPerWriter) batches → \(total) positions (\(result.rolledBack) rolled back) in \(String(format: "%.2f", seconds)) s; reader polled \(result.reads)×, \(result.nonEmptyReadsDuringWrites) non-empty during writes")
    }
}

/// What the writer and reader threads report.
private struct RunState: Sendable {
    var committed: [Int64: Data] = [:]
    var rolledBack = 0
    var failures: [String] = []
    var writersFinished = 0
    var nonEmptyReadsDuringWrites = 0
    var readerLast: Int64 = 0
    var reads = 0
}
