import AppStoreModels
import EventStore
import Foundation
import LedgerIntake
import SeatLedger
import Testing

/// A spool directory: one message per file; done/ after commit, rejected/ after quarantine.
@Suite("Ingest: spool directories")
struct SpoolDirectoryTests {
    @Test("files move to done/ or rejected/; .tmp and dot files are skipped; a re-run appends nothing (CLI)")
    func spoolThroughCLI() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let spool = try TemporaryDirectory(label: "spool")
        let good = try factory.notification(uuid: "spool-good", transaction: factory.transaction())
        let api = factory.apiResponse()
        try spool.write(good, to: "001-good.json")
        try spool.write(good, to: "002-same-again.json")  // duplicate of 001
        try spool.write(api, to: "003-api.json")
        try spool.write(try PayloadFactory(prefix: "rogue-").notification(uuid: "spool-rogue"), to: "004-rogue.json")
        try spool.write("{ not json", to: "005-garbage.json")
        try spool.write(try factory.notification(uuid: "spool-partial"), to: "006-partial.json.tmp")
        try spool.write(try factory.notification(uuid: "spool-hidden"), to: ".007-hidden.json")

        // --api-responses: 003-api.json is an envelope this operator vouches for (without it, it is
        // quarantined as untrusted_api_response: see TrustBoundaryTests).
        let first = try CLI.run(["ingest", "--db", test.path, "--json", "--batch-size", "2", "--spool", "--api-responses", spool.url.path])
        #expect(first.exitCode == 3, "\(first)")
        #expect(try first.json() == ["appended": 2, "duplicates": 1, "quarantined": 2])

        #expect(try spool.contents(of: "done") == ["001-good.json", "002-same-again.json", "003-api.json"])
        #expect(try spool.contents(of: "rejected") == ["004-rogue.json", "005-garbage.json"])
        #expect(try spool.contents() == [".007-hidden.json", "006-partial.json.tmp", "done", "processing", "rejected"])
        // Moved, not rewritten.
        #expect(try Data(contentsOf: spool.url("done/001-good.json")) == Data(good.utf8))

        let store = try test.freshStore()
        #expect(try store.eventCount() == 2)
        #expect(try store.event(id: "spool-good")?.raw == Data(good.utf8))
        #expect(try store.event(id: "spool-good")?.source == "spool:001-good.json")
        let quarantined = try store.quarantine()
        #expect(quarantined.map(\.source) == ["spool:004-rogue.json", "spool:005-garbage.json"])
        #expect(quarantined.map(\.errorCode) == ["chain_not_trusted", "malformed_json"])
        #expect(quarantined[1].raw == Data("{ not json".utf8))
        #expect(try store.event(id: "spool-partial") == nil)
        #expect(try store.event(id: "spool-hidden") == nil)

        let again = try CLI.run(["ingest", "--db", test.path, "--json", spool.url.path])
        #expect(again.exitCode == 0, "\(again)")
        #expect(try again.json() == ["appended": 0, "duplicates": 0, "quarantined": 0])
        #expect(try test.freshStore().eventCount() == 2)
        #expect(try test.freshStore().quarantine().count == 2)

        // The producer renames its .tmp file: the next run picks it up.
        try FileManager.default.moveItem(at: spool.url("006-partial.json.tmp"), to: spool.url("006-partial.json"))
        let third = try CLI.run(["ingest", "--db", test.path, "--json", spool.url.path])
        #expect(try third.json() == ["appended": 1, "duplicates": 0, "quarantined": 0])
        #expect(try spool.contents(of: "done").contains("006-partial.json"))
    }

    @Test("a directory without done/ or rejected/ is not taken for a spool without --spool: nothing in it moves")
    func unmarkedDirectoryRefused() throws {
        let test = try TestLedger()
        let directory = try TemporaryDirectory(label: "not-a-spool")
        try directory.write(try PayloadFactory().notification(uuid: "stray-1"), to: "build.lock")
        try directory.write("not a message", to: "notes.txt")
        let refused = try CLI.run(["ingest", "--db", test.path, "--json", directory.url.path])
        #expect(refused.exitCode == 2, "\(refused)")
        // Under --json the error is a JSON object on stdout.
        let message = try refused.json()["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("\(directory.url.path) is a directory without done/ or rejected/"), "\(refused)")
        #expect(message.contains("pass --spool"), "\(refused)")
        #expect(try directory.contents() == ["build.lock", "notes.txt"], "nothing moved, nothing created")
        #expect(try test.freshStore().eventCount() == 0 && test.freshStore().quarantine().isEmpty)

        let accepted = try CLI.run(["ingest", "--db", test.path, "--json", "--spool", directory.url.path])
        #expect(accepted.exitCode == 3, "one appended, one quarantined: \(accepted)")
        #expect(try directory.contents(of: "done") == ["build.lock"] && directory.contents(of: "rejected") == ["notes.txt"])
    }

    @Test("library: SpoolDirectory.ingest reports per batch and a same-named file in done/ is not overwritten")
    func spoolLibrary() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let spool = try TemporaryDirectory(label: "spool")
        try spool.write(try factory.notification(uuid: "lib-1"), to: "a.json")
        try spool.write("earlier file with the same name", to: "done/a.json")
        try spool.write(try factory.notification(uuid: "lib-2"), to: "b.json")
        try spool.write(try factory.notification(uuid: "lib-3"), to: "c.json")

        var batches: [IngestSummary] = []
        try SpoolDirectory(url: spool.url).ingest(into: test.ledger, batchSize: 2) { batches.append($0) }
        #expect(batches.map(\.appended) == [2, 1])
        #expect(try SpoolDirectory(url: spool.url).pendingFiles().isEmpty)
        let done = try spool.contents(of: "done")
        #expect(done.count == 4)
        #expect(try String(contentsOf: spool.url("done/a.json"), encoding: .utf8) == "earlier file with the same name")
        #expect(done.contains { $0.hasPrefix("a.json.") }, "the second a.json is kept under a unique name: \(done)")
        #expect(try test.eventCount() == 3)
    }

    @Test("--follow keeps watching, shares the file with another writer, and SIGTERM ends it cleanly (exit 0)",
          .timeLimit(.minutes(1)))
    func followMode() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let spool = try TemporaryDirectory(label: "spool")
        let child = try CLI.start(["ingest", "--db", test.path, "--follow", "--poll-interval", "0.1", "--json", spool.url.path])
        defer { if child.isRunning { child.kill() } }

        func waitUntil(_ condition: () throws -> Bool) throws -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                if try condition() { return true }
                if !child.isRunning { return false }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return false
        }
        // Producers write under a .tmp name and rename when complete.
        func drop(_ text: String, as name: String) throws {
            try spool.write(text, to: name + ".tmp")
            try FileManager.default.moveItem(at: spool.url(name + ".tmp"), to: spool.url(name))
        }

        try drop(try factory.notification(uuid: "follow-1"), as: "1.json")
        #expect(try waitUntil { FileManager.default.fileExists(atPath: spool.path("done/1.json")) }, "1.json not ingested")
        // Another process appends meanwhile; the follower must keep working after it.
        let recorded = try CLI.run(["record", "--db", test.path, "--json", "-"], stdin: Data(factory.apiResponse().utf8))
        #expect(try recorded.json()["result"] == "appended", "\(recorded)")
        try drop(try factory.notification(uuid: "follow-2"), as: "2.json")
        try drop("garbage", as: "3.json")
        #expect(try waitUntil {
            FileManager.default.fileExists(atPath: spool.path("done/2.json"))
                && FileManager.default.fileExists(atPath: spool.path("rejected/3.json"))
        }, "2.json / 3.json not settled")

        child.kill(SIGTERM)
        let result = try child.wait(timeout: 20)
        #expect(!result.terminatedBySignal && result.exitCode == 3, "SIGTERM finishes the batch and exits normally: \(result)")
        #expect(try result.json() == ["appended": 2, "duplicates": 0, "quarantined": 1])
        let store = try test.freshStore()
        #expect(try store.eventCount() == 3)
        #expect(try store.verifyChain().isIntact)
    }
}
