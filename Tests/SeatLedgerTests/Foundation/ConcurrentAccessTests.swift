import AppStoreModels
import EventStore
import Foundation
import SeatLedger
import Testing

/// A long-lived `Ledger` (a server embedding the library) shares the file with other processes
/// (the CLI, another server). Its reads must see their commits and its writes must follow them.
@Suite("Several processes on one ledger")
struct ConcurrentAccessTests {
    @Test("a long-lived Ledger sees events another process appended after its own reads")
    func readsSeeOtherProcessCommits() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: factory.notification(uuid: "mine-1"))
        #expect(try test.eventCount() == 1)          // a read on the long-lived connection
        #expect(try test.store.event(at: 1) != nil)  // and another

        let other = try CLI.run(["ingest", "--db", test.path, "--json"],
                                stdin: Data(try factory.notification(uuid: "theirs-1").utf8))
        #expect(try other.json()["appended"] == 1, "\(other)")

        #expect(try test.eventCount() == 2, "the count must include the other process's commit")
        #expect(try test.store.event(at: 2)?.eventId == "theirs-1")
        #expect(try test.store.event(id: "theirs-1") != nil)
    }

    @Test("a long-lived Ledger appends after another process's commit (no stale head, no busy error)")
    func writesFollowOtherProcessCommits() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: factory.notification(uuid: "mine-1"))
        _ = try test.eventCount()
        _ = try test.store.event(at: 1)

        let other = try CLI.run(["ingest", "--db", test.path, "--json"],
                                stdin: Data(try factory.notification(uuid: "theirs-1").utf8))
        #expect(try other.json()["appended"] == 1, "\(other)")

        let outcome = try test.append(line: factory.notification(uuid: "mine-2"))
        #expect(outcome == .appended(positions: [3], duplicatesCarried: 0))
        let raw = try RawSQLite(path: test.path)
        #expect(try raw.scalarInt("SELECT count(*) FROM events") == 3)
        raw.close()
        let verify = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(verify.exitCode == 0, "\(verify)")
    }
}
