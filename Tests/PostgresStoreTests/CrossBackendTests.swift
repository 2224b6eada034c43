import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import LedgerStoreConformance
import PostgresStore
import Testing

/// Both engines fed the same inputs produce the same ledger, byte for byte.
@Suite("SQLite and PostgreSQL produce identical ledgers")
struct CrossBackendTests {
    /// The same sequence of batches (events, duplicates, rejections, a retry) applied to a store;
    /// returns a transcript of every result and every read, to compare across engines.
    static func run(_ store: any LedgerStore) throws -> [String] {
        var transcript: [String] = []
        func note(_ result: BatchResult) {
            transcript.append("outcomes \(result.outcomes) quarantine \(result.quarantineIds) earlier \(result.earlierQuarantineIds.sorted())")
            transcript += result.appended.map(\.comparable)
        }
        var batches: [[NewEvent]] = []
        for batch in 0..<6 {
            batches.append((0..<40).map { index in
                let n = batch * 40 + index
                return n % 3 == 0 ? TestData.notification(n, originalTransactionId: "ot\(n % 7)")
                    : TestData.apiEvent(n, originalTransactionId: "ot\(n % 7)", payloadBytes: n % 50)
            } + [TestData.apiEvent(batch * 40 - 1)])  // a duplicate of the previous batch's (or a new one at -1)
        }
        for (index, batch) in batches.enumerated() {
            note(try store.commit(events: batch + [batch[index]],
                                  rejections: [TestData.rejection("bad-\(index % 3)"), TestData.rejection("bad-\(index)", code: "bad_form")]))
        }
        note(try store.commitRetry(events: [
            NewEventForRetry(quarantineId: 1, event: TestData.apiEvent(1_000), isPrimary: true),
            NewEventForRetry(quarantineId: 2, event: TestData.apiEvent(3), isPrimary: true),
        ]))
        let head = try store.head()
        transcript.append("head \(head.position) \(head.hash.base64EncodedString())")
        transcript.append("verify \(try store.verifyChain())")
        try store.forEachEvent { transcript.append($0.comparable) }
        transcript += try store.quarantine().map(\.comparable)
        for position in stride(from: Int64(1), through: head.position, by: 17) {
            transcript.append("keys \(position) \(try store.identifiers(at: position))")
        }
        transcript.append("mentions \(try store.positions(mentioning: "ot3"))")
        transcript.append("duplicates \(try store.duplicateCounts(for: (0..<250).map { "api-\($0)" }).sorted { $0.key < $1.key })")
        transcript.append("without facts \(try store.positionsWithoutFacts().count)")
        transcript += try store.eventsForFacts(Array(1...head.position)[...]).map { "\($0.metadata.position) \($0.decodedText)" }
        return transcript
    }

    @Test("the same batches give the same positions, chain hashes, outcomes, quarantine and reads")
    func identicalLedgers() throws {
        let sqlite = try StoreFixture.make(.sqlite)
        let postgres = try StoreFixture.make(.postgres)
        let expected = try Self.run(sqlite.store)
        let actual = try Self.run(postgres.store)
        #expect(expected.count == actual.count)
        #expect(expected.contains { $0.contains(" earlier [") && !$0.contains(" earlier []") },
                "the batches repeat refused bytes of earlier batches")
        for (index, (line, other)) in zip(expected, actual).enumerated() where line != other {
            Issue.record("line \(index) differs:\nSQLite:     \(line.prefix(400))\nPostgreSQL: \(other.prefix(400))")
            break
        }
        #expect(try sqlite.store.head().hash == postgres.store.head().hash, "identical head hashes")
        #expect(try postgres.store.verifyChain().isIntact)
    }
}
