import AppStoreModels
import Foundation
import LedgerConcurrency
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

/// `LedgerPool`: the `Sendable` handle a server uses. Real SQLite files, real signed notifications.
@Suite("LedgerPool")
struct LedgerPoolTests {
    /// `count` signed notification bodies for purchaser `originalTransactionId`, with their UUIDs.
    static func notifications(_ factory: PayloadFactory, originalTransactionId: String, count: Int,
                              label: String) throws -> [(uuid: String, body: Data)] {
        try (0..<count).map { index in
            let uuid = "\(label)-\(index)"
            let transaction = factory.transaction(originalTransactionId: originalTransactionId,
                                                  transactionId: "\(originalTransactionId)\(index)",
                                                  signedDate: PayloadFactory.defaultSignedDate + Int64(index))
            let line = try factory.notification(type: index == 0 ? "SUBSCRIBED" : "DID_RENEW", uuid: uuid,
                                                signedDate: PayloadFactory.defaultSignedDate + Int64(index),
                                                transaction: transaction,
                                                renewal: factory.renewal(originalTransactionId: originalTransactionId))
            return (uuid, Data(line.utf8))
        }
    }

    /// Polls `condition` until it holds or `seconds` pass.
    static func eventually(_ seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
        let deadline = MonotonicInstant.now.advanced(by: .milliseconds(Int64(seconds * 1000)))
        while !condition() {
            if MonotonicInstant.now >= deadline { return false }
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }

    /// Blocks the pool's writer in an exclusive write until `gate` is set, so the calls that follow
    /// queue up; returns once the writer is inside the body.
    static func holdWriter(_ pool: LedgerPool, until gate: OneShot<Void>) async -> Task<Void, any Error> {
        let entered = OneShot<Void>()
        let holding = Task {
            try await pool.write { _ in
                entered.set(())
                gate.wait()
            }
        }
        await entered.value
        return holding
    }

    @Test("the pool's threads carry names the system shows (top -H, ps -L, perf): writer, readers, background reader, head watch")
    func threadNames() async throws {
        let test = try TestLedger()
        let pool = try LedgerPool.open(path: test.path, readers: 2)
        func names() -> Set<String> {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return Set(tasks.compactMap { task in
                (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
            })
        }
        // Each thread names itself as it starts, which may be just after `open` returns.
        let expected: Set<String> = ["sl-pool-writer", "sl-pool-read-0", "sl-pool-read-1", "sl-pool-bg-0", "sl-pool-head"]
        #expect(await Self.eventually { expected.isSubset(of: names()) }, "threads: \(names().sorted())")
        await pool.close()
    }

    @Test("backgroundRead runs on the background reader's thread, under SCHED_IDLE, and sees the committed appends; read runs under the default policy; both refused after close")
    func backgroundRead() async throws {
        let test = try TestLedger()
        let pool = try LedgerPool.open(path: test.path, readers: 1)
        let factory = try PayloadFactory()
        for (_, body) in try Self.notifications(factory, originalTransactionId: "2000000000000701", count: 3, label: "bg") {
            _ = try await pool.append(notificationBody: body, source: "test")
        }
        let background = try await pool.backgroundRead { ledger in
            (ThreadName.current(), ThreadPriority.currentRunsOnlyWhenIdle, try ledger.store.head().position)
        }
        #expect(background.0 == "sl-pool-bg-0")
        #expect(background.1)
        #expect(background.2 == 3)
        let regular = try await pool.read { _ in (ThreadName.current(), ThreadPriority.currentRunsOnlyWhenIdle) }
        #expect(regular.0 == "sl-pool-read-0")
        #expect(!regular.1)
        await pool.close()
        await #expect(throws: LedgerPoolError.closed) { try await pool.backgroundRead { _ in 0 } }
    }

    @Test("32 concurrent tasks append and read: outcomes right, positions gap-free, each event once, chain intact, commits grouped")
    func concurrentAppendsAndReads() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let tasks = 32, perTask = 4
        let inputs = try (0..<tasks).map { task in
            try Self.notifications(factory, originalTransactionId: "20000000000\(10_000 + task)", count: perTask, label: "task\(task)")
        }
        let pool = try LedgerPool.open(path: test.path, readers: 4)
        let results = try await withThrowingTaskGroup(of: [(uuid: String, position: Int64)].self) { group in
            for (task, messages) in inputs.enumerated() {
                group.addTask {
                    var mine: [(uuid: String, position: Int64)] = []
                    for message in messages {
                        let outcome = try await pool.append(notificationBody: message.body, source: "webhook")
                        guard case .appended(let positions, 0) = outcome, positions.count == 1 else {
                            Issue.record("task \(task): \(outcome)")
                            continue
                        }
                        mine.append((message.uuid, positions[0]))
                        // Read-your-writes: a read that starts after the append returned sees it.
                        let stored = try await pool.read { ledger in try ledger.store.event(at: positions[0])?.eventId }
                        #expect(stored == message.uuid)
                        #expect(pool.headPosition >= positions[0])
                    }
                    // A projection read of this task's group sees all of its renewals.
                    let otid = "20000000000\(10_000 + task)"
                    let mentioned = try await pool.read { ledger in try ledger.events(mentioning: otid).count }
                    #expect(mentioned == perTask)
                    return mine
                }
            }
            var all: [(uuid: String, position: Int64)] = []
            for try await mine in group { all.append(contentsOf: mine) }
            return all
        }
        let total = tasks * perTask
        #expect(results.count == total)
        #expect(results.map(\.position).sorted() == Array(1...Int64(total)))
        #expect(Set(results.map(\.uuid)).count == total)
        #expect(pool.headPosition == Int64(total))
        let statistics = pool.statistics
        #expect(statistics.appendCalls == total)
        #expect(statistics.messages == total)
        #expect(statistics.commits < total, "concurrent appends were group-committed: \(statistics)")
        #expect(statistics.failedCommits == 0)
        let (count, chain) = try await pool.read { ledger in (try ledger.store.eventCount(), try ledger.store.verifyChain(progress: nil)) }
        #expect(count == Int64(total))
        #expect(chain.isIntact && chain.eventsChecked == Int64(total), "\(chain)")
        for (uuid, position) in results.prefix(8) {
            let found = try await pool.read { ledger in try ledger.store.event(id: uuid)?.position }
            #expect(found == position)
        }
        await pool.close()
        let verify = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(verify.exitCode == 0, "\(verify)")
    }

    @Test("calls queued behind a busy writer go into one group commit; a bad message is quarantined, its batch-mates appended")
    func groupCommitQuarantinesPerMessage() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let good = try Self.notifications(factory, originalTransactionId: "2000000000000777", count: 6, label: "good")
        let pool = try LedgerPool.open(path: test.path, readers: 2)
        let gate = OneShot<Void>()
        let holding = await Self.holdWriter(pool, until: gate)
        let bad = Data(#"{"signedPayload":"not.a.jws"}"#.utf8)
        let bodies: [(label: String, body: Data)] = good.prefix(3).map { ($0.uuid, $0.body) } + [("bad", bad)]
            + good.suffix(3).map { ($0.uuid, $0.body) }
        let calls = bodies.map { item in
            Task { try await pool.append(notificationBody: item.body, source: "webhook:\(item.label)") }
        }
        #expect(await Self.eventually { pool.queuedWrites == bodies.count }, "every append queued behind the held writer")
        let before = pool.statistics
        gate.set(())
        try await holding.value
        var outcomes: [String: MessageOutcome] = [:]
        for (item, call) in zip(bodies, calls) { outcomes[item.label] = try await call.value }
        let after = pool.statistics
        #expect(after.commits - before.commits == 1, "one transaction for all seven: \(after)")
        #expect(after.largestCommitCalls == bodies.count)
        guard case .quarantined(_, let rejection) = outcomes["bad"] else {
            Issue.record("bad message: \(String(describing: outcomes["bad"]))")
            return
        }
        #expect(!rejection.reason.isEmpty)
        let positions = good.compactMap { message -> Int64? in
            guard case .appended(let positions, _) = outcomes[message.uuid] else { return nil }
            return positions.first
        }
        #expect(positions.sorted() == Array(1...6))
        let quarantined = try await pool.read { ledger in try ledger.store.quarantine(state: nil, limit: 10) }
        #expect(quarantined.count == 1)
        #expect(quarantined.first?.raw == bad)
        await pool.close()
    }

    @Test("append of several messages: outcomes in order, a duplicate within the batch reported as one")
    func appendSeveral() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let messages = try Self.notifications(factory, originalTransactionId: "2000000000000888", count: 3, label: "many")
        let pool = try LedgerPool.open(path: test.path, readers: 1)
        let inbound = messages.map { InboundMessage(raw: $0.body, source: "batch", origin: .file) } + [InboundMessage(raw: messages[0].body, source: "again", origin: .file)]
        let outcomes = try await pool.append(inbound)
        #expect(outcomes.count == 4)
        #expect(outcomes[0] == .appended(positions: [1], duplicatesCarried: 0))
        #expect(outcomes[1] == .appended(positions: [2], duplicatesCarried: 0))
        #expect(outcomes[2] == .appended(positions: [3], duplicatesCarried: 0))
        #expect(outcomes[3] == .duplicate(existingPosition: 1))
        let again = try await pool.append(notificationBody: messages[1].body, source: "retry")
        #expect(again == .duplicate(existingPosition: 2))
        #expect(try await pool.append([]) == [])
        await pool.close()
    }

    @Test("appendReceipts names each message's event: the one appended, the one a duplicate matches, none for a quarantined one")
    func appendReceipts() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let messages = try Self.notifications(factory, originalTransactionId: "2000000000000777", count: 2, label: "receipt")
        let pool = try LedgerPool.open(path: test.path, readers: 1)
        let receipts = try await pool.appendReceipts([
            InboundMessage(raw: messages[0].body, source: "r", origin: .file), InboundMessage(raw: Data("{not json".utf8), source: "r", origin: .file),
            InboundMessage(raw: messages[1].body, source: "r", origin: .file), InboundMessage(raw: messages[0].body, source: "r", origin: .file),
        ])
        #expect(receipts.map(\.eventId) == [messages[0].uuid, nil, messages[1].uuid, messages[0].uuid])
        #expect(receipts[0].outcome == .appended(positions: [1], duplicatesCarried: 0))
        #expect(receipts[3].outcome == .duplicate(existingPosition: 1))
        guard case .quarantined = receipts[1].outcome else { Issue.record("\(receipts[1].outcome)"); return }
        // The ids are the stored events' ids.
        let stored = try await pool.read { ledger in try [1, 2].map { try ledger.store.event(at: $0)?.eventId } }
        #expect(stored == [messages[0].uuid, messages[1].uuid])
        await pool.close()
    }

    @Test("close() completes the work in flight, then refuses new work")
    func closeDrains() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let messages = try Self.notifications(factory, originalTransactionId: "2000000000000999", count: 10, label: "drain")
        let pool = try LedgerPool.open(path: test.path, readers: 2)
        let gate = OneShot<Void>()
        let holding = await Self.holdWriter(pool, until: gate)
        let appends = messages.map { message in Task { try await pool.append(notificationBody: message.body, source: "drain") } }
        // Appends reach the writer's queue once verified: the write is queued after all of them.
        #expect(await Self.eventually { pool.queuedWrites == messages.count })
        let write = Task { try await pool.write { ledger in try ledger.store.eventCount() } }
        #expect(await Self.eventually { pool.queuedWrites == messages.count + 1 })
        let closing = Task { await pool.close() }
        #expect(await Self.eventually { pool.isClosed })
        await #expect(throws: LedgerPoolError.closed) { try await pool.append(notificationBody: messages[0].body, source: "late") }
        await #expect(throws: LedgerPoolError.closed) { try await pool.read { _ in 1 } }
        gate.set(())
        try await holding.value
        var positions: [Int64] = []
        for append in appends {
            guard case .appended(let appended, _) = try await append.value else { Issue.record("not appended"); continue }
            positions.append(contentsOf: appended)
        }
        #expect(positions.sorted() == Array(1...10))
        #expect(try await write.value == 10, "the exclusive write queued after the appends ran after their commit")
        await closing.value
        await pool.close()   // again: returns at once
        #expect(try test.freshStore().eventCount() == 10)
    }

    @Test("waitForHead wakes on this pool's append, on another connection's append (re-check), and times out")
    func waitForHead() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let messages = try Self.notifications(factory, originalTransactionId: "2000000000000555", count: 3, label: "head")
        let pool = try LedgerPool.open(path: test.path, readers: 1, headRecheckInterval: .milliseconds(50))
        #expect(pool.headPosition == 0)

        // Woken by the writer: the wait ends with the new head long before its timeout.
        let waiting = Task { await pool.waitForHead(after: 0, timeout: .seconds(60)) }
        _ = try await pool.append(notificationBody: messages[0].body, source: "webhook")
        let start = MonotonicInstant.now
        #expect(await waiting.value == 1)
        #expect(start.duration(to: .now) < .seconds(30))

        // Already past: returns at once.
        #expect(await pool.waitForHead(after: 0, timeout: .seconds(60)) == 1)

        // Nothing appended: returns the unchanged head after the timeout.
        let timing = MonotonicInstant.now
        #expect(await pool.waitForHead(after: 1, timeout: .milliseconds(150)) == 1)
        #expect(timing.duration(to: .now) >= .milliseconds(150))

        // Another process (here another connection) appends: the re-check of the store's head sees it.
        let other = Task { await pool.waitForHead(after: 1, timeout: .seconds(60)) }
        let otherLedger = try Ledger.open(path: test.path)
        _ = try otherLedger.append(notificationBody: messages[1].body, source: "other-process")
        #expect(await other.value == 2)
        #expect(pool.headPosition == 2)

        // Close resumes a waiter with the head as it is.
        let pending = Task { await pool.waitForHead(after: 2, timeout: .seconds(60)) }
        #expect(await Self.eventually { pool.statistics.commits >= 1 })
        await pool.close()
        #expect(await pending.value == 2)
    }

    @Test("many waiters with different positions: each wakes when the head passes its own")
    func manyWaiters() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let messages = try Self.notifications(factory, originalTransactionId: "2000000000000444", count: 4, label: "waiters")
        let pool = try LedgerPool.open(path: test.path, readers: 1)
        let waiters = (0..<4).map { after in Task { await pool.waitForHead(after: Int64(after), timeout: .seconds(60)) } }
        for message in messages { _ = try await pool.append(notificationBody: message.body, source: "webhook") }
        for (after, waiter) in waiters.enumerated() {
            let head = await waiter.value
            #expect(head > Int64(after) && head <= 4)
        }
        await pool.close()
    }

    @Test("an error thrown by a read or write body reaches its caller only; the pool keeps working")
    func bodyErrors() async throws {
        struct BodyFailed: Error, Equatable {}
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let message = try Self.notifications(factory, originalTransactionId: "2000000000000333", count: 1, label: "errors")[0]
        let pool = try LedgerPool.open(path: test.path, readers: 1)
        await #expect(throws: BodyFailed.self) { try await pool.read { _ -> Int in throw BodyFailed() } }
        await #expect(throws: BodyFailed.self) { try await pool.write { _ -> Int in throw BodyFailed() } }
        #expect(try await pool.append(notificationBody: message.body, source: "after") == .appended(positions: [1], duplicatesCarried: 0))
        #expect(try await pool.read { try $0.store.eventCount() } == 1)
        #expect(try await pool.write { try $0.store.head().position } == 1)
        #expect(pool.statistics.writes == 2)
        await pool.close()
    }

    @Test("blockingRead from 16 threads of their own while appends commit: each read sees one commit whole, at most `readers` run at once, async reads share the connections; refused after close")
    func blockingReads() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let messages = try Self.notifications(factory, originalTransactionId: "2000000000000444", count: 40, label: "blocking")
        let pool = try LedgerPool.open(path: test.path, readers: 3)
        let inReads = Monitor((now: 0, most: 0))
        let stop = OneShot<Void>()
        // Readers on threads of their own, as libmicrohttpd's polling threads call it: each read
        // counts the events twice inside its snapshot; both counts must agree (one commit whole).
        let readers = (0..<16).map { _ in
            Self.onThread { () -> (reads: Int, torn: Int, heads: [Int64]) in
                var reads = 0, torn = 0
                var heads: [Int64] = []
                while stop.current == nil || reads == 0 {
                    let (first, second, head) = try! pool.blockingRead { ledger -> (Int64, Int64, Int64) in
                        inReads.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                        defer { inReads.withLock { $0.now -= 1 } }
                        let first = try ledger.store.eventCount()
                        let head = try ledger.store.head().position
                        return (first, try ledger.store.eventCount(), head)
                    }
                    reads += 1
                    if first != second || first != head { torn += 1 }
                    heads.append(head)
                }
                return (reads, torn, heads)
            }
        }
        for message in messages { _ = try await pool.append(notificationBody: message.body, source: "blocking") }
        let asyncCount = try await pool.read { try $0.store.eventCount() }
        stop.set(())
        let results = readers.map { $0.wait() }
        #expect(asyncCount == 40)
        #expect(results.allSatisfy { $0.reads > 0 })
        #expect(results.map(\.torn).reduce(0, +) == 0, "a read saw two different commits")
        #expect(results.allSatisfy { $0.heads == $0.heads.sorted() }, "a thread's later read saw an older commit")
        let most = inReads.withLock { $0.most }
        #expect(most >= 1 && most <= 3, "at most one read per connection at once (\(most))")
        #expect(try pool.blockingRead { try $0.store.eventCount() } == 40)
        await pool.close()
        #expect(throws: LedgerPoolError.closed) { try pool.blockingRead { try $0.store.eventCount() } }
    }

    /// Runs `body` on a thread of its own (not Swift's cooperative pool); its result once it returned.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> OneShot<T> {
        let result = OneShot<T>()
        Thread { result.set(body()) }.start()
        return result
    }

    @Test("opening a missing ledger fails with the store's error, and leaves no threads waiting")
    func openMissing() throws {
        let directory = try TemporaryDirectory(label: "pool-missing")
        #expect(throws: (any Error).self) { try LedgerPool.open(path: directory.path("absent.sqlite")) }
    }

    /// The README's embedding example: the pool captured by a `@Sendable` route closure (this
    /// would not compile with a `Ledger`, which is not `Sendable`).
    @Test("a LedgerPool can be captured in a @Sendable closure (the README's example)")
    func sendableRouteClosure() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let body = try Self.notifications(factory, originalTransactionId: "2000000000000001", count: 1, label: "route")[0].body
        let pool = try LedgerPool.open(path: test.path, readers: 2)

        let webhook: @Sendable (Data) async throws -> Int = { requestBody in
            switch try await pool.append(notificationBody: requestBody, source: "webhook") {
            case .appended, .duplicate: return 200                  // durable: safe to acknowledge
            case .quarantined: return 200                           // kept for review
            }
        }
        // "Does this member have access?": the README's read, off the cooperative threads.
        let hasAccess: @Sendable (String, String) async throws -> Bool = { group, member in
            try await pool.read { ledger in
                try ledger.groupState(group, asOf: PayloadFactory.defaultSignedDate).members
                    .contains { $0.hasAccess && ($0.memberRef == member || $0.appTransactionId == member) }
            }
        }
        #expect(try await Task.detached { try await webhook(body) }.value == 200)
        #expect(try await webhook(body) == 200)
        // The purchaser's own seat (its app transaction id) has access; a stranger has none.
        #expect(try await hasAccess("2000000000000001", PayloadFactory.defaultAppTransactionId))
        #expect(try await !hasAccess("2000000000000001", "app-user-nobody"))
        #expect(await pool.waitForHead(after: 0, timeout: .seconds(25)) == 1)
        // The README's blocking read, from a thread of its own: the same answer as the async read.
        let paidSeats = try await pool.read { try $0.groupState("2000000000000001", asOf: PayloadFactory.defaultSignedDate).seats.total }
        #expect(paidSeats != nil)
        #expect(Self.onThread {
            try? pool.blockingRead { ledger in try ledger.groupState("2000000000000001", asOf: PayloadFactory.defaultSignedDate).seats.total }
        }.wait() == paidSeats)
        await pool.close()
    }
}
