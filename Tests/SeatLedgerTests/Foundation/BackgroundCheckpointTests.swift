import AppStoreModels
import EventStore
import Foundation
import LedgerEvents
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

    /// Appends `count` events of ~16 KB from `start`, 50 per transaction.
    static func append(_ store: EventStore, from start: Int, count: Int) throws {
        for batch in stride(from: start, to: start + count, by: 50) {
            _ = try store.commit(events: (batch..<min(batch + 50, start + count)).map { event($0, padding: 16_000) })
        }
    }

    /// Waits up to 10 s for the database file (not the log) to reach `bytes`.
    static func waitForFile(_ path: String, toReach bytes: Int) -> Int {
        let deadline = Date().addingTimeInterval(10)
        while size(path) < bytes && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return size(path)
    }

    @Test("appended pages reach the database file while the writer is still inside, and after it too", .timeLimit(.minutes(1)))
    func checkpointsBesideTheWriter() throws {
        let dir = try TemporaryDirectory(label: "wal")
        let path = dir.path("ledger.sqlite")
        let store = try dir.bareStore("ledger.sqlite")
        let start = Self.size(path)
        // 1,200 events of ~16 KB: ~1,300 frames of 16 KiB, past the 1,000-frame threshold.
        try store.withBackgroundCheckpoints {
            try Self.append(store, from: 0, count: 1_200)
            #expect(Self.waitForFile(path, toReach: start + 10_000_000) >= start + 10_000_000,
                    "the log was not copied into the database file during the run")
        }
        // Outside, SQLite's automatic checkpoint (every 1,000 frames) is back on the writer.
        let afterRun = Self.size(path)
        try Self.append(store, from: 1_200, count: 1_200)
        #expect(Self.waitForFile(path, toReach: afterRun + 10_000_000) >= afterRun + 10_000_000)
        #expect(try store.eventCount() == 2_400)
        #expect(try store.verifyChain().isIntact)
    }

    @Test("a reader holding an old snapshot only defers the checkpoint: appends go on, nothing is lost", .timeLimit(.minutes(1)))
    func readerDefersCheckpoint() throws {
        let dir = try TemporaryDirectory(label: "wal-reader")
        let path = dir.path("ledger.sqlite")
        let store = try dir.bareStore("ledger.sqlite")
        try Self.append(store, from: 0, count: 10)
        let reader = try EventStore.open(at: path, readOnly: true)
        try store.withBackgroundCheckpoints {
            try reader.read {
                #expect(try reader.eventCount() == 10)
                try Self.append(store, from: 10, count: 1_200)
                // The reader's snapshot still sees 10 events: the checkpoint must not overwrite its pages.
                #expect(try reader.eventCount() == 10)
            }
        }
        #expect(try reader.eventCount() == 1_210)
        #expect(try store.verifyChain().isIntact)
    }
}
