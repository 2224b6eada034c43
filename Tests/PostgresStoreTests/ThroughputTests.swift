import Foundation
import LedgerEvents
import LedgerStorage
import LedgerStoreConformance
import PostgresStore
import Testing

/// Append throughput of both engines on the same small events (measured, printed, not asserted
/// beyond sanity: the numbers depend on the machine and the build configuration).
@Suite("Append throughput", .serialized)
struct ThroughputTests {
    @Test("10,000 small events in batches of 1,000", arguments: Backend.allCases)
    func appendThroughput(_ backend: Backend) throws {
        let fixture = try StoreFixture.make(backend)
        let store = fixture.store
        let batches = (0..<10).map { batch in (0..<1_000).map { TestData.apiEvent(batch * 1_000 + $0) } }
        let started = Date()
        for batch in batches {
            let result = try store.commit(events: batch)
            #expect(result.appended.count == 1_000)
        }
        let seconds = Date().timeIntervalSince(started)
        #expect(try store.head().position == 10_000)

        // The same again with facts stored in the append transaction, as the projection maintainer does.
        let more = (10..<20).map { batch in (0..<1_000).map { TestData.apiEvent(batch * 1_000 + $0) } }
        let withFactsStarted = Date()
        for batch in more {
            _ = try store.write {
                let result = try store.append(events: batch)
                let appended = result.appended
                for event in appended { try store.storeFacts(position: event.position, facts: Data(repeating: 7, count: 120)) }
                return result
            }
        }
        let withFactsSeconds = Date().timeIntervalSince(withFactsStarted)
        let verifyStarted = Date()
        #expect(try store.verifyChain().eventsChecked == 20_000)
        let verifySeconds = Date().timeIntervalSince(verifyStarted)
        let bytes = batches[0][0].raw.count
        print("""
            THROUGHPUT \(backend.rawValue): 10,000 events (\(bytes)-byte raw) in batches of 1,000: \
            \(String(format: "%.3f", seconds)) s = \(Int(10_000 / seconds)) events/s; \
            with facts: \(String(format: "%.3f", withFactsSeconds)) s = \(Int(10_000 / withFactsSeconds)) events/s; \
            verifyChain of 20,000: \(String(format: "%.3f", verifySeconds)) s
            """)
    }
}
