import AppStoreModels
import Foundation
import LedgerEvents
import LedgerStorage
import SeatLedger
import Testing

/// The `seatledger` command line: help, usage errors, --json, exit codes, $SEATLEDGER_DB, record.
@Suite("CLI")
struct CLITests {
    /// Every subcommand registered in `Sources/seatledger/main.swift`, read from the source: the
    /// `XCommand.self` entries of `commands`, each resolved to its `static let name`.
    static let commands: [String] = registeredCommands()

    static func registeredCommands() -> [String] {
        let sources = TestPaths.repoRoot.appendingPathComponent("Sources/seatledger")
        guard let main = try? String(contentsOf: sources.appendingPathComponent("main.swift"), encoding: .utf8),
              let list = main.components(separatedBy: "let commands").dropFirst().first?
                .components(separatedBy: "= [").dropFirst().first?.components(separatedBy: "]").first
        else { return ["<cannot read Sources/seatledger/main.swift>"] }
        // "InitCommand.self, ConfigCommand.self, …" → ["InitCommand", "ConfigCommand", …]
        let typeNames = list.components(separatedBy: ".self").dropLast().compactMap {
            $0.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).last.map(String.init)
        }
        // Each type's `static let name = "…"`: the first one after its declaration.
        var namesByType: [String: String] = [:]
        let files = (FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.allObjects ?? [])
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        for file in files {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            for typeName in typeNames where namesByType[typeName] == nil {
                for keyword in ["enum ", "struct ", "final class ", "class "] {
                    guard let declaration = text.range(of: keyword + typeName + ":") ?? text.range(of: keyword + typeName + " "),
                          let name = text[declaration.upperBound...].range(of: "static let name = \"") else { continue }
                    let value = text[name.upperBound...].prefix { $0 != "\"" }
                    namesByType[typeName] = String(value)
                    break
                }
            }
        }
        return typeNames.map { namesByType[$0] ?? "<no static name for \($0)>" }
    }

    @Test("the global help lists exactly the known commands")
    func globalHelp() throws {
        let result = try CLI.run(["--help"])
        #expect(result.exitCode == 0, "\(result)")
        let listed = result.stdout.components(separatedBy: "Commands:").dropFirst().first?
            .components(separatedBy: "\n\n").first?
            .split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) } ?? []
        #expect(Self.commands.count >= 12, "command list parsed from main.swift: \(Self.commands)")
        #expect(listed == Self.commands)
        #expect(result.stdout.contains("Exit status"))
    }

    @Test("every command has --help (exit 0, usage on stdout, exit codes documented)", arguments: commands)
    func help(_ command: String) throws {
        let result = try CLI.run([command, "--help"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("Usage: seatledger \(command)"), "\(result)")
        #expect(result.stdout.contains("Exit status"), "exit codes are documented in --help")
        #expect(result.stderr.isEmpty)
        let short = try CLI.run([command, "-h"])
        #expect(short.exitCode == 0)
        #expect(short.stdout == result.stdout)
    }

    @Test("an unknown option exits 2 and names the option", arguments: commands)
    func unknownOption(_ command: String) throws {
        let result = try CLI.run([command, "--definitely-not-an-option"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("--definitely-not-an-option"), "\(result)")
    }

    @Test("an unknown command exits 2")
    func unknownCommand() throws {
        let result = try CLI.run(["frobnicate"])
        #expect(result.exitCode == 2)
        #expect(result.stderr.contains("frobnicate"))
    }

    @Test("ingest --json prints exactly {appended, duplicates, quarantined}; exit 0, or 3 when something was quarantined")
    func ingestJSONAndExitCodes() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let clean = try test.directory.writeLines([try factory.notification(uuid: "c1"), "", try factory.notification(uuid: "c2")],
                                                  to: "clean.ndjson")
        let ok = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", clean.path])
        #expect(ok.exitCode == 0, "\(ok)")
        let json = try ok.json()
        #expect(Set(json.objectValue?.keys.map { $0 } ?? []) == ["appended", "duplicates", "quarantined"])
        #expect(json == ["appended": 2, "duplicates": 0, "quarantined": 0], "blank lines are skipped, not quarantined")

        let dirty = try test.directory.writeLines([try factory.notification(uuid: "d1"), "garbage"], to: "dirty.ndjson")
        let quarantined = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", dirty.path])
        #expect(quarantined.exitCode == 3, "\(quarantined)")
        #expect(try quarantined.json() == ["appended": 1, "duplicates": 0, "quarantined": 1])
        let record = try #require(try test.store.quarantine().first)
        #expect(record.source == "\(dirty.path):2")
        #expect(record.raw == Data("garbage".utf8))

        let human = try CLI.run(["ingest", "--api-responses", "--db", test.path, dirty.path])
        #expect(human.exitCode == 3, "the garbage line is refused again: \(human)")
        #expect(human.stdout.contains("0 appended, 1 duplicates, 1 quarantined"), "\(human)")
        #expect(human.stdout.contains("quarantine list"), "the summary points to the quarantine")
    }

    @Test("ingest reads stdin by default and with -, and several inputs in one run")
    func stdinAndSeveralInputs() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let stdinLines = [try factory.notification(uuid: "s1"), try factory.notification(uuid: "s2")]
        let viaDefault = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json"],
                                     stdin: Data(stdinLines.map { $0 + "\n" }.joined().utf8))
        #expect(try viaDefault.json() == ["appended": 2, "duplicates": 0, "quarantined": 0], "\(viaDefault)")
        #expect(try test.freshStore().event(id: "s2")?.source == "stdin:2")

        let file = try test.directory.writeLines([try factory.notification(uuid: "f1")], to: "f.ndjson")
        let mixed = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json", file.path, "-"],
                                stdin: Data((try factory.notification(uuid: "s3")).utf8))  // no trailing newline
        #expect(try mixed.json() == ["appended": 2, "duplicates": 0, "quarantined": 0], "\(mixed)")
        #expect(try test.freshStore().eventCount() == 4)

        let missing = try CLI.run(["ingest", "--api-responses", "--db", test.path, test.directory.path("absent.ndjson")])
        #expect(missing.exitCode == 2)
        #expect(missing.stderr.contains("absent.ndjson"))
    }

    @Test("$SEATLEDGER_DB is used when --db is absent; --db wins over it; else ./seatledger.sqlite")
    func databaseLocation() throws {
        let dir = try TemporaryDirectory()
        let envDB = dir.path("from-env.sqlite")
        let env = ["SEATLEDGER_DB": envDB]
        let created = try CLI.run(["init", "--bundle-id", "com.example.reps", "--environment", "Sandbox",
                                   "--root-cert", TestPaths.testRoot.path], environment: env)
        #expect(created.exitCode == 0, "\(created)")
        #expect(FileManager.default.fileExists(atPath: envDB))
        let line = try PayloadFactory().notification(uuid: "env-1")
        let ingest = try CLI.run(["ingest", "--json"], stdin: Data(line.utf8), environment: env)
        #expect(try ingest.json() == ["appended": 1, "duplicates": 0, "quarantined": 0], "\(ingest)")
        #expect(try Ledger.open(path: envDB).store.eventCount() == 1)
        let config = try CLI.run(["config", "--json"], environment: env)
        #expect(try config.json()["path"]?.stringValue == envDB)

        // --db takes precedence over the environment.
        let other = dir.path("explicit.sqlite")
        try CLI.initLedger(db: other)
        let explicit = try CLI.run(["config", "--json", "--db", other], environment: env)
        #expect(try explicit.json()["path"]?.stringValue == other)

        // Neither: ./seatledger.sqlite in the working directory.
        let cwd = try TemporaryDirectory(label: "cwd")
        let local = try CLI.run(["init", "--bundle-id", "com.example.reps", "--environment", "Sandbox",
                                 "--root-cert", TestPaths.testRoot.path], currentDirectory: cwd.url)
        #expect(local.exitCode == 0, "\(local)")
        #expect(FileManager.default.fileExists(atPath: cwd.path("seatledger.sqlite")))
    }

    @Test("record appends an apiResponse envelope from a file or stdin; the same envelope again is a duplicate")
    func recordEnvelope() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let envelope = factory.apiResponse(endpoint: "GetSeatInfo",
                                           body: ["totalSeatCount": 10, "availableSeatCount": 2,
                                                  "assignedSeatClaimIds": ["claim-a", "claim-b"]],
                                           context: ["memberRef": "app-user-42"])
        let file = try test.directory.write(envelope, to: "seat-info.json")
        let result = try CLI.run(["record", "--db", test.path, "--json", file.path])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try result.json()["result"] == "appended")
        #expect(try result.json()["positions"] == [1])
        let event = try #require(try test.store.event(at: 1))
        #expect(event.kind == .apiResponse)
        #expect(event.type == "GetSeatInfo")
        #expect(event.origin == .recorded)
        #expect(event.raw == Data(envelope.utf8))
        for id in [PayloadFactory.defaultOriginalTransactionId, "claim-a", "claim-b", "app-user-42"] {
            let found = try CLI.run(["events", "--db", test.path, "--mentioning", id, "--json"])
            #expect(try found.json().arrayValue?.compactMap { $0["position"]?.int64Value } == [1], "\(id): \(found)")
        }

        let again = try CLI.run(["record", "--db", test.path, "--json", "-"], stdin: Data(envelope.utf8))
        #expect(again.exitCode == 0, "\(again)")
        #expect(try again.json()["result"] == "duplicate")
        #expect(try test.freshStore().eventCount() == 1)

        let error = factory.apiResponse(endpoint: "GetTransactionInfo", path: "/inApps/v1/transactions/9",
                                        status: 404, body: ["errorCode": 4_040_010, "errorMessage": "Transaction id not found."])
        let recordedError = try CLI.run(["record", "--db", test.path, "--json", "-"], stdin: Data(error.utf8))
        #expect(try recordedError.json()["result"] == "appended", "error responses are events too: \(recordedError)")
        #expect(try test.freshStore().event(at: 2)?.status == 404)

        let refused = try CLI.run(["record", "--db", test.path, "--json", "-"], stdin: Data(#"{"apiResponse":{}}"#.utf8))
        #expect(refused.exitCode == 3, "\(refused)")
        #expect(try refused.json()["errorCode"] == "invalid_envelope")
    }

    @Test("a GetNotificationHistory envelope's items are appended as backfilled notifications, deduplicated against live ones")
    func notificationHistoryBackfill() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let liveJWS = try factory.signedNotification(type: "SUBSCRIBED", uuid: "hist-live", transaction: factory.transaction())
        let missedJWS = try factory.signedNotification(type: "DID_RENEW", uuid: "hist-missed",
                                                       signedDate: PayloadFactory.defaultSignedDate + 1000,
                                                       transaction: factory.transaction(transactionId: "2000000000000002"))
        let live = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json"],
                               stdin: Data(PayloadFactory.body(signedPayload: liveJWS).utf8))
        #expect(try live.json()["appended"] == 1)

        let history = factory.apiResponse(
            endpoint: "GetNotificationHistory", method: "POST", path: "/inApps/v1/notifications/history",
            requestBody: ["startDate": 1_748_000_000_000, "endDate": 1_749_000_000_000],
            body: ["notificationHistory": [
                ["signedPayload": .string(liveJWS), "sendAttempts": [["attemptDate": 1_748_779_200_500, "sendAttemptResult": "SUCCESS"]]],
                ["signedPayload": .string(missedJWS), "sendAttempts": [["attemptDate": 1_748_779_201_000, "sendAttemptResult": "NO_RESPONSE"]]],
            ], "hasMore": false])
        let recorded = try CLI.run(["record", "--db", test.path, "--json", "-"], stdin: Data(history.utf8))
        #expect(recorded.exitCode == 0, "\(recorded)")
        let json = try recorded.json()
        #expect(json["result"] == "appended")
        #expect(json["positions"] == [2, 3], "the envelope and the one missed notification")
        #expect(json["carriedDuplicates"] == 1)

        #expect(try test.eventCount() == 3)
        let envelope = try #require(try test.store.event(at: 2))
        #expect(envelope.kind == .apiResponse && envelope.type == "GetNotificationHistory")
        let missed = try #require(try test.store.event(id: "hist-missed"))
        #expect(missed.position == 3)
        #expect(missed.kind == .notification && missed.type == "DID_RENEW")
        #expect(missed.origin == .backfill)
        #expect(missed.occurredAt == PayloadFactory.defaultSignedDate + 1000)
        #expect(missed.decoded["transactionInfo"]?["transactionId"] == "2000000000000002")
        let liveEvent = try #require(try test.store.event(id: "hist-live"))
        #expect(liveEvent.position == 1 && liveEvent.origin == .stdin, "the live arrival is kept as it was (origin: stdin, the path it came by)")
        // The envelope mentions both notifications.
        #expect(try test.store.positions(mentioning: "hist-missed", kind: .notificationUUID) == [2, 3])

        // The live notification arriving later again (Apple's retry) is a duplicate of the backfilled one.
        let late = try CLI.run(["ingest", "--api-responses", "--db", test.path, "--json"],
                               stdin: Data(PayloadFactory.body(signedPayload: missedJWS).utf8))
        #expect(try late.json() == ["appended": 0, "duplicates": 1, "quarantined": 0])
        #expect(try test.store.verifyChain().isIntact)
    }

    @Test("events show --json prints one event with raw bytes, identifiers, verification and decoded payload; text without --json")
    func eventsShow() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = try factory.notification(uuid: "show-me", transaction: factory.transaction())
        try test.append(line: line)
        for key in ["1", "show-me"] {
            let result = try CLI.run(["events", "show", key, "--db", test.path, "--json"])
            #expect(result.exitCode == 0, "\(result)")
            let json = try result.json()
            #expect(json["raw"]?.stringValue == line)
            #expect(json["eventId"] == "show-me")
            #expect(json["decoded"]?["transactionInfo"]?["quantity"] == 5)
            #expect(json["verification"]?.arrayValue?.count == 2)
            #expect(json["identifiers"]?.arrayValue?.contains(["kind": "notificationUUID", "value": "show-me"]) == true)
        }
        let text = try CLI.run(["events", "show", "1", "--db", test.path])
        #expect(text.exitCode == 0, "\(text)")
        #expect(text.stdout.hasPrefix("Event #1  show-me\n  notification  SUBSCRIBED\n"), "\(text)")
        #expect(text.stdout.contains("    notificationUUID show-me\n"), "\(text)")
        #expect(text.stdout.contains("    data.signedTransactionInfo: root "), "\(text)")
        #expect(text.stdout.contains("\"quantity\": 5"), "\(text)")
        #expect(!text.stdout.contains("eyJ"), "nested JWS strings left out of the text: \(text)")
        #expect(text.stdout.contains("(\(line.utf8.count) raw bytes; --json shows them)"), "\(text)")
        let missing = try CLI.run(["events", "show", "99", "--db", test.path])
        #expect(missing.exitCode == 2)
    }
}
