import AppStoreModels
import Foundation
import LedgerStorage
import SeatLedger
import Testing

/// Issue #23 item 6: a server keeps a head anchor current (`serve --anchor`), so a truncated
/// tail is caught without anyone remembering a head.
@Suite("LedgerPool.keepAnchor")
struct HeadAnchorKeeperTests {
    @Test("the keeper writes the head after each commit, and refuses a ledger that no longer holds the anchored head")
    func keeperFollowsCommits() async throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let bodies = try LedgerPoolTests.notifications(factory, originalTransactionId: "2000000000000555", count: 4, label: "anchor")
        let anchor = test.directory.path("serve.anchor")
        let pool = try LedgerPool.open(path: test.path, readers: 2)
        let (writes, continuation) = AsyncStream<HeadAnchor>.makeStream()
        let keeper = Task {
            try await pool.keepAnchor(anchor, onWrite: { continuation.yield($0) }, onError: { Issue.record("anchor write failed: \($0)") })
        }
        var iterator = writes.makeAsyncIterator()
        #expect(await iterator.next()?.position == 0, "the empty ledger's head first")
        for (index, item) in bodies.enumerated() {
            _ = try await pool.append(notificationBody: item.body, source: "webhook")
            var seen = await iterator.next()
            while let current = seen, current.position < Int64(index + 1) { seen = await iterator.next() }
            #expect(seen?.position == Int64(index + 1))
        }
        keeper.cancel()
        await pool.close()
        _ = try? await keeper.value
        let head = try HeadAnchor(headOf: test.freshStore())
        #expect(try HeadAnchor.read(anchor) == head)

        // Cut the tail: a new keeper refuses to start on it.
        let raw = try RawSQLite(path: test.path)
        try raw.execute("DROP TRIGGER events_append_only_delete")
        for table in ["event_keys", "event_decoded", "event_facts"] { try raw.execute("DELETE FROM \(table) WHERE position = 4") }
        try raw.execute("DELETE FROM events WHERE position = 4")
        raw.close()
        let reopened = try LedgerPool.open(path: test.path, readers: 1)
        await #expect(throws: HeadAnchorError.self) { try await reopened.keepAnchor(anchor, onError: { _ in }) }
        await reopened.close()
    }
}
