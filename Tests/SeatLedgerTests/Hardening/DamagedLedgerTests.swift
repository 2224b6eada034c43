import AppStoreModels
import EventStore
import Foundation
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

/// Issue #23 item 7: a damaged file is a finding for `verify`; a ledger stamped with newer
/// projection rules is never written by an older build; Markdown headings are escaped.
@Suite("Damaged and newer ledgers, report escaping")
struct DamagedLedgerTests {
    /// Checkpoints everything into the main file, then overwrites 16 KiB in its middle with `byte`.
    static func damageMiddlePage(of path: String, with byte: UInt8) throws {
        let raw = try RawSQLite(path: path)
        try raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        raw.close()
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data(repeating: byte, count: 16_384))
        try handle.close()
    }

    @Test("verify reports a file SQLite finds corrupt as a finding (exit 1), not an error (exit 2)")
    func verifyReportsCorruption() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let lines = try (0..<40).map { try factory.notification(uuid: "c-\($0)") }
        let file = try test.directory.writeLines(lines, to: "in.ndjson")
        #expect(try CLI.run(["ingest", "--db", test.path, file.path]).exitCode == 0)
        #expect(try CLI.run(["verify", "--db", test.path]).exitCode == 0)
        try Self.damageMiddlePage(of: test.path, with: 0xA5)
        let verify = try CLI.run(["verify", "--db", test.path, "--json"])
        #expect(verify.exitCode == 1, "\(verify)")
        #expect(try verify.json()["corrupt"] == true, "\(verify)")
        #expect(try verify.json()["damageMarker"]?.stringValue == test.path + ".damaged", "\(verify)")

        // A writer refuses the damaged file: exit 2, the reason named, nothing appended.
        let more = try test.directory.writeLines([try factory.notification(uuid: "c-late")], to: "more.ndjson")
        let ingest = try CLI.run(["ingest", "--db", test.path, more.path, "--json"])
        #expect(ingest.exitCode == 2, "\(ingest)")
        #expect(try ingest.json()["error"]?["message"]?.stringValue?.contains("the file is damaged") == true, "\(ingest)")
        let retract = try CLI.run(["retract", "1", "--reason", "x", "--db", test.path])
        #expect(retract.exitCode == 2 && retract.stderr.contains("damaged"), "\(retract)")
    }

    @Test("a writer runs quick_check on a small file itself (no verify needed), records the damage and refuses it")
    func writerChecksSmallFiles() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let file = try test.directory.writeLines(try (0..<40).map { try factory.notification(uuid: "w-\($0)") }, to: "in.ndjson")
        #expect(try CLI.run(["ingest", "--db", test.path, file.path]).exitCode == 0)
        try Self.damageMiddlePage(of: test.path, with: 0x5A)
        let more = try test.directory.writeLines([try factory.notification(uuid: "w-late")], to: "more.ndjson")
        let ingest = try CLI.run(["ingest", "--db", test.path, more.path])
        #expect(ingest.exitCode == 2 && ingest.stderr.contains("the file is damaged"), "\(ingest)")
        #expect(FileManager.default.fileExists(atPath: test.path + ".damaged"), "the damage is recorded for larger-file writers too")
    }

    @Test("a damage marker refuses writers whatever the file's size, until it is removed; reads still work")
    func damageMarkerRefusesWriters() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = try test.directory.writeLines([try factory.notification(uuid: "m-1")], to: "in.ndjson")
        try Data("2026-12-02T00:00:00Z database disk image is malformed\n".utf8).write(to: URL(fileURLWithPath: test.path + ".damaged"))
        let refused = try CLI.run(["ingest", "--db", test.path, line.path])
        #expect(refused.exitCode == 2, "\(refused)")
        #expect(refused.stderr.contains("database disk image is malformed") && refused.stderr.contains(".damaged"), "\(refused)")
        #expect(throws: DamagedLedgerError.self) { _ = try LedgerPool.open(path: test.path, readers: 1) }
        #expect(try CLI.run(["groups", "--db", test.path]).exitCode == 0, "reads are not refused")
        try FileManager.default.removeItem(atPath: test.path + ".damaged")
        #expect(try CLI.run(["ingest", "--db", test.path, line.path]).exitCode == 0)
    }

    @Test("a ledger stamped with newer projection rules is refused for writing (ingest, rebuild), still readable")
    func newerRulesRefused() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        try test.append(line: try factory.notification(uuid: "before-upgrade"))
        try test.store.setConfigValue(ProjectionRules.configKey, String(ProjectionRules.version + 1))
        let file = try test.directory.writeLines([try factory.notification(uuid: "after-downgrade")], to: "in.ndjson")
        let ingest = try CLI.run(["ingest", "--db", test.path, file.path])
        #expect(ingest.exitCode == 2, "\(ingest)")
        #expect(ingest.stderr.contains("newer than this build"), "\(ingest.stderr)")
        let rebuild = try CLI.run(["rebuild", "--db", test.path])
        #expect(rebuild.exitCode == 2, "\(rebuild)")
        let store = try test.freshStore()
        #expect(try store.event(id: "after-downgrade") == nil)
        #expect(try store.configValues()[ProjectionRules.configKey] == String(ProjectionRules.version + 1), "never restamped")
        #expect(try CLI.run(["events", "--db", test.path, "--json"]).exitCode == 0)
        // The library refuses too, whichever way the store was opened.
        let ledger = try Ledger.open(store: try EventStore.open(at: test.path))
        #expect(throws: LedgerStoreError.self) { try ledger.ingestBatch([InboundMessage(raw: Data("x".utf8), source: "t", origin: .file)]) }
    }

    @Test("Markdown audit headings escape what they quote")
    func markdownHeadingEscaped() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let (purchase, _) = try TrustBoundaryTests.fullGroup(factory)
        try test.append(line: purchase)
        try test.append(line: factory.apiResponse(
            endpoint: "ClaimSeat", method: "POST", path: "/groups/v1/transactions/\(TrustBoundaryTests.purchaser)/seats",
            requestBody: ["requestIdentifier": "req-x"], body: ["seatClaimId": "aaaaaaaa-0000-4000-8000-00000000abcd"],
            respondedAt: .string(Timestamp.iso8601(PayloadFactory.defaultSignedDate + 60_000)), context: ["memberRef": "<script>x</script>"]))
        let result = try CLI.run(["audit", "member", "<script>x</script>", "--format", "markdown", "--db", test.path])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("# Access audit for &lt;script&gt;x&lt;/script&gt;"), "\(result.stdout.prefix(200))")
        #expect(!result.stdout.contains("<script>"), "\(result)")
    }
}

/// Issue #23 item 6 (in part): a head anchor kept outside the ledger catches a truncated tail.
@Suite("Head anchor")
struct HeadAnchorTests {
    @Test("verify --anchor writes the head, then finds events removed from the end of the log (exit 1)")
    func anchorCatchesTruncation() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let file = try test.directory.writeLines(try (0..<5).map { try factory.notification(uuid: "a-\($0)") }, to: "in.ndjson")
        #expect(try CLI.run(["ingest", "--db", test.path, file.path]).exitCode == 0)
        let anchor = test.directory.path("head.anchor")
        let first = try CLI.run(["verify", "--db", test.path, "--anchor", anchor])
        #expect(first.exitCode == 0, "\(first)")
        #expect(try String(contentsOfFile: anchor, encoding: .utf8).hasPrefix("5 "))
        // Someone with write access drops the append-only trigger and the last event.
        let raw = try RawSQLite(path: test.path)
        try raw.execute("DROP TRIGGER events_append_only_delete")
        try raw.execute("PRAGMA foreign_keys = OFF")
        for table in ["event_keys", "event_decoded", "event_facts", "arrivals"] {
            try? raw.execute("DELETE FROM \(table) WHERE position = 5")
        }
        try raw.execute("DELETE FROM events WHERE position = 5")
        raw.close()
        let plain = try CLI.run(["verify", "--db", test.path, "--chain-only"])
        #expect(plain.exitCode == 0, "without an anchor the shorter chain is intact: \(plain)")
        let anchored = try CLI.run(["verify", "--db", test.path, "--chain-only", "--anchor", anchor])
        #expect(anchored.exitCode == 1, "\(anchored)")
        #expect(anchored.stdout.contains("removed from the end of the log"), "\(anchored.stdout)")
    }

    @Test("ingest --anchor keeps the anchor at the head after every batch, and refuses to write to a ledger whose tail was cut (exit 2, nothing appended)")
    func ingestKeepsAnchorCurrent() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let anchor = test.directory.path("ingest.anchor")
        let first = try test.directory.writeLines(try (0..<5).map { try factory.notification(uuid: "i-\($0)") }, to: "one.ndjson")
        let ingest = try CLI.run(["ingest", "--db", test.path, "--anchor", anchor, "--batch-size", "2", first.path])
        #expect(ingest.exitCode == 0, "\(ingest)")
        let head = try test.freshStore().head()
        let hex = head.hash.map { String(format: "%02x", $0) }.joined()
        #expect(try String(contentsOfFile: anchor, encoding: .utf8).hasPrefix("5 \(hex)\nrecords "), "no verify ran: ingest wrote it")

        // The tail is cut; the next ingest with the anchor must not append on top of it.
        let raw = try RawSQLite(path: test.path)
        try raw.execute("DROP TRIGGER events_append_only_delete")
        for table in ["event_keys", "event_decoded", "event_facts"] { try raw.execute("DELETE FROM \(table) WHERE position >= 4") }
        try raw.execute("DELETE FROM events WHERE position >= 4")
        raw.close()
        let second = try test.directory.writeLines([try factory.notification(uuid: "i-late")], to: "two.ndjson")
        let refused = try CLI.run(["ingest", "--db", test.path, "--anchor", anchor, second.path, "--json"])
        #expect(refused.exitCode == 2, "\(refused)")
        #expect(try refused.json()["error"]?["message"]?.stringValue?.contains("removed from the end of the log") == true, "\(refused)")
        #expect(try test.freshStore().eventCount() == 3, "nothing appended")
        #expect(try String(contentsOfFile: anchor, encoding: .utf8).hasPrefix("5 "), "the anchor is not moved back")
    }
}
