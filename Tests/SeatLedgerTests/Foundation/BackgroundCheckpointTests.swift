import AppStoreModels
@testable import EventStore
import Foundation
import LedgerEvents
import LedgerStorage
import Testing

/// `withBackgroundCheckpoints`: the write-ahead log is copied into the database file by a thread
/// of its own while the writer keeps appending, and SQLite's own checkpoint is back afterwards.
@Suite("Background WAL checkpoints")
struct BackgroundCheckpointTests {
    /// An unsigned API-response event with `padding` bytes of raw body (the store does not verify).
    static func event(_ n: Int, padding: Int) -> NewEvent {
        let pad = String(repeating: "p", count: padding)
        let decoded: JSONValue = ["apiResponse": ["endpoint": "getTransactionInfo", "status": 200, "n": .int(Int64(n))]]
        return NewEvent(eventId: "wal-\(n)", kind: .apiResponse, type: "getTransactionInfo", subtype: nil, status: 200,
                        occurredAt: 1_700_000_000_000 + Int64(n), raw: Data(#"{"n":\#(n),"pad":"\#(pad)"}"#.utf8),
                        decoded: decoded, identifiers: [EventIdentifier(.transactionId, "w\(n)")],
                        verification: [], source: "wal-test:\(n)", origin: .live)
    }

    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Waits up to 10 s for the database file (not the log) to reach `bytes`.
    static func waitForFile(_ path: String, toReach bytes: Int) -> Int {
        let deadline = Date().addingTimeInterval(10)
        while size(path) < bytes && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return size(path)
    }

    /// Appends `count` events of `padding` bytes from `start`, `perBatch` per transaction.
    static func append(_ store: EventStore, from start: Int, count: Int, padding: Int, perBatch: Int) throws {
        for batch in stride(from: start, to: start + count, by: perBatch) {
            _ = try store.commit(events: (batch..<min(batch + perBatch, start + count)).map { event($0, padding: padding) })
        }
    }

    @Test("the thread checkpoints, the writer does not (below the hard limit), and the pages reach the file", .timeLimit(.minutes(1)))
    func threadCheckpoints() throws {
        let dir = try TemporaryDirectory(label: "wal")
        let path = dir.path("ledger.sqlite")
        let store = try dir.bareStore("ledger.sqlite")
        let start = Self.size(path)
        let counts = try store.withBackgroundCheckpoints(thresholdFrames: 10, hardLimitFrames: 1_000_000) { checkpointer in
            let checkpointer = try #require(checkpointer)
            // 100 batches of 5 events of ~4 KB: about 2 frames each, past 10 frames every few batches.
            try Self.append(store, from: 0, count: 500, padding: 4_000, perBatch: 5)
            #expect(Self.waitForFile(path, toReach: start + 1_000_000) >= start + 1_000_000,
                    "the log was not copied into the database file during the run")
            return checkpointer.statistics
        }
        #expect(counts.background > 0)
        #expect(counts.writer == 0)
        #expect(store.backgroundCheckpointer == nil)
        // Outside, SQLite's automatic checkpoint (every 1,000 frames) is back on the writer.
        let afterRun = Self.size(path)
        try Self.append(store, from: 500, count: 1_200, padding: 16_000, perBatch: 50)
        #expect(Self.waitForFile(path, toReach: afterRun + 10_000_000) >= afterRun + 10_000_000)
        #expect(try store.eventCount() == 1_700)
        #expect(try store.verifyChain().isIntact)
    }

    @Test("under continuous appends the writer restarts the log at the hard limit: it stays bounded", .timeLimit(.minutes(1)))
    func logStaysBounded() throws {
        let dir = try TemporaryDirectory(label: "wal-bound")
        let store = try dir.bareStore("ledger.sqlite")
        // The thread is never asked (threshold out of reach): only the writer's own checkpoint at
        // the hard limit can copy the log and let it restart.
        let counts = try store.withBackgroundCheckpoints(thresholdFrames: 1_000_000, hardLimitFrames: 100) { checkpointer in
            let checkpointer = try #require(checkpointer)
            // 60 batches of 20 events of ~16 KB: about 22 frames each, 1,300 frames in all.
            try Self.append(store, from: 0, count: 1_200, padding: 16_000, perBatch: 20)
            return checkpointer.statistics
        }
        #expect(counts.writer > 0)
        #expect(counts.background == 0)
        // The limit plus the batch that crossed it (and one more whose commit raced the restart).
        #expect(counts.largestLog <= 100 + 2 * 25, "the log grew to \(counts.largestLog) frames")
        #expect(try store.eventCount() == 1_200)
        #expect(try store.verifyChain().isIntact)
    }

    @Test("a throw from the body still stops the checkpointer; read-only and nested calls run none")
    func lifecycle() throws {
        let dir = try TemporaryDirectory(label: "wal-life")
        let path = dir.path("ledger.sqlite")
        let store = try dir.bareStore("ledger.sqlite")
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.withBackgroundCheckpoints { throw Stop() }
        }
        #expect(store.backgroundCheckpointer == nil)
        try store.withBackgroundCheckpoints(thresholdFrames: 10, hardLimitFrames: 100) { outer in
            #expect(outer != nil)
            try store.withBackgroundCheckpoints(thresholdFrames: 10, hardLimitFrames: 100) { inner in #expect(inner == nil) }
            // The outer one is still installed after the nested call.
            #expect(store.backgroundCheckpointer != nil)
        }
        let reader = try EventStore.open(at: path, readOnly: true)
        try reader.withBackgroundCheckpoints(thresholdFrames: 10, hardLimitFrames: 100) { checkpointer in #expect(checkpointer == nil) }
    }

    @Test("a reader holding an old snapshot only defers the checkpoint: appends go on, nothing is lost", .timeLimit(.minutes(1)))
    func readerDefersCheckpoint() throws {
        let dir = try TemporaryDirectory(label: "wal-reader")
        let path = dir.path("ledger.sqlite")
        let store = try dir.bareStore("ledger.sqlite")
        try Self.append(store, from: 0, count: 10, padding: 16_000, perBatch: 50)
        let reader = try EventStore.open(at: path, readOnly: true)
        try store.withBackgroundCheckpoints {
            try reader.read {
                #expect(try reader.eventCount() == 10)
                try Self.append(store, from: 10, count: 1_200, padding: 16_000, perBatch: 50)
                // The reader's snapshot still sees 10 events: the checkpoint must not overwrite its pages.
                #expect(try reader.eventCount() == 10)
            }
        }
        #expect(try reader.eventCount() == 1_210)
        #expect(try store.verifyChain().isIntact)
    }
}
