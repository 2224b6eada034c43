import Foundation
import LedgerEvents
import LedgerStorage
import LedgerStoreConformance
import PostgresStore
import Testing

/// The copy path (`forEachStoredRecord` → `appendVerbatim`, what `seatledger copy` runs) between
/// every pair of engines: the chain carries over byte for byte, the destination keeps appending
/// after it, and a record that does not continue the chain is refused without writing anything.
@Suite("Copying a ledger between engines")
struct StoreCopyTests {
    static func records(_ store: any LedgerStore, from position: Int64 = 1, batchSize: Int = 7) throws -> [StoredEventRecord] {
        var all: [StoredEventRecord] = []
        try store.forEachStoredRecord(from: position, batchSize: batchSize) { all += $0 }
        return all
    }

    static func describe(_ record: StoredEventRecord) -> String {
        [record.event.comparable, record.previousHash.base64EncodedString(), record.decodedText ?? "-",
         record.verificationText ?? "-", record.decoderVersion.map(String.init) ?? "-",
         record.identifiers.map(\.description).joined(separator: ","), record.facts?.base64EncodedString() ?? "-"].joined(separator: "|")
    }

    @Test("copy from one engine to another: identical records, chain and head; appending continues; forged records refused",
          arguments: Backend.allCases, Backend.allCases)
    func copy(from sourceBackend: Backend, to destinationBackend: Backend) throws {
        let source = try StoreFixture.make(sourceBackend)
        _ = try source.store.write {
            let result = try source.store.append(events: (1...30).map { $0 % 4 == 0 ? TestData.notification($0) : TestData.apiEvent($0) },
                                    rejections: [TestData.rejection("x")])
            let appended = result.appended
            for event in appended where event.position % 3 != 0 {
                try source.store.storeFacts(position: event.position, facts: Data("facts-\(event.position)".utf8))
            }
            return result
        }
        _ = try source.store.commit(events: [TestData.apiEvent(1), TestData.apiEvent(31)])
        let expected = try Self.records(source.store)
        #expect(expected.count == 31)
        #expect(expected.filter { $0.facts != nil }.count == 20)

        let destination = try StoreFixture.make(destinationBackend)
        try source.store.forEachStoredRecord(from: 1, batchSize: 7) { try destination.store.appendVerbatim($0) }
        let copied = try Self.records(destination.store, batchSize: 5)
        #expect(copied.map(Self.describe) == expected.map(Self.describe))
        #expect(try destination.store.head().position == 31)
        #expect(try destination.store.head().hash == source.store.head().hash)
        #expect(try destination.store.verifyChain() == source.store.verifyChain())
        #expect(try Self.records(destination.store, from: 32).isEmpty, "nothing after the head")
        try destination.store.appendVerbatim([])

        // Forged or misplaced records are refused, and nothing of their batch is written.
        let last = try #require(expected.last)
        let forged = StoredEventRecord(event: LedgerEvent(
            position: 32, eventId: "forged", kind: last.event.kind, type: nil, subtype: nil, status: nil, occurredAt: 1,
            recordedAt: 1, source: "x", origin: .live, raw: Data("x".utf8), decoded: .null, verification: [], hash: last.event.hash),
            previousHash: last.event.hash, decodedText: nil, verificationText: nil, decoderVersion: nil, identifiers: [], facts: nil)
        for (batch, problem) in [([forged], "its hash does not match its contents"),
                                 ([expected[3]], "the destination's next position is 32")] {
            do {
                try destination.store.appendVerbatim(batch)
                Issue.record("appended \(problem)")
            } catch let error as ChainContinuityError {
                #expect(error.problem == problem)
                #expect(error.location == destination.store.location)
            }
        }
        #expect(try destination.store.head().position == 31)
        #expect(try destination.store.eventCount() == 31)

        // The copy continues the log: the next append is position 32, chained to the copied head.
        let next = try destination.store.commit(events: [TestData.apiEvent(32), TestData.apiEvent(5)])
        #expect(next.outcomes == [.appended(position: 32), .duplicate(existingPosition: 5)])
        #expect(try destination.store.verifyChain().isIntact)
        #expect(try destination.store.duplicateCounts(for: ["api-5"]) == ["api-5": 1])
    }
}
