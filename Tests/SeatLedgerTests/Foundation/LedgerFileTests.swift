import AppStoreModels
import Foundation
import LedgerStorage
import SeatLedger
import Testing

/// The ledger file: created once, recognisable, versioned, self-describing.
@Suite("The ledger file")
struct LedgerFileTests {
    @Test("init records the trust configuration; config --json shows it")
    func initAndConfig() throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("ledger.sqlite")
        let created = try CLI.initLedger(db: db, roots: [TestPaths.testRoot, TestPaths.p256Root], extra: ["--json"])
        #expect(try created.json()["bundleId"] == "com.example.reps")

        let result = try CLI.run(["config", "--db", db, "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let json = try result.json()
        #expect(json["bundleId"] == "com.example.reps")
        #expect(json["environment"] == "Sandbox")
        #expect(json["appAppleId"] == .null)
        let fingerprints = json["rootCertificates"]?.arrayValue?.compactMap { $0["sha256"]?.stringValue } ?? []
        #expect(Set(fingerprints) == [try certificateFingerprint(TestPaths.testRoot), try certificateFingerprint(TestPaths.p256Root)])
        #expect(fingerprints.allSatisfy { $0.count == 64 && $0.allSatisfy(\.isHexDigit) })

        let text = try CLI.run(["config", "--db", db])
        #expect(text.exitCode == 0)
        #expect(text.stdout.contains("com.example.reps"))
        #expect(text.stdout.contains(try certificateFingerprint(TestPaths.testRoot)))

        // Later commands need no flags: the library reads the same configuration.
        let ledger = try Ledger.open(path: db)
        #expect(ledger.configuration.bundleId == "com.example.reps")
        #expect(ledger.configuration.environment == .sandbox)
    }

    @Test("a Production ledger records the app Apple id and enforces it")
    func productionAppAppleId() throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("prod.sqlite")
        try CLI.initLedger(db: db, environment: "Production", extra: ["--app-apple-id", "1234567890"])
        let json = try CLI.run(["config", "--db", db, "--json"]).json()
        #expect(json["environment"] == "Production")
        #expect(json["appAppleId"] == 1_234_567_890)

        let factory = try PayloadFactory(environment: "Production")
        let ledger = try Ledger.open(path: db)
        let right = try factory.notification(uuid: "right", appAppleId: 1_234_567_890)
        let wrong = try factory.notification(uuid: "wrong", appAppleId: 42)
        #expect(try ledger.append(notificationBody: Data(right.utf8)) == .appended(positions: [1], duplicatesCarried: 0))
        guard case .quarantined(_, let rejection) = try ledger.append(notificationBody: Data(wrong.utf8)) else {
            Issue.record("a Production notification naming another app Apple id was accepted")
            return
        }
        #expect(rejection.code == "app_apple_id_mismatch")
    }

    @Test("Production without --app-apple-id is refused and creates nothing")
    func productionNeedsAppAppleId() throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("prod.sqlite")
        let result = try CLI.run(["init", "--db", db, "--bundle-id", "com.example.reps", "--environment", "Production",
                                  "--root-cert", TestPaths.testRoot.path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("app-apple-id"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: db))
    }

    @Test("init refuses an unknown environment and a missing root certificate", arguments: [
        ["--environment", "Staging", "--root-cert", TestPaths.testRoot.path],
        ["--environment", "Sandbox"],
        ["--environment", "Sandbox", "--root-cert", "/nonexistent/root.pem"],
        ["--environment", "Sandbox", "--root-cert", TestPaths.pkiFile("README.md").path],
    ])
    func initRefusesBadTrustConfiguration(_ arguments: [String]) throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("ledger.sqlite")
        let result = try CLI.run(["init", "--db", db, "--bundle-id", "com.example.reps"] + arguments)
        #expect(result.exitCode == 2, "\(result)")
        #expect(!result.stderr.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: db), "nothing is created when init is refused")
    }

    @Test("init refuses an existing file and leaves it untouched")
    func initRefusesExisting() throws {
        let dir = try TemporaryDirectory()
        let db = dir.path("ledger.sqlite")
        try CLI.initLedger(db: db)
        let ledger = try Ledger.open(path: db)
        _ = try ledger.append(notificationBody: Data(try PayloadFactory().notification().utf8))
        let again = try CLI.run(["init", "--db", db, "--bundle-id", "com.other", "--environment", "Sandbox",
                                 "--root-cert", TestPaths.testRoot.path])
        #expect(again.exitCode == 2, "\(again)")
        #expect(again.stderr.contains("already exists"), "\(again)")
        #expect(try Ledger.open(path: db).configuration.bundleId == "com.example.reps")
        #expect(try Ledger.open(path: db).store.eventCount() == 1)

        let notes = try dir.write("not a ledger", to: "notes.txt")
        let overText = try CLI.run(["init", "--db", notes.path, "--bundle-id", "x", "--environment", "Sandbox",
                                    "--root-cert", TestPaths.testRoot.path])
        #expect(overText.exitCode == 2)
        #expect(try String(contentsOf: notes, encoding: .utf8) == "not a ledger")
    }

    enum Impostor: String, CaseIterable, Sendable {
        case plainSQLiteDatabase, textFile, emptyFile
    }

    @Test("a file that is not a ledger is refused with a clear message (exit 2)", arguments: Impostor.allCases)
    func notALedger(_ impostor: Impostor) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("impostor.db")
        switch impostor {
        case .plainSQLiteDatabase:
            let sql = try RawSQLite(path: path, create: true)
            try sql.execute("CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES ('hello');")
            sql.close()
        case .textFile:
            try dir.write(String(repeating: "just some text\n", count: 200), to: "impostor.db")
        case .emptyFile:
            try dir.write("", to: "impostor.db")
        }
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        for command in [["config"], ["ingest", "-"], ["verify"], ["events"], ["quarantine", "list"]] {
            let result = try CLI.run(command + ["--db", path])
            #expect(result.exitCode == 2, "\(command): \(result)")
            #expect(result.stderr.contains("not a SeatLedger ledger"), "\(command): \(result)")
        }
        #expect(throws: (any Error).self) { _ = try Ledger.open(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original, "a refused file must not be modified")
    }

    @Test("a ledger of a newer schema version is refused")
    func newerSchema() throws {
        let test = try TestLedger()
        let sql = try RawSQLite(path: test.path)
        try sql.execute("PRAGMA user_version = 99")
        sql.close()
        for command in [["config"], ["verify"], ["ingest", "-"], ["events"]] {
            let result = try CLI.run(command + ["--db", test.path])
            #expect(result.exitCode == 2, "\(command): \(result)")
            #expect(result.stderr.contains("schema version 99"), "\(command): \(result)")
            #expect(result.stderr.contains("newer"), "\(command): \(result)")
        }
        let error = #expect(throws: LedgerStoreError.self) { _ = try Ledger.open(path: test.path) }
        guard case .newerSchema(_, let found, _)? = error else {
            Issue.record("expected newerSchema, got \(String(describing: error))")
            return
        }
        #expect(found == 99)
    }

    @Test("a version 1 ledger is read as it is, and opening it for writing drops its unread group_state table, the log untouched")
    func upgradesVersion1() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let purchase = try factory.notification(uuid: "upgrade-1", transaction: factory.transaction(originalTransactionId: "2000000000007001"))
        #expect(try test.append(line: purchase) == .appended(positions: [1], duplicatesCarried: 0))
        // What a version 1 file holds: the snapshot table, with a row, and user_version 1.
        let sql = try RawSQLite(path: test.path)
        try sql.execute("""
            DROP TABLE record_chain;
            DROP TABLE group_snapshot;
            CREATE TABLE group_state (group_key TEXT PRIMARY KEY, state TEXT NOT NULL, as_of INTEGER NOT NULL, last_position INTEGER NOT NULL);
            INSERT INTO group_state VALUES ('2000000000007001', '{}', 1, 1);
            PRAGMA user_version = 1;
            """)
        func version() throws -> Int64? { try sql.scalarInt("PRAGMA user_version") }
        func hasSnapshots() throws -> Bool { try sql.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'group_state'") == 1 }
        let head = try test.store.head()
        let asOf = PayloadFactory.defaultSignedDate + PayloadFactory.day

        let reader = try Ledger.open(path: test.path, readOnly: true)
        #expect(try reader.groups(asOf: asOf).map(\.groupKey) == ["2000000000007001"])
        #expect(try version() == 1 && hasSnapshots(), "a read-only open changes nothing")

        let writer = try Ledger.open(path: test.path)
        #expect(try version() == 6)
        #expect(try writer.store.verifyRecordChain()?.isIntact == true, "upgraded to 3 as well: the record chain covers what was stored")
        #expect(try sql.scalarInt("SELECT count(*) FROM group_snapshot") == 0, "and to 4: group snapshots, none yet")
        #expect(try !hasSnapshots())
        #expect(try writer.store.head() == head)
        #expect(try writer.store.verifyChain().isIntact)
        #expect(try writer.groupState("2000000000007001", asOf: asOf).groupKey == "2000000000007001")
        sql.close()
        let verify = try CLI.run(["verify", "--db", test.path])
        #expect(verify.exitCode == 0, "\(verify)")
    }

    @Test("schema 5: an arrival is indexed by event id only when it is a duplicate; a version 4 file is upgraded, its arrivals kept and still counted")
    func arrivalsIndexDuplicatesOnly() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = try factory.notification(uuid: "arrivals-1")
        #expect(try test.append(line: line) == .appended(positions: [1], duplicatesCarried: 0))
        #expect(try test.append(line: line) == .duplicate(existingPosition: 1))
        let sql = try RawSQLite(path: test.path)
        func indexes() throws -> Int64? { try sql.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'arrivals'") }
        func partial() throws -> Int64? {
            try sql.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'arrivals_duplicate' AND sql LIKE '%(event_id) WHERE duplicate = 1'")
        }
        #expect(try indexes() == 1 && partial() == 1, "a new ledger indexes the duplicate arrivals only")
        // The duplicate count's query is the one the partial index serves (INDEXED BY refuses to prepare otherwise).
        #expect(try sql.scalarInt("SELECT count(*) FROM arrivals INDEXED BY arrivals_duplicate WHERE event_id = ? AND duplicate = 1",
                                  [.text("arrivals-1")]) == 1)
        #expect(try test.freshStore().duplicateCounts(for: ["arrivals-1"]) == ["arrivals-1": 1])

        // What a version 4 file holds: every arrival indexed by event id.
        try sql.execute("DROP INDEX arrivals_duplicate; CREATE INDEX arrivals_event ON arrivals(event_id); PRAGMA user_version = 4;")
        _ = try Ledger.open(path: test.path, readOnly: true)
        #expect(try sql.scalarInt("PRAGMA user_version") == 4, "a read-only open changes nothing")
        #expect(try test.freshStore().duplicateCounts(for: ["arrivals-1"]) == ["arrivals-1": 1], "an older file is read as it is")
        let writer = try Ledger.open(path: test.path)
        #expect(try sql.scalarInt("PRAGMA user_version") == 6)
        #expect(try indexes() == 1 && partial() == 1, "arrivals_event dropped, the partial index made")
        #expect(try sql.scalarInt("SELECT count(*) FROM arrivals") == 2, "no arrival rewritten or lost")
        #expect(try writer.store.duplicateCounts(for: ["arrivals-1"]) == ["arrivals-1": 1])
        #expect(try writer.store.arrivalSummary(limit: 5).findings.isEmpty)
        sql.close()
        let verify = try CLI.run(["verify", "--db", test.path])
        #expect(verify.exitCode == 0, "\(verify)")
    }

    @Test("schema 5: a notification's own id has no row in the identifier index, yet every lookup finds it; a row written before changes no answer")
    func ownIdentifierHasNoRow() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = try factory.notification(uuid: "own-1", transaction: factory.transaction(originalTransactionId: "2000000000007002"))
        #expect(try test.append(line: line) == .appended(positions: [1], duplicatesCarried: 0))
        let sql = try RawSQLite(path: test.path)
        #expect(try sql.scalarInt("SELECT count(*) FROM event_keys WHERE key_kind = 'notificationUUID'") == 0)
        #expect(try sql.scalarInt("SELECT count(*) FROM event_keys WHERE position = 1") ?? 0 > 0, "its other identifiers are rows")
        func answers() throws -> String {
            let store = try test.freshStore()
            return "\(try store.positions(mentioning: "own-1")) \(try store.positions(mentioning: "own-1", kind: .notificationUUID)) "
                + "\(try store.positions(mentioningAny: ["own-1"]).sorted()) \(try store.positions(byIdentifier: ["own-1"])) "
                + "\(try store.identifiers(at: 1))"
        }
        let now = try answers()
        #expect(now.hasPrefix("[1] [1] [1] [\"own-1\": Set([1])] [") && now.contains("notificationUUID=own-1, originalTransactionId="), "\(now)")
        // What an append before schema 5 wrote: the row too. Read together, the identifier counts once.
        try sql.execute("INSERT INTO event_keys(key_value, key_kind, position) VALUES ('own-1', 'notificationUUID', 1)")
        #expect(try answers() == now)
        sql.close()
        let verify = try CLI.run(["verify", "--deep", "--db", test.path])
        #expect(verify.exitCode == 0, "the deep check re-derives the identifiers and finds the index whole: \(verify)")
    }

    @Test("a missing ledger file is an error that says how to create one")
    func missingLedger() throws {
        let dir = try TemporaryDirectory()
        let result = try CLI.run(["ingest", "--api-responses", "--db", dir.path("nope.sqlite"), "-"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("seatledger init"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("nope.sqlite")), "a read must not create the file")
    }

    @Test("the ledger uses WAL and tags the file with its application id")
    func fileFormat() throws {
        let test = try TestLedger()
        let sql = try RawSQLite(path: test.path)
        #expect(try sql.scalarInt("PRAGMA application_id") == 0x5345_4154)
        #expect(try sql.scalarInt("PRAGMA user_version") == 6)
        // journal_mode is a string; WAL mode is persistent in the file header (bytes 18–19 = 2).
        let header = try Data(contentsOf: URL(fileURLWithPath: test.path)).prefix(20)
        #expect(header.count == 20 && header[18] == 2 && header[19] == 2)
    }
}
