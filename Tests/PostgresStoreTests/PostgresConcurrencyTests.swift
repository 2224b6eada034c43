import Foundation
import GroupSimulator
import LedgerEvents
import LedgerStorage
import LedgerStoreConformance
import PostgresClient
import PostgresStore
import PostgresTestSupport
import Testing

/// Several appenders on one PostgreSQL ledger, each with its own store and connection (as separate
/// processes would be), and a reader tailing the log meanwhile.
@Suite("PostgreSQL concurrent appenders and a tailing reader")
struct PostgresConcurrencyTests {
    struct Rollback: Error {}

    /// What the threads report.
    struct Run {
        var appended: [String: Int64] = [:]       // event id → position, from the writers' outcomes
        var duplicates: [String: [Int64]] = [:]   // event id → positions a duplicate outcome named
        var quarantineIds: [Int64] = []
        var committedBatches = 0
        var rolledBack = 0
        var readerProblems: [String] = []
        var readerSeen: [Int64] = []
        var writerErrors: [String] = []
        var writersDone = 0
    }

    @Test("4 writers × 60 batches (shared ids, rejections, rollbacks) while a reader tails forEachEvent: never a gap, exactly 1…N")
    func concurrentWritersAndTailingReader() throws {
        let fixture = try StoreFixture.make(.postgres)
        let cluster = try #require(fixture.cluster)
        let url = cluster.url()
        let writers = 4
        let batchesPerWriter = 60
        let state = Guarded(Run())
        let group = DispatchGroup()
        let started = Date()

        for writer in 0..<writers {
            group.enter()
            let thread = Thread {
                defer {
                    state.withValue { $0.writersDone += 1 }
                    group.leave()
                }
                do {
                    let store = try PostgresEventStore.open(url: url)
                    var random = SeededRandom(seed: UInt64(writer + 1))
                    for batch in 0..<batchesPerWriter {
                        let size = Int(random.next() % 40) + 1
                        var events = (0..<size).map { TestData.apiEvent(writer * 100_000 + batch * 100 + $0, source: "w\(writer)") }
                        // Ids every writer sends too: whoever commits first appends, the others see duplicates.
                        events.append(TestData.apiEvent(9_000_000 + batch, source: "w\(writer)"))
                        let rejections = random.next() % 4 == 0 ? [TestData.rejection("w\(writer)-b\(batch)")] : []
                        if random.next() % 8 == 0 {
                            // Everything written, then rolled back: must consume no position and no id.
                            do {
                                _ = try store.write {
                                    _ = try store.append(events: events, rejections: rejections)
                                    throw Rollback()
                                }
                            } catch is Rollback {
                                state.withValue { $0.rolledBack += 1 }
                            }
                            continue
                        }
                        let result = try store.commit(events: events, rejections: rejections)
                        state.withValue { run in
                            run.committedBatches += 1
                            run.quarantineIds += result.quarantineIds
                            for (event, outcome) in zip(events, result.outcomes) {
                                switch outcome {
                                case .appended(let position):
                                    if let earlier = run.appended.updateValue(position, forKey: event.eventId) {
                                        run.writerErrors.append("\(event.eventId) appended twice: \(earlier) and \(position)")
                                    }
                                case .duplicate(let position):
                                    run.duplicates[event.eventId, default: []].append(position)
                                }
                            }
                        }
                    }
                } catch {
                    state.withValue { $0.writerErrors.append("writer \(writer): \(error)") }
                }
            }
            thread.name = "writer-\(writer)"
            thread.start()
        }

        group.enter()
        let readerThread = Thread {
            defer { group.leave() }
            do {
                let reader = try PostgresEventStore.open(url: url)
                var last: Int64 = 0
                var previousHash = EventChain.genesis
                while true {
                    let done = state.withValue { $0.writersDone == writers }
                    try reader.forEachEvent(from: last + 1) { event in
                        if event.position != last + 1 {
                            state.withValue { $0.readerProblems.append("after \(last) the reader saw \(event.position)") }
                        }
                        if event.position <= last {
                            state.withValue { $0.readerProblems.append("\(event.position) appeared at or below \(last)") }
                        }
                        let row = EventChain.Row(position: event.position, eventId: event.eventId, kind: event.kind.rawValue,
                                                 type: event.type, subtype: event.subtype, status: event.status,
                                                 occurredAt: event.occurredAt, recordedAt: event.recordedAt, source: event.source,
                                                 origin: event.origin.rawValue, raw: event.raw)
                        if EventChain.hash(previous: previousHash, row: row) != event.hash {
                            state.withValue { $0.readerProblems.append("the chain breaks at \(event.position)") }
                        }
                        previousHash = event.hash
                        last = max(last, event.position)
                        state.withValue { $0.readerSeen.append(event.position) }
                    }
                    // One more pass after the writers finished picks up the last commits.
                    if done { break }
                    usleep(1_000)
                }
            } catch {
                state.withValue { $0.readerProblems.append("reader: \(error)") }
            }
        }
        readerThread.name = "reader"
        readerThread.start()
        group.wait()
        let seconds = Date().timeIntervalSince(started)

        let run = state.withValue { $0 }
        #expect(run.writerErrors.isEmpty, "\(run.writerErrors.prefix(5))")
        #expect(run.readerProblems.isEmpty, "\(run.readerProblems.prefix(5))")
        let store = fixture.store
        let head = try store.head()
        let total = Int64(run.appended.count)
        #expect(head.position == total, "every appended outcome is one position")
        let expected = (0..<total).map { $0 + 1 }
        #expect(run.readerSeen == expected, "the reader saw 1…N once each, in order")
        #expect(run.appended.values.sorted() == expected, "the writers were told positions 1…N, each once")
        for (eventId, positions) in run.duplicates {
            #expect(positions.allSatisfy { $0 == run.appended[eventId] }, "a duplicate names where \(eventId) is")
        }
        let quarantined = try store.quarantine().map(\.id)
        #expect(quarantined == (0..<Int64(quarantined.count)).map { $0 + 1 }, "quarantine ids are gap-free")
        #expect(Set(run.quarantineIds) == Set(quarantined))
        let verification = try store.verifyChain()
        #expect(verification.isIntact, "\(verification)")
        #expect(verification.eventsChecked == total)
        var positions: [Int64] = []
        try store.forEachEvent { positions.append($0.position) }
        #expect(positions == expected)
        #expect(run.rolledBack > 0)
        print("4 writers: \(run.committedBatches) batches committed, \(run.rolledBack) rolled back, \(total) events, "
              + "\(run.quarantineIds.count) quarantine outcomes in \(String(format: "%.2f", seconds)) s; the reader saw every position once")
    }

    @Test("a rebuild holds the append lock to its commit, from clearProjections (index written whole) or holdAppendsForRebuild (only differing groups rewritten): another process's append waits",
          .timeLimit(.minutes(1)), arguments: [true, false])
    func rebuildHoldsTheAppendLock(clearsIndex: Bool) throws {
        let fixture = try StoreFixture.make(.postgres)
        let store = fixture.store
        let url = try #require(fixture.cluster).url()
        let order = Guarded<[String]>([])
        let finished = DispatchSemaphore(value: 0)
        try store.write {
            if clearsIndex { try store.clearProjections() } else { try store.holdAppendsForRebuild() }
            let appender = Thread {
                defer { finished.signal() }
                do {
                    let other = try PostgresEventStore.open(url: url)
                    _ = try other.commit(events: [TestData.apiEvent(1)])
                    order.withValue { $0.append("append committed") }
                } catch {
                    order.withValue { $0.append("append failed: \(error)") }
                }
            }
            appender.start()
            // Wait until the append is really blocked on a lock (seen from a third session), or has
            // finished (which the order check below then reports), instead of sleeping a guess.
            let observer = try PostgresConnection(url: url)
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, order.withValue({ $0.isEmpty }) {
                let waiting = try observer.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                                 + "AND datname = current_database() AND pid <> pg_backend_pid()")
                if try waiting.first?.int64(0) ?? 0 > 0 { break }
                usleep(2_000)
            }
            order.withValue { $0.append("rebuild committing") }
            let rows = [GroupIndexRow(identifier: "1000", groupKey: "1000", role: "key")]
            if clearsIndex { try store.insertRebuiltGroups(rows: rows) } else { try store.replaceGroups(removing: ["1000"], rows: rows) }
        }
        finished.wait()
        #expect(order.withValue { $0 } == ["rebuild committing", "append committed"])
        #expect(try store.eventCount() == 1)
    }
}
