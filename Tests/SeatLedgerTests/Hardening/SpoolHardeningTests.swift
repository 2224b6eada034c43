import AppStoreModels
import Foundation
import LedgerIntake
import LedgerStorage
import SeatLedger
import Testing

/// Issue #23 item 3: the spool claims before it reads, never follows a link, reports what it
/// cannot read, and prints names escaped.
@Suite("Spool hardening", .serialized)
struct SpoolHardeningTests {
    @Test("a file replaced by rename while its batch commits (the producer protocol) is not lost: both versions are ingested")
    func renameDuringBatchLosesNothing() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let spool = try TemporaryDirectory(label: "spool")
        _ = try spool.write(try factory.notification(uuid: "version-a"), to: "a.json")
        let newer = try factory.notification(uuid: "version-b")
        let store = FailingStore(wrapping: test.store, plan: FaultPlan())
        var replaced = false
        store.beforeCommit = {
            guard !replaced else { return }
            replaced = true
            // The producer: write under a temporary name, rename over the same name.
            _ = try spool.write(newer, to: "a.json.tmp")
            try #require(rename(spool.path("a.json.tmp"), spool.path("a.json")) == 0)
        }
        let ledger = try Ledger.open(store: store)
        try SpoolDirectory(url: spool.url).ingest(into: ledger, batchSize: 8) { _ in }
        #expect(replaced)
        try SpoolDirectory(url: spool.url).ingest(into: ledger, batchSize: 8) { _ in }
        #expect(try test.store.event(id: "version-a") != nil)
        #expect(try test.store.event(id: "version-b") != nil, "the renamed-in version was moved to done/ unread")
        #expect(try spool.contents(of: "done").count == 2)
        #expect(try spool.contents(of: "processing").isEmpty)
    }

    /// Issue #48 finding 5: two `ingest --follow` on one spool read each other's claims (300 files
    /// gave 576 arrivals): every scan took all of `processing/` for a crashed run's leftovers.
    @Test("two consumers on one spool: a file claimed by one is never read by the other, and each counts only its own")
    func twoConsumersNeverReadEachOthersClaims() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let spool = try TemporaryDirectory(label: "spool")
        let files = 40
        for index in 0..<files { _ = try spool.write(try factory.notification(uuid: "shared-\(index)"), to: "\(index + 1000).json") }
        // Consumer B, on its own connection, scans the spool while each of A's batches (its files
        // claimed, not yet committed) commits.
        let other = try Ledger.open(path: test.path)
        var second = IngestSummary()
        let store = FailingStore(wrapping: test.store, plan: FaultPlan())
        store.beforeCommit = {
            try SpoolDirectory(url: spool.url).ingest(into: other, batchSize: 3) { summary in
                second.appended += summary.appended
                second.duplicates += summary.duplicates
                second.quarantined += summary.quarantined
            }
        }
        var first = IngestSummary()
        try SpoolDirectory(url: spool.url).ingest(into: try Ledger.open(store: store), batchSize: 8) { summary in
            first.appended += summary.appended
            first.duplicates += summary.duplicates
            first.quarantined += summary.quarantined
        }
        #expect(first.appended > 0 && second.appended > 0, "both consumers took files: \(first) \(second)")
        #expect(first.duplicates == 0 && second.duplicates == 0, "no file was read twice: \(first) \(second)")
        #expect(first.appended + second.appended == files && first.quarantined + second.quarantined == 0)
        let fresh = try test.freshStore()
        #expect(try fresh.eventCount() == Int64(files))
        #expect(try fresh.arrivalSummary(limit: 10).rows == Int64(files), "one arrival per file")
        #expect(try spool.contents(of: "done").count == files)
        #expect(try spool.contents(of: "processing").isEmpty)
    }

    @Test("claims of a consumer that died are taken over by the next run; those of a running consumer are not touched")
    func abandonedClaimFolderIsAdopted() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let spool = try TemporaryDirectory(label: "spool")
        _ = try spool.write(try factory.notification(uuid: "dead-claim"), to: "processing/consumer-1-dead/x.json")
        _ = try spool.write(try factory.notification(uuid: "live-claim"), to: "processing/consumer-2-live/y.json")
        let live = open(spool.path("processing/consumer-2-live"), O_RDONLY | O_DIRECTORY)
        try #require(live >= 0 && flock(live, LOCK_EX) == 0)
        defer { close(live) }
        try SpoolDirectory(url: spool.url).ingest(into: test.ledger, batchSize: 8) { _ in }
        #expect(try test.store.event(id: "dead-claim") != nil)
        #expect(try test.store.event(id: "live-claim") == nil, "a running consumer's claim was read")
        #expect(try spool.contents(of: "processing") == ["consumer-2-live"])
        #expect(try spool.contents(of: "processing/consumer-2-live") == ["y.json"])
    }

    @Test("a crashed run's claimed file (left in processing/) is ingested by the next run")
    func leftoverClaimIsIngested() throws {
        let test = try TestLedger()
        let spool = try TemporaryDirectory(label: "spool")
        _ = try spool.write(try PayloadFactory().notification(uuid: "left-over"), to: "processing/x.json")
        let result = try CLI.run(["ingest", "--db", test.path, "--spool", "--json", spool.url.path])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try test.freshStore().event(id: "left-over") != nil)
        #expect(try spool.contents(of: "done") == ["x.json"])
    }

    @Test("a symbolic link in the spool is not followed: its target is never read or quarantined; reported, exit 2")
    func symlinkedFileIsRefused() throws {
        let test = try TestLedger()
        let spool = try TemporaryDirectory(label: "spool")
        let secret = try test.directory.write("root-only secret", to: "secret.txt")
        try FileManager.default.createSymbolicLink(atPath: spool.path("link.json"), withDestinationPath: secret.path)
        _ = try spool.write(try PayloadFactory().notification(uuid: "beside-link"), to: "ok.json")
        let result = try CLI.run(["ingest", "--db", test.path, "--spool", "--json", spool.url.path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("link.json: a symbolic link"), "\(result.stderr)")
        #expect(try result.json()["refusedUnread"]?.int64Value == 1)
        let store = try test.freshStore()
        #expect(try store.quarantine().allSatisfy { !$0.raw.elementsEqual(Data("root-only secret".utf8)) })
        #expect(try store.quarantine().isEmpty)
        #expect(try store.event(id: "beside-link") != nil)
        // The link itself moved, its target untouched.
        let moved = try FileManager.default.destinationOfSymbolicLink(atPath: spool.path("rejected/link.json"))
        #expect(moved == secret.path)
        #expect(try String(contentsOf: secret, encoding: .utf8) == "root-only secret")
    }

    @Test("symlinked done/, rejected/ or processing/ refuse the spool: exit 2, nothing moved", arguments: ["done", "rejected", "processing"])
    func symlinkedSubfolderIsRefused(_ folder: String) throws {
        let test = try TestLedger()
        let spool = try TemporaryDirectory(label: "spool")
        let elsewhere = try TemporaryDirectory(label: "elsewhere")
        try FileManager.default.createSymbolicLink(atPath: spool.path(folder), withDestinationPath: elsewhere.url.path)
        _ = try spool.write(try PayloadFactory().notification(uuid: "stays"), to: "n.json")
        let result = try CLI.run(["ingest", "--db", test.path, "--spool", spool.url.path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("\(folder) is a symbolic link"), "\(result.stderr)")
        #expect(try elsewhere.contents().isEmpty)
        #expect(FileManager.default.fileExists(atPath: spool.path("n.json")))
        #expect(try test.freshStore().eventCount() == 0)
    }

    @Test("a FIFO is reported and moved aside without blocking; an unreadable file likewise (run as an unprivileged user)")
    func fifoAndUnreadable() throws {
        let test = try TestLedger()
        let spool = try TemporaryDirectory(label: "spool")
        try #require(mkfifo(spool.path("pipe.json"), 0o666) == 0)
        _ = try spool.write(try PayloadFactory().notification(uuid: "beside-fifo"), to: "ok.json")
        let result = try CLI.run(["ingest", "--db", test.path, "--spool", "--json", spool.url.path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("pipe.json: a FIFO"), "\(result.stderr)")
        #expect(try result.json()["refusedUnread"]?.int64Value == 1)
        #expect(try test.freshStore().event(id: "beside-fifo") != nil)
        #expect(try spool.contents(of: "rejected") == ["pipe.json"])

        // Unreadable: a file this user may not open (as root, the CLI runs as `nobody`).
        let shared = try TemporaryDirectory(label: "shared")
        let db = shared.path("ledger.sqlite")
        #expect(try CLI.initLedger(db: db).exitCode == 0)
        let spool2 = shared.url.appendingPathComponent("spool")
        try FileManager.default.createDirectory(at: spool2, withIntermediateDirectories: true)
        try Data("hidden".utf8).write(to: spool2.appendingPathComponent("closed.json"))
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: spool2.appendingPathComponent("closed.json").path)
        if getuid() == 0 {
            for path in [shared.url.path, spool2.path] { try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: path) }
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: db)
        }
        let closed = try CLI.runWithoutWriteAccess(["ingest", "--db", db, "--spool", "--json", spool2.path])
        #expect(closed.exitCode == 2, "\(closed)")
        #expect(closed.stderr.contains("closed.json: cannot be opened: Permission denied"), "\(closed.stderr)")
    }

    @Test("names with newlines and escape codes are printed escaped (quarantine source, reports)")
    func namesAreEscaped() throws {
        let test = try TestLedger()
        let spool = try TemporaryDirectory(label: "spool")
        let name = "evil\nline\u{1B}[31mred.json"
        _ = try spool.write("{ not json", to: name)
        let result = try CLI.run(["ingest", "--db", test.path, "--spool", spool.url.path])
        #expect(result.exitCode == 3, "\(result)")
        let item = try #require(try test.freshStore().quarantine().first)
        #expect(item.source == "spool:evil\\nline\\x1b[31mred.json")
        let list = try CLI.run(["quarantine", "list", "--db", test.path])
        #expect(!list.stdout.contains("\u{1B}"), "raw escape code printed: \(list.stdout.debugDescription)")
        #expect(SpoolDirectory.printable("a\\b\té") == "a\\\\b\\té")
    }
}
