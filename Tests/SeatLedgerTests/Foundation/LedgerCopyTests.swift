import AppStoreModels
import EventStore
import Foundation
import GroupSimulator
import LedgerEvents
import LedgerStorage
import ProjectionTestSupport
@testable import SeatLedger
import Testing

/// `seatledger copy`: the chain carries over, an interrupted copy resumes, and a broken source
/// or a diverging destination is refused without writing anything.
@Suite("Copying a ledger between stores")
struct LedgerCopyTests {
    /// A ledger with two groups: a purchase and a renewal each (4 events).
    static func sourceLedger() throws -> TestLedger {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        for (index, otid) in ["2000000000000101", "2000000000000202"].enumerated() {
            try test.append(line: factory.notification(
                uuid: "copy-buy-\(index)", transaction: factory.transaction(originalTransactionId: otid),
                renewal: factory.renewal(originalTransactionId: otid)))
            try test.append(line: factory.notification(
                type: "DID_RENEW", uuid: "copy-renew-\(index)", signedDate: PayloadFactory.defaultSignedDate + 30 * PayloadFactory.day,
                transaction: factory.transaction(originalTransactionId: otid, transactionId: "\(otid)9",
                                                 purchaseDate: PayloadFactory.defaultSignedDate + 29 * PayloadFactory.day,
                                                 expiresDate: PayloadFactory.defaultSignedDate + 59 * PayloadFactory.day,
                                                 signedDate: PayloadFactory.defaultSignedDate + 30 * PayloadFactory.day),
                renewal: factory.renewal(originalTransactionId: otid)))
        }
        #expect(try test.eventCount() == 4)
        return test
    }

    static func records(_ store: any LedgerStore) throws -> [StoredEventRecord] {
        var all: [StoredEventRecord] = []
        try store.forEachStoredRecord(from: 1, batchSize: 3) { all += $0 }
        return all
    }

    @Test("copy progress: done of total after each batch (library), and a line with the share, the rate and an ETA (CLI --progress)")
    func copyProgress() throws {
        let source = try Self.sourceLedger()
        var copy = LedgerCopy(source: source.store)
        copy.batchSize = 3
        var seen: [[Int64]] = []
        _ = try copy.run(to: StoreLocation(source.directory.path("library.sqlite")), copied: { done, total in seen.append([done, total]) })
        #expect(seen == [[3, 4], [4, 4]])

        let result = try CLI.run(["copy", "--from", source.path, "--to", source.directory.path("cli.sqlite"), "--batch", "3", "--progress"])
        #expect(result.exitCode == 0, "\(result)")
        // The first batch is always shown (later ones at most every half second).
        #expect(result.stderr.contains("copy: 3 of 4 events (75%) · "), "\(result)")
        #expect(result.stderr.contains("/s · ETA "), "\(result)")
    }

    @Test("a copy to a new file keeps every position, recording time, raw byte and hash; projections match (CLI)")
    func copyToNewFile() throws {
        let source = try Self.sourceLedger()
        let destination = source.directory.path("copy.sqlite")
        let result = try CLI.run(["copy", "--from", source.path, "--to", destination, "--batch", "3", "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let json = try result.json()
        #expect(json["copied"] == 4)
        #expect(json["alreadyPresent"] == 0)
        #expect(json["createdDestination"] == true)
        #expect(json["groups"] == 2)

        let copied = try EventStore.open(at: destination, readOnly: true)
        let mine = try Self.records(source.store)
        let theirs = try Self.records(copied)
        #expect(mine.count == 4 && theirs.count == 4)
        for (a, b) in zip(mine, theirs) {
            #expect(a.event.position == b.event.position && a.event.eventId == b.event.eventId)
            #expect(a.event.recordedAt == b.event.recordedAt && a.event.raw == b.event.raw)
            #expect(a.event.hash == b.event.hash && a.previousHash == b.previousHash)
            #expect(a.decodedText == b.decodedText && Set(a.identifiers) == Set(b.identifiers))
        }
        #expect(try copied.configuration() == source.store.configuration())
        #expect(try copied.trustRoots().map(\.fingerprint) == source.store.trustRoots().map(\.fingerprint))
        #expect(try copied.foldedGroups().map(\.state) == source.store.foldedGroups().map(\.state))

        let head = try source.head().hash.map { String(format: "%02x", $0) }.joined()
        #expect(json["headHash"]?.stringValue == head)
        let verify = try CLI.run(["verify", "--db", destination, "--expect-head", head, "--json"])
        #expect(verify.exitCode == 0, "\(verify)")
        let moment = ["--as-of", "2030-01-01T00:00:00Z", "--known-at", "2030-01-01T00:00:00Z", "--json"]
        let shownCopy = try CLI.run(["group", "show", "2000000000000202", "--db", destination] + moment)
        #expect(shownCopy.exitCode == 0 && shownCopy.stdout.contains("2000000000000202"))
        #expect(shownCopy.stdout == (try CLI.run(["group", "show", "2000000000000202", "--db", source.path] + moment)).stdout)
    }

    @Test("an interrupted copy resumes after what the destination holds; a second run copies nothing")
    func resumes() throws {
        let source = try Self.sourceLedger()
        let location = StoreLocation(source.directory.path("resume.sqlite"))
        let destination = try location.create(configuration: source.store.configuration(), roots: source.store.trustRoots())
        // The first transaction of an earlier copy made it; the rest did not.
        try destination.appendVerbatim(Array(try Self.records(source.store).prefix(2)))
        #expect(try destination.head().position == 2)

        var copy = LedgerCopy(source: source.store)
        copy.batchSize = 1
        let report = try copy.run(to: location)
        #expect(report.alreadyPresent == 2)
        #expect(report.copied == 2)
        #expect(!report.createdDestination)
        #expect(try destination.head().hash == source.head().hash)

        let again = try copy.run(to: location)
        #expect(again.copied == 0 && again.alreadyPresent == 4)
    }

    @Test("a source with a broken chain is not copied (exit 1, no destination created)")
    func brokenSource() throws {
        let source = try Self.sourceLedger()
        let sql = try RawSQLite(path: source.path)
        try sql.execute("DROP TRIGGER events_append_only_update; DROP TRIGGER events_append_only_delete;")
        #expect(try sql.execute("UPDATE events SET source = 'elsewhere' WHERE position = 3", []) == 1)
        sql.close()
        let destination = source.directory.path("never.sqlite")
        let result = try CLI.run(["copy", "--from", source.path, "--to", destination, "--json"])
        #expect(result.exitCode == 1, "\(result)")
        #expect(try result.json()["problem"]?.stringValue?.contains("broken hash chain at position 3") == true)
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    @Test("a destination holding other events is refused (exit 1) and left as it was")
    func divergedDestination() throws {
        let source = try Self.sourceLedger()
        let other = try TestLedger()
        try other.append(line: try PayloadFactory().notification(uuid: "someone-else"))
        let before = try other.head()
        let result = try CLI.run(["copy", "--from", source.path, "--to", other.path, "--json"])
        #expect(result.exitCode == 1, "\(result)")
        #expect(try result.json()["problem"]?.stringValue?.contains("diverges from the source at position 1") == true)
        #expect(try other.freshStore().head().hash == before.hash)
        #expect(try other.freshStore().eventCount() == 1)
    }

    @Test("a destination that shares the source's first events names the first position where they part, not its head")
    func divergedAfterCommonPrefix() throws {
        let source = try Self.sourceLedger()
        let records = try Self.records(source.store)
        try #require(records.count >= 4)
        let other = try TestLedger()
        try other.store.appendVerbatim(Array(records.prefix(2)))
        let factory = try PayloadFactory()
        for uuid in ["other-3", "other-4", "other-5"] { try other.append(line: try factory.notification(uuid: uuid)) }
        #expect(try other.eventCount() == 5)
        let result = try CLI.run(["copy", "--from", source.path, "--to", other.path, "--json"])
        #expect(result.exitCode == 1, "\(result)")
        #expect(try result.json()["problem"]?.stringValue?.contains("diverges from the source at position 3") == true, "\(result)")
        #expect(try LedgerCopy.firstDifference(source.store, other.store, through: 5) == 3)
        #expect(try LedgerCopy.firstDifference(source.store, other.store, through: 3) == 3)
        // Longer than the source and parting inside it: still the first differing position.
        for uuid in ["other-6", "other-7"] { try other.append(line: try factory.notification(uuid: uuid)) }
        let longer = try CLI.run(["copy", "--from", source.path, "--to", other.path, "--json"])
        #expect(try longer.json()["problem"]?.stringValue?.contains("diverges from the source at position 3") == true, "\(longer)")
    }

    @Test("a destination that holds the whole source and more is reported as ahead, not as diverging past the source's end")
    func destinationAhead() throws {
        let source = try Self.sourceLedger()
        let records = try Self.records(source.store)
        let other = try TestLedger()
        try other.store.appendVerbatim(records)
        let factory = try PayloadFactory()
        for uuid in ["extra-1", "extra-2"] { try other.append(line: try factory.notification(uuid: uuid)) }
        let result = try CLI.run(["copy", "--from", source.path, "--to", other.path, "--json"])
        #expect(result.exitCode == 1, "\(result)")
        #expect(try result.json()["problem"]?.stringValue?.contains("holds the source's \(records.count) events and 2 more after them") == true,
                "\(result)")
        #expect(try other.freshStore().eventCount() == Int64(records.count) + 2)
    }

    @Test("appendVerbatim refuses a record that does not hash to its contents or skips a position; nothing of the batch is kept")
    func verbatimChecks() throws {
        let source = try Self.sourceLedger()
        let records = try Self.records(source.store)
        let destination = try StoreLocation(source.directory.path("checks.sqlite"))
            .create(configuration: source.store.configuration(), roots: [])
        let original = records[1].event
        let forged = StoredEventRecord(
            event: LedgerEvent(position: original.position, eventId: original.eventId, kind: original.kind, type: original.type,
                               subtype: original.subtype, status: original.status, occurredAt: original.occurredAt + 1,
                               recordedAt: original.recordedAt, source: original.source, origin: original.origin,
                               raw: original.raw, decoded: .null, verification: [], hash: original.hash),
            previousHash: records[1].previousHash, decodedText: records[1].decodedText,
            verificationText: records[1].verificationText, decoderVersion: records[1].decoderVersion,
            identifiers: records[1].identifiers, facts: nil)
        let hashError = #expect(throws: ChainContinuityError.self) { try destination.appendVerbatim([records[0], forged]) }
        #expect(hashError?.position == 2 && hashError?.problem.contains("does not match its contents") == true)
        #expect(try destination.head().position == 0)

        let gapError = #expect(throws: ChainContinuityError.self) { try destination.appendVerbatim([records[0], records[2]]) }
        #expect(gapError?.position == 3)
        #expect(try destination.head().position == 0)

        try destination.appendVerbatim(Array(records.prefix(2)))
        #expect(try destination.head().hash == records[1].event.hash)
        #expect(try destination.verifyChain().isIntact)
    }

    @Test("SIGINT during a copy stops between batches: exit 4 with a message, the destination warns it is unfinished; a re-run completes it",
          .timeLimit(.minutes(2)))
    func interruptedCopy() throws {
        let source = try TestLedger()
        let stream = StreamGenerator.stream(seed: 5, groups: 300)
        _ = try source.store.commit(events: stream.events.map { ScenarioBuilder.newEvent($0) })
        let total = try source.eventCount()
        let destination = source.directory.path("copy.sqlite")
        let child = try CLI.start(["copy", "--from", source.path, "--to", destination, "--batch", "1"])
        defer { if child.isRunning { child.kill() } }
        let deadline = Date().addingTimeInterval(60)
        // Signal once some events are in (a read-only look at the destination).
        while (try? EventStore.open(at: destination, readOnly: true).eventCount()).map({ $0 < 20 }) ?? true {
            try #require(child.isRunning && Date() < deadline, "the copy ended before it could be interrupted")
            Thread.sleep(forTimeInterval: 0.01)
        }
        child.kill(SIGINT)
        let stopped = try child.wait(timeout: 30)
        #expect(!stopped.terminatedBySignal && stopped.exitCode == 4, "\(stopped)")
        #expect(stopped.stdout.contains("Interrupted after copying"), "\(stopped)")
        let partial = try EventStore.open(at: destination, readOnly: true).eventCount()
        #expect(partial > 0 && partial < total, "\(partial) of \(total)")
        let read = try CLI.run(["groups", "--db", destination])
        #expect(read.exitCode == 0, "\(read)")
        #expect(read.stderr.contains("this ledger is an unfinished copy of"), "\(read)")
        // Not a source to copy from: the copy would look finished.
        let onward = try CLI.run(["copy", "--from", destination, "--to", source.directory.path("onward.sqlite")])
        #expect(onward.exitCode == 1 && onward.stdout.contains("is an unfinished copy of"), "\(onward)")
        #expect(!FileManager.default.fileExists(atPath: source.directory.path("onward.sqlite")))
        // Not a ledger to write to either: an append would take a position the copy has yet to
        // fill, and the copy could never resume.
        let line = try PayloadFactory().notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "during-copy",
                                                     transaction: PayloadFactory().transaction())
        let input = try source.directory.writeLines([line], to: "during-copy.ndjson")
        let write = try CLI.run(["ingest", "--db", destination, input.path, "--json"])
        #expect(write.exitCode == 2, "\(write)")
        #expect(try write.json()["error"]?["message"]?.stringValue?.contains("is an unfinished copy of") == true, "\(write)")
        #expect(try EventStore.open(at: destination, readOnly: true).eventCount() == partial, "nothing appended")
        let resumed = try CLI.run(["copy", "--from", source.path, "--to", destination, "--json"])
        #expect(resumed.exitCode == 0, "\(resumed)")
        #expect(try resumed.json()["alreadyPresent"]?.int64Value == partial)
        #expect(try EventStore.open(at: destination, readOnly: true).eventCount() == total)
        let after = try CLI.run(["groups", "--db", destination])
        #expect(!after.stderr.contains("unfinished"), "\(after)")
    }
}
