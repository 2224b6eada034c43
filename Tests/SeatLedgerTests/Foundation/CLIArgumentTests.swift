import EventStore
import AppStoreModels
import Foundation
import LedgerStorage
import SeatLedger
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Argument and input validation of the `seatledger` command line: stray positionals, inputs
/// checked before anything is appended, option values, readable file errors, interrupted ingest.
@Suite("CLI arguments")
struct CLIArgumentTests {
    /// A command line (after `seatledger`) that takes no further positional argument; `--db DB`
    /// is appended by the test.
    struct NoPositional: Sendable, CustomTestStringConvertible {
        let words: [String]
        var testDescription: String { words.joined(separator: " ") }
    }

    static let noPositional: [NoPositional] = [
        ["verify"], ["groups"], ["rebuild"], ["quarantine", "list"], ["config", "show"], ["events"],
        ["init"], ["backfill"], ["api-config"], ["api-config", "show"], ["quarantine", "show", "1"], ["group", "show", "1"],
        ["member", "show", "1"], ["replay", "1"], ["diff", "1"], ["audit", "group", "1"], ["reconcile", "1"],
        ["seats", "info", "1"], ["seats", "unclaim", "1", "2"], ["record", "-"],
    ].map(NoPositional.init)

    @Test("a stray positional argument is a usage error naming it (exit 2), with a --db hint for a path",
          arguments: noPositional)
    func strayPositional(_ line: NoPositional) throws {
        let test = try TestLedger()
        let command = line.words[0]
        let result = try CLI.run(line.words + ["--db", test.path, "../t.sqlite"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("seatledger \(command): unexpected argument ../t.sqlite"), "\(result)")
        #expect(result.stderr.contains("pass --db ../t.sqlite"), "\(result)")
        #expect(result.stdout.isEmpty, "nothing ran: \(result)")

        let word = try CLI.run(line.words + ["--db", test.path, "extra"])
        #expect(word.exitCode == 2, "\(word)")
        #expect(word.stderr.contains("unexpected argument extra"), "\(word)")
        #expect(!word.stderr.contains("--db extra"), "no --db hint for a word that is not a path: \(word)")
    }

    @Test("verify PATH does not silently verify ./seatledger.sqlite")
    func verifyWithPathArgument() throws {
        let cwd = try TemporaryDirectory(label: "cwd")
        try CLI.initLedger(db: cwd.path("seatledger.sqlite"))
        let result = try CLI.run(["verify", "../t.sqlite"], currentDirectory: cwd.url)
        #expect(result.exitCode == 2, "\(result)")
        #expect(!result.stdout.contains("intact"), "\(result)")
        #expect(result.stderr.contains("seatledger verify: unexpected argument ../t.sqlite"), "\(result)")
    }

    @Test("config PATH is a forgotten --db, not an unknown action")
    func configWithPath() throws {
        let result = try CLI.run(["config", "../t.sqlite"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("seatledger config: unexpected argument ../t.sqlite (to use the ledger at ../t.sqlite, pass --db ../t.sqlite)"),
                "\(result)")
    }

    @Test("copy and enqueue refuse stray positionals too")
    func strayPositionalWithoutDB() throws {
        let dir = try TemporaryDirectory()
        let copy = try CLI.run(["copy", "--from", dir.path("a.sqlite"), "--to", dir.path("b.sqlite"), "c.sqlite"])
        #expect(copy.exitCode == 2, "\(copy)")
        #expect(copy.stderr.contains("seatledger copy: unexpected argument c.sqlite"), "\(copy)")
        let enqueue = try CLI.run(["enqueue", "--to", "redis://127.0.0.1:1/s", "a.ndjson", "b.ndjson"])
        #expect(enqueue.exitCode == 2, "\(enqueue)")
        #expect(enqueue.stderr.contains("unexpected argument b.ndjson"), "\(enqueue)")
    }

    // MARK: Inputs checked before anything is appended

    @Test("ingest good.ndjson missing.ndjson appends nothing and names the missing input (exit 2)")
    func ingestChecksEveryInputFirst() throws {
        let test = try TestLedger()
        let good = try test.directory.writeLines([try PayloadFactory().notification(uuid: "pre-1")], to: "good.ndjson")
        let missing = test.directory.path("nope.ndjson")
        let result = try CLI.run(["ingest", "--db", test.path, good.path, missing])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("cannot read \(missing): no such file"), "\(result)")
        #expect(try test.freshStore().eventCount() == 0, "nothing may be appended before every input is checked")
    }

    @Test("record and check on a directory say 'is a directory'; check checks every FILE first")
    func directoryInputs() throws {
        let test = try TestLedger()
        let dir = try TemporaryDirectory(label: "not-a-file")
        let record = try CLI.run(["record", "--db", test.path, dir.url.path])
        #expect(record.exitCode == 2, "\(record)")
        #expect(record.stderr.contains("cannot read \(dir.url.path): is a directory"), "\(record)")

        let jws = try test.directory.write(try PayloadFactory().signedNotification(uuid: "chk-1"), to: "n.jws")
        let check = try CLI.run(["check", "--db", test.path, jws.path, dir.url.path])
        #expect(check.exitCode == 2, "\(check)")
        #expect(check.stderr.contains("cannot read \(dir.url.path): is a directory"), "\(check)")
        #expect(check.stdout.isEmpty, "no verdict before every FILE is checked: \(check)")

        let missing = try CLI.run(["check", "--db", test.path, jws.path, test.directory.path("absent.jws")])
        #expect(missing.exitCode == 2, "\(missing)")
        #expect(missing.stderr.contains("absent.jws: no such file"), "\(missing)")
        #expect(missing.stdout.isEmpty, "\(missing)")
    }

    // MARK: Option values

    @Test("quarantine list --state must be open, released, duplicate or dismissed")
    func quarantineState() throws {
        let test = try TestLedger()
        let result = try CLI.run(["quarantine", "list", "--db", test.path, "--state", "bogus"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("--state must be one of open, released, duplicate, dismissed, got bogus"), "\(result)")
        #expect(!result.stdout.contains("Quarantine is empty"), "\(result)")
        let valid = try CLI.run(["quarantine", "list", "--db", test.path, "--state", "open"])
        #expect(valid.exitCode == 0, "\(valid)")
    }

    @Test("an --as-of or --known-at on a day the month does not have is a usage error (exit 2), not the next month",
          arguments: [["group", "show", "2000000000000001", "--as-of", "2026-02-30T00:00:00Z"],
                      ["group", "show", "2000000000000001", "--known-at", "2026-11-31"],
                      ["diff", "2000000000000001", "--known-at", "2026-09-31", "--known-at", "2026-10-01"]])
    func impossibleDateArgument(_ arguments: [String]) throws {
        let test = try TestLedger()
        let result = try CLI.run(arguments + ["--db", test.path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("2026-02-30") || result.stderr.contains("2026-11-31") || result.stderr.contains("2026-09-31"),
                "the error names the value: \(result)")
        #expect(result.stdout.isEmpty, "\(result)")
    }

    @Test("a time option past year 9999 or before year 0001 is a usage error naming it, not a moment printed with the wrong year",
          arguments: ["9223372036854775807", "-9223372036854775808", "253402300800000"])
    func momentOutOfRange(_ value: String) throws {
        let test = try TestLedger()
        let result = try CLI.run(["groups", "--db", test.path, "--as-of=\(value)", "--json"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(try result.json()["error"]?["message"]?.stringValue?.hasPrefix("--as-of \(value) is outside the years 0001 to 9999") == true, "\(result)")
        let last = try CLI.run(["groups", "--db", test.path, "--as-of=253402300799999", "--json"])
        #expect(last.exitCode == 0, "\(last)")
    }

    @Test("a compact date (YYYYMMDD) is refused with the ISO form to write, not read as a moment of 1970")
    func compactDate() throws {
        let test = try TestLedger()
        let result = try CLI.run(["groups", "--db", test.path, "--as-of", "20261102", "--json"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(try result.json()["error"]?["message"]?.stringValue?.hasSuffix("write it 2026-11-02") == true, "\(result)")
    }

    @Test("`help COMMAND` is `COMMAND --help`; an unknown topic and no command at all are usage errors (exit 2)")
    func helpTopics() throws {
        for name in ["ingest", "group", "diff", "copy"] {
            let viaHelp = try CLI.run(["help", name])
            let viaFlag = try CLI.run([name, "--help"])
            #expect(viaHelp.exitCode == 0 && viaHelp.stdout == viaFlag.stdout && viaHelp.stdout.hasPrefix("Usage: seatledger \(name)"),
                    "\(viaHelp)")
        }
        let unknown = try CLI.run(["help", "nosuch"])
        #expect(unknown.exitCode == 2 && unknown.stderr.hasPrefix("seatledger help: unknown command 'nosuch'"), "\(unknown)")
        let none = try CLI.run([])
        #expect(none.exitCode == 2 && none.stdout.isEmpty && none.stderr.hasPrefix("seatledger: missing command"), "\(none)")
        #expect(try CLI.run(["help"]).exitCode == 0)
        #expect(try CLI.run(["--help"]).stdout.contains("seatledger help COMMAND"))
    }

    @Test("--version and `version` print the release and the versions of what it writes")
    func version() throws {
        for form in ["--version", "version"] {
            let result = try CLI.run([form])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdout.hasPrefix("seatledger 0."), "\(result)")
            #expect(result.stdout.contains("ledger schema 6, decoder 2, projection rules 6"), "\(result)")
        }
        #expect(try CLI.run(["--version", "x"]).exitCode == 2)
    }

    @Test("help --man is the manual page: every declared command's section holds exactly its --help text")
    func manPage() throws {
        let man = try CLI.run(["help", "--man"])
        #expect(man.exitCode == 0, "\(man)")
        #expect(man.stdout.hasPrefix(".TH SEATLEDGER 1 "), "\(man.stdout.prefix(200))")
        let declared = try JSONSerialization.jsonObject(with: Data(try CLI.run(["help", "--json"]).stdout.utf8)) as? [String: Any]
        let names = (declared?["commands"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names.count > 20)
        // Each section: `.SS "seatledger NAME"`, the summary, then a no-fill block; roff's escapes undone.
        let lines = man.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for name in names {
            let header = try #require(lines.firstIndex(of: ".SS \"seatledger \(name.replacingOccurrences(of: "-", with: "\\-"))\""),
                                      "no section for \(name)")
            let open = try #require(lines[header...].firstIndex(of: ".nf"))
            let close = try #require(lines[open...].firstIndex(of: ".fi"))
            let text = lines[(open + 1)..<close].map { line in
                (line.hasPrefix("\\&") ? String(line.dropFirst(2)) : line)
                    .replacingOccurrences(of: "\\-", with: "-").replacingOccurrences(of: "\\e", with: "\\")
            }.joined(separator: "\n")
            let help = try CLI.run([name, "--help"])
            #expect(text + "\n" == help.stdout, "the man page's \(name) section differs from `seatledger \(name) --help`")
        }
    }

    @Test("--version names the commit the binary was built from, and --json gives the same as one object")
    func versionCommit() throws {
        // The checkout this test runs in is the one the binary was built from.
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        git.arguments = ["-C", URL(fileURLWithPath: #filePath).deletingLastPathComponent().path, "rev-parse", "--short=12", "HEAD"]
        let pipe = Pipe()
        git.standardOutput = pipe
        try git.run()
        git.waitUntilExit()
        let head = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(head.count == 12)
        let text = try CLI.run(["--version"])
        let firstLine = text.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(firstLine.hasPrefix("seatledger 0.") && firstLine.contains("(commit \(head)"), "\(text)")
        let json = try CLI.run(["--version", "--json"])
        #expect(json.exitCode == 0, "\(json)")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let commit = object?["commit"] as? String ?? ""
        #expect(commit == head || commit == head + "-modified", "\(json)")
        #expect(firstLine == "seatledger \(object?["version"] as? String ?? "?") (commit \(commit))")
    }

    @Test("an option given twice is a usage error naming both values, unless it is repeatable",
          arguments: [["group", "show", "g", "--as-of", "2026-10-02", "--as-of", "2026-11-10"],
                      ["audit", "group", "g", "--format", "json", "--format=markdown"],
                      ["ingest", "--batch-size", "10", "--batch-size", "20"],
                      ["replay", "g", "--from", "2026-10-01", "--from", "2026-10-02"]])
    func repeatedOption(_ arguments: [String]) throws {
        let test = try TestLedger()
        let result = try CLI.run(arguments + ["--db", test.path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("given twice ("), "\(result)")
        #expect(result.stderr.contains("it takes one value"), "\(result)")
    }

    @Test("diff --against-apple refuses --known-at and a second --as-of instead of ignoring them")
    func diffAgainstAppleConflicts() throws {
        let test = try TestLedger()
        for extra in [["--known-at", "2026-10-01"], ["--as-of", "2026-10-01", "--as-of", "2026-11-01"]] {
            let result = try CLI.run(["diff", "g", "--against-apple", "--db", test.path] + extra)
            #expect(result.exitCode == 2, "\(extra): \(result)")
            #expect(result.stderr.contains("--against-apple"), "\(result)")
        }
    }

    @Test("check --bundle-id / --environment without --root-cert override the ledger's, not ignored")
    func checkOverridesWithoutRoot() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let jws = try factory.signedNotification(transaction: factory.transaction())
        let file = try test.directory.write(Data(jws.utf8), to: "n.jws")
        let plain = try CLI.run(["check", file.path, "--db", test.path])
        #expect(plain.exitCode == 0 && plain.stdout.contains("verified"), "\(plain)")
        let otherBundle = try CLI.run(["check", file.path, "--db", test.path, "--bundle-id", "com.other.app"])
        #expect(otherBundle.exitCode == 1 && otherBundle.stdout.contains("REFUSED (bundle_mismatch)"), "\(otherBundle)")
        #expect(otherBundle.stdout.contains("com.other.app"), "\(otherBundle)")
        let needsAppId = try CLI.run(["check", file.path, "--db", test.path, "--environment", "Production"])
        #expect(needsAppId.exitCode == 2 && needsAppId.stderr.contains("--app-apple-id"), "\(needsAppId)")
        let otherEnvironment = try CLI.run(["check", file.path, "--db", test.path, "--environment", "Production", "--app-apple-id", "1234"])
        #expect(otherEnvironment.exitCode == 1 && otherEnvironment.stdout.contains("REFUSED (environment_mismatch)"), "\(otherEnvironment)")
        let same = try CLI.run(["check", file.path, "--db", test.path, "--bundle-id", TestLedger.bundleId])
        #expect(same.exitCode == 0, "\(same)")
    }

    @Test("values sibling commands refuse are refused everywhere: seats requests --state, replay --from after --to")
    func badValuesRefused() throws {
        let test = try TestLedger()
        let state = try CLI.run(["seats", "requests", "--state", "bogus", "--db", test.path])
        #expect(state.exitCode == 2 && state.stderr.contains("--state must be one of pending, claimed, failed, got bogus"), "\(state)")
        #expect(try CLI.run(["seats", "requests", "--state", "pending", "--db", test.path]).exitCode == 0)
        let window = try CLI.run(["replay", "g", "--from", "2026-10-15", "--to", "2026-10-01", "--db", test.path])
        #expect(window.exitCode == 2 && window.stderr.contains("--from (2026-10-15T00:00:00.000Z) is after --to"), "\(window)")
    }

    @Test("quarantine retry of an id that does not exist, or is not open, is an error (exit 2), not '0 released'")
    func retryUnknownId() throws {
        let test = try TestLedger()
        try test.append(line: "{not json")
        let missing = try CLI.run(["quarantine", "retry", "999", "--db", test.path])
        #expect(missing.exitCode == 2 && missing.stderr.contains("no quarantine item #999"), "\(missing)")
        #expect(!missing.stdout.contains("released"), "\(missing)")
        let open = try CLI.run(["quarantine", "retry", "1", "--db", test.path])
        #expect(open.exitCode == 3 && open.stdout.contains("1 still refused"), "the open item is retried (and still refused): \(open)")
    }

    @Test("ingest refuses options of the other mode instead of ignoring them (exit 2, nothing appended)",
          arguments: [(["--follow"], "--follow watches spool directories"),
                      (["--until-empty"], "--until-empty applies to a Redis stream"),
                      (["--consumer-group", "g"], "--consumer-group applies to a Redis stream"),
                      (["--poll-interval", "2"], "--poll-interval applies with --follow")])
    func ingestModeOptions(_ extra: [String], _ message: String) throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let file = try test.directory.writeLines([try factory.notification(transaction: factory.transaction())], to: "in.ndjson")
        let result = try CLI.run(["ingest", "--db", test.path, file.path] + extra)
        #expect(result.exitCode == 2 && result.stderr.contains(message), "\(result)")
        #expect(try test.eventCount() == 0)
        let fromRedis = try CLI.run(["ingest", "--db", test.path, "--from", "redis://127.0.0.1:1/s", "--spool"])
        #expect(fromRedis.exitCode == 2 && fromRedis.stderr.contains("--spool applies to files and spool directories, not --from"),
                "\(fromRedis)")
    }

    @Test("--out naming a directory: 'cannot write PATH: is a directory' (exit 2), not a Foundation error number")
    func outIsDirectory() throws {
        let test = try TestLedger()
        try test.append(line: "{not json")
        // (audit --out writes through the same FileChecks.write.)
        let result = try CLI.run(["quarantine", "show", "1", "--out", test.directory.url.path, "--db", test.path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("cannot write \(test.directory.url.path): is a directory"), "\(result)")
        #expect(!result.stderr.contains("512"), "\(result)")
    }

    @Test("a missing input (event, quarantine item, file) is exit 2 naming it, without the --help pointer a usage error gets")
    func missingInputIsNotUsage() throws {
        let test = try TestLedger()
        for arguments in [["quarantine", "show", "999"], ["events", "show", "9999"], ["ingest", "/nonexistent/in.ndjson"]] {
            let result = try CLI.run(arguments + ["--db", test.path])
            #expect(result.exitCode == 2, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("seatledger \(arguments[0]): "), "\(result)")
            #expect(!result.stderr.contains("--help"), "\(arguments): \(result)")
        }
        let usage = try CLI.run(["events", "--limit", "x", "--db", test.path])
        #expect(usage.exitCode == 2 && usage.stderr.contains("Run `seatledger events --help` for usage."), "\(usage)")
    }

    @Test("init names every missing required option at once; quarantine list --state says which state is empty")
    func smallWordings() throws {
        let directory = try TemporaryDirectory(label: "init-missing")
        let result = try CLI.run(["init", "--db", directory.path("l.sqlite"), "--bundle-id", "b"])
        #expect(result.exitCode == 2 && result.stderr.contains("--environment, --root-cert are required"), "\(result)")
        let test = try TestLedger()
        try test.append(line: "{not json")
        let released = try CLI.run(["quarantine", "list", "--state", "released", "--db", test.path])
        #expect(released.exitCode == 0 && released.stdout == "No released quarantine items.\n", "\(released)")
        #expect(try CLI.run(["seats", "requests", "--db", test.path]).stdout == "No Claim Seat requests.\n")
    }

    @Test("events --limit N lists the first N events, with or without --mentioning")
    func eventsLimit() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        for uuid in ["l-1", "l-2", "l-3"] { try test.append(line: try factory.notification(uuid: uuid, transaction: factory.transaction())) }
        let two = try CLI.run(["events", "--limit", "2", "--json", "--db", test.path])
        #expect(try two.json().arrayValue?.compactMap { $0["eventId"]?.stringValue } == ["l-1", "l-2"], "\(two)")
        let all = try CLI.run(["events", "--json", "--db", test.path])
        #expect(try all.json().arrayValue?.count == 3)
        let mentioning = try CLI.run(["events", "--mentioning", PayloadFactory.defaultOriginalTransactionId, "--limit", "1", "--json",
                                      "--db", test.path])
        #expect(try mentioning.json().arrayValue?.compactMap { $0["eventId"]?.stringValue } == ["l-1"], "\(mentioning)")
    }

    @Test("an encrypted private key is refused at once, saying so, and no passphrase is read from stdin")
    func encryptedKeyNeverPrompts() throws {
        let test = try TestLedger()
        let key = TestPaths.pki.appendingPathComponent("encrypted-p256-key.p8").path
        // The passphrase is on stdin: OpenSSL's default would read it and load the key.
        let result = try CLI.run(["backfill", "--since", "1d", "--db", test.path, "--private-key", key, "--key-id", "K", "--issuer-id", "I"],
                                 stdin: Data("x\nx\n".utf8), timeout: 30)
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("the private key is encrypted (passphrase-protected)"), "\(result)")
        #expect(!result.stderr.contains("pass phrase"), "\(result)")
    }

    @Test("an API option given empty is refused, not replaced by the environment's value",
          arguments: ["--key-id", "--issuer-id", "--private-key", "--credentials", "--api-base-url"])
    func emptyAPIOption(_ option: String) throws {
        let test = try TestLedger()
        for value in ["", "  ", "\n"] {
            let result = try CLI.run(["backfill", "--since", "1d", "--db", test.path, option, value],
                                     environment: ["SEATLEDGER_KEY_ID": "k", "SEATLEDGER_ISSUER_ID": "i"])
            // An empty string is refused where options are read, blanks where the API options are.
            let reason = value.isEmpty ? "\(option) needs a value, not an empty string" : "\(option) is empty"
            #expect(result.exitCode == 2 && result.stderr.contains(reason), "\(value.debugDescription): \(result)")
        }
    }

    @Test("--poll-interval must be a positive number", arguments: ["abc", "-1", "0", "nan", "inf"])
    func pollInterval(_ value: String) throws {
        let test = try TestLedger()
        let spool = try TemporaryDirectory(label: "spool")
        let result = try CLI.run(["ingest", "--db", test.path, "--follow", "--poll-interval=\(value)", spool.url.path],
                                 timeout: 15)
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("--poll-interval must be a positive number of seconds, got \(value)"), "\(result)")
    }

    @Test("check validates --app-apple-id and --environment like init does")
    func checkValidatesOptions() throws {
        let test = try TestLedger()
        let jws = try test.directory.write(try PayloadFactory().signedNotification(uuid: "chk-2"), to: "n.jws")
        let trust = ["--root-cert", TestPaths.testRoot.path, "--bundle-id", TestLedger.bundleId]
        let badId = try CLI.run(["check", jws.path, "--environment", "Sandbox", "--app-apple-id", "abc"] + trust)
        #expect(badId.exitCode == 2, "\(badId)")
        #expect(badId.stderr.contains("--app-apple-id must be a positive number (the app's Apple id), got abc"), "\(badId)")
        for id in ["-5", "0"] {
            let notPositive = try CLI.run(["check", jws.path, "--environment", "Production", "--app-apple-id", id] + trust)
            #expect(notPositive.exitCode == 2 && notPositive.stderr.contains("must be a positive number"), "\(id): \(notPositive)")
        }
        let badEnvironment = try CLI.run(["check", jws.path, "--environment", "Bogus"] + trust)
        #expect(badEnvironment.exitCode == 2, "\(badEnvironment)")
        #expect(badEnvironment.stderr.contains("--environment must be one of"), "\(badEnvironment)")
        #expect(badEnvironment.stderr.contains("got Bogus"), "\(badEnvironment)")
        let good = try CLI.run(["check", jws.path, "--environment", "Sandbox"] + trust)
        #expect(good.exitCode == 0, "\(good)")
    }

    @Test("check --kind transaction refuses a signed notification (kind_mismatch); a transaction verifies")
    func checkEnforcesKind() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let notification = try test.directory.write(try factory.signedNotification(uuid: "kind-1"), to: "n.jws")
        let refused = try CLI.run(["check", "--db", test.path, "--kind", "transaction", "--json", notification.path])
        #expect(refused.exitCode == 1, "\(refused)")
        let item = try #require(try refused.json().arrayValue?.first)
        #expect(item["verified"] == false)
        #expect(item["errorCode"] == "kind_mismatch", "\(item.canonicalString())")
        #expect(item["reason"]?.stringValue?.contains("use --kind notification") == true, "\(item.canonicalString())")

        let transaction = try test.directory.write(try factory.sign(factory.transaction()), to: "t.jws")
        let asRenewal = try CLI.run(["check", "--db", test.path, "--kind", "renewal", transaction.path])
        #expect(asRenewal.exitCode == 1, "\(asRenewal)")
        #expect(asRenewal.stdout.contains("REFUSED (kind_mismatch)"), "\(asRenewal)")
        let asTransaction = try CLI.run(["check", "--db", test.path, "--kind", "transaction", transaction.path])
        #expect(asTransaction.exitCode == 0, "\(asTransaction)")
    }

    @Test("audit --json is --format json; --json with another --format is a usage error")
    func auditJSON() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = try factory.notification(uuid: "audit-1", transaction: factory.transaction())
        #expect(try CLI.run(["ingest", "--db", test.path], stdin: Data(line.utf8)).exitCode == 0)
        let group = PayloadFactory.defaultOriginalTransactionId
        let json = try CLI.run(["audit", "group", group, "--db", test.path, "--json"])
        #expect(json.exitCode == 0, "\(json)")
        let viaFormat = try CLI.run(["audit", "group", group, "--db", test.path, "--format", "json"])
        #expect(try json.json().objectValue != nil, "\(json)")
        #expect(try json.json()["summary"] == viaFormat.json()["summary"])
        let conflict = try CLI.run(["audit", "group", group, "--db", test.path, "--json", "--format", "html"])
        #expect(conflict.exitCode == 2, "\(conflict)")
        #expect(try conflict.json()["error"]?["message"]?.stringValue?.contains("conflicts with --format html") == true, "\(conflict)")
        #expect(try CLI.run(["audit", "--help"]).stdout.contains("--json           the same as --format json"))
    }

    // MARK: File errors without Foundation dumps

    @Test("a missing root certificate: 'cannot read FILE: no such file' (init, config add-root, check)")
    func missingRootCertificate() throws {
        let dir = try TemporaryDirectory()
        let missing = dir.path("nope.pem")
        let initResult = try CLI.run(["init", "--db", dir.path("l.sqlite"), "--bundle-id", "com.example.reps",
                                      "--environment", "Sandbox", "--root-cert", missing])
        let test = try TestLedger()
        let addRoot = try CLI.run(["config", "add-root", missing, "--db", test.path])
        let jws = try test.directory.write("x.y.z", to: "n.jws")
        let check = try CLI.run(["check", jws.path, "--root-cert", missing, "--bundle-id", "b", "--environment", "Sandbox"])
        for result in [initResult, addRoot, check] {
            #expect(result.exitCode == 2, "\(result)")
            #expect(result.stderr.contains("cannot read \(missing): no such file"), "\(result)")
            #expect(!result.stderr.contains("NSCocoaErrorDomain") && !result.stderr.contains("Error Domain"), "\(result)")
        }
    }

    @Test("quarantine show --out into a missing directory: 'cannot write PATH: reason' (exit 2)")
    func quarantineShowOut() throws {
        let test = try TestLedger()
        #expect(try CLI.run(["ingest", "--db", test.path], stdin: Data("garbage\n".utf8)).exitCode == 3)
        let out = "/nonexistent-\(UUID().uuidString)/raw.bin"
        let result = try CLI.run(["quarantine", "show", "1", "--db", test.path, "--out", out])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("cannot write \(out): no such file"), "\(result)")
        #expect(!result.stderr.contains("Error Domain"), "\(result)")
    }

    // MARK: copy onto itself

    @Test("copy refuses the same SQLite file named differently (./, .., symlink)")
    func copyOntoItself() throws {
        let test = try TestLedger()
        let directory = test.directory.url
        let link = try TemporaryDirectory(label: "link")
        try FileManager.default.createSymbolicLink(atPath: link.path("alias.sqlite"), withDestinationPath: test.path)
        let spellings = ["./ledger.sqlite", "../\(directory.lastPathComponent)/ledger.sqlite", link.path("alias.sqlite"), test.path]
        for destination in spellings {
            let result = try CLI.run(["copy", "--from", "ledger.sqlite", "--to", destination], currentDirectory: directory)
            #expect(result.exitCode == 2, "\(destination): \(result)")
            #expect(result.stderr.contains("name the same ledger"), "\(destination): \(result)")
        }
        #expect(try test.freshStore().verifyChain().isIntact)
    }

    // MARK: Interrupted ingest

    /// Starts `ingest` reading a FIFO (so the input never ends), sends SIGTERM once the child has
    /// the FIFO open, then feeds lines until it exits.
    private func interruptedIngest(extra: [String]) throws -> (CLIResult, TestLedger) {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let fifo = test.directory.path("input.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // Read-write: the child's open does not block, writes never raise SIGPIPE, and the input
        // never reaches end of file while this descriptor is open.
        let writer = open(fifo, O_RDWR)
        try #require(writer >= 0)
        defer { close(writer) }
        let child = try CLI.start(["ingest", "--db", test.path, "--batch-size", "1"] + extra + [fifo])
        defer { if child.isRunning { child.kill() } }
        let deadline = Date().addingTimeInterval(30)
        func childHasFIFOOpen() -> Bool {
            let fds = "/proc/\(child.pid)/fd"
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []
            return entries.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\($0)")) == fifo }
        }
        while !childHasFIFOOpen() {
            try #require(child.isRunning && Date() < deadline, "ingest never opened its input")
            Thread.sleep(forTimeInterval: 0.02)
        }
        child.kill(SIGTERM)
        var count = 0
        while child.isRunning, Date() < deadline {
            count += 1
            let line = Data((try factory.notification(uuid: "int-\(count)") + "\n").utf8)
            _ = line.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return (try child.wait(timeout: 20), test)
    }

    @Test("SIGTERM during a file ingest: summary with interrupted, exit 4; committed batches kept",
          .timeLimit(.minutes(2)))
    func interruptedFileIngest() throws {
        let (json, test) = try interruptedIngest(extra: ["--json"])
        #expect(!json.terminatedBySignal && json.exitCode == 4, "\(json)")
        let object = try json.json()
        #expect(object["interrupted"] == true, "\(json)")
        #expect(object["appended"]?.int64Value == (try test.freshStore().eventCount()), "\(json)")

        let (human, _) = try interruptedIngest(extra: [])
        #expect(!human.terminatedBySignal && human.exitCode == 4, "\(human)")
        #expect(human.stdout.contains("interrupted: input not fully read; re-run to continue"), "\(human)")
        #expect(human.stdout.contains("re-running skips them as duplicates"), "\(human)")
    }

    @Test("an ingest that read all its input exits 0 without interrupted; exit code 4 is documented")
    func uninterruptedIngest() throws {
        let test = try TestLedger()
        let file = try test.directory.writeLines([try PayloadFactory().notification(uuid: "whole-1")], to: "a.ndjson")
        let result = try CLI.run(["ingest", "--db", test.path, "--json", file.path])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try result.json()["interrupted"] == nil)
        let help = try CLI.run(["ingest", "--help"])
        #expect(help.stdout.contains("4  a file or stdin ingest was stopped by SIGINT/SIGTERM before reading all its input"), "\(help)")
        #expect(help.stdout.contains("\"interrupted\": true"), "\(help)")
    }

    // MARK: Unreachable Redis

    /// Whether process `pid` has taken over SIGTERM (caught or ignored, i.e. `StopSignal` is
    /// installed), from the `SigCgt` / `SigIgn` masks of `/proc/PID/status`.
    private static func handlesSIGTERM(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        let bit = UInt64(1) << (UInt64(SIGTERM) - 1)
        return status.split(separator: "\n").contains { line in
            guard line.hasPrefix("SigCgt:") || line.hasPrefix("SigIgn:"),
                  let mask = UInt64(line.dropFirst("SigXxx:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            else { return false }
            return mask & bit != 0
        }
    }

    @Test("ingest --from an unreachable Redis with --until-empty reports each failure and gives up (exit 2)",
          .timeLimit(.minutes(1)))
    func unreachableRedisUntilEmpty() throws {
        let test = try TestLedger()
        let result = try CLI.run(["ingest", "--db", test.path, "--from", "redis://127.0.0.1:1/appstore", "--until-empty"],
                                 timeout: 40)
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("ingest redis://127.0.0.1:1/appstore: cannot reach Redis (attempt 1 of 5)"), "\(result)")
        #expect(result.stderr.contains("(attempt 5 of 5)") && result.stderr.contains("giving up"), "\(result)")
        #expect(result.stderr.contains("seatledger ingest: error: cannot reach redis://127.0.0.1:1/appstore after 5 attempts"), "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
    }

    @Test("a long-running Redis consumer keeps retrying, says so on stderr, and SIGTERM still exits 0",
          .timeLimit(.minutes(1)))
    func unreachableRedisFollow() throws {
        let test = try TestLedger()
        let child = try CLI.start(["ingest", "--db", test.path, "--from", "redis://127.0.0.1:1/appstore"])
        defer { if child.isRunning { child.kill() } }
        let deadline = Date().addingTimeInterval(30)
        while !Self.handlesSIGTERM(child.pid) {
            try #require(child.isRunning && Date() < deadline, "the consumer never installed its signal handlers")
            Thread.sleep(forTimeInterval: 0.02)
        }
        // Wait for the consumer to report a retry (the condition, not a guessed delay).
        while !child.stderrSoFar.contains("retrying") {
            try #require(child.isRunning && Date() < deadline, "the consumer never reported a retry: \(child.stderrSoFar)")
            Thread.sleep(forTimeInterval: 0.02)
        }
        child.kill(SIGTERM)
        let result = try child.wait(timeout: 20)
        #expect(!result.terminatedBySignal && result.exitCode == 0, "\(result)")
        #expect(result.stderr.contains("ingest redis://127.0.0.1:1/appstore: cannot reach Redis (attempt 1)"), "\(result)")
        #expect(result.stderr.contains("retrying"), "\(result)")
    }

    @Test("credentials in a redis:// URL never reach stderr")
    func redisCredentialsRedacted() throws {
        let test = try TestLedger()
        let result = try CLI.run(["ingest", "--db", test.path, "--from", "redis://reader:s3cret@127.0.0.1:1/appstore",
                                  "--until-empty"], timeout: 60)
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("redis://***@127.0.0.1:1/appstore"), "\(result)")
        #expect(!result.stderr.contains("s3cret"), "\(result)")
    }

    // MARK: diff wording

    @Test("diff headers do not repeat their label")
    func diffHeader() throws {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let line = try factory.notification(uuid: "diff-1", transaction: factory.transaction())
        #expect(try CLI.run(["ingest", "--db", test.path], stdin: Data(line.utf8)).exitCode == 0)
        let group = PayloadFactory.defaultOriginalTransactionId
        let asOf = try CLI.run(["diff", group, "--db", test.path, "--as-of", "2025-06-02T00:00:00Z", "--as-of", "2025-06-03T00:00:00Z"])
        #expect(asOf.stdout.hasPrefix("Group \(group): as of 2025-06-02T00:00:00.000Z → as of 2025-06-03T00:00:00.000Z\n"), "\(asOf)")
        let knownAt = try CLI.run(["diff", group, "--db", test.path, "--known-at", "2099-01-01T00:00:00Z", "--known-at", "2099-01-02T00:00:00Z"])
        #expect(knownAt.stdout.hasPrefix("Group \(group): known at 2099-01-01T00:00:00.000Z → known at 2099-01-02T00:00:00.000Z"), "\(knownAt)")
        #expect(!asOf.stdout.contains("as-of as of") && !knownAt.stdout.contains("known-at known at"))
    }

    @Test("database errors name the ledger: a directory, a missing directory, a long statement")
    func databaseErrorsNameTheLedger() throws {
        let directory = try TemporaryDirectory(label: "not-a-ledger")
        for command in [["groups"], ["verify"]] {
            let result = try CLI.run(command + ["--db", directory.url.path])
            #expect(result.exitCode == 2, "\(result)")
            #expect(result.stderr.contains("\(directory.url.path) is a directory, not a SeatLedger ledger file"), "\(result)")
        }
        let missing = directory.url.appendingPathComponent("no/such/dir/x.sqlite").path
        let result = try CLI.run(["init", "--db", missing, "--bundle-id", TestLedger.bundleId, "--environment", "Sandbox",
                                  "--root-cert", TestPaths.testRoot.path])
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("on \(missing): unable to open database file (its directory \(directory.url.path)/no/such/dir does not exist)"), "\(result)")

        let long = String(repeating: "x", count: 500)
        let text = SQLiteError(resultCode: 8, message: "attempt to write a readonly database", sql: "INSERT " + long, path: "/l.sqlite").description
        #expect(text.hasPrefix("SQLite error 8 on /l.sqlite: attempt to write a readonly database (the file or its directory is read-only"))
        #expect(text.count < 350 && text.hasSuffix("…`"), "the statement is quoted, cut short: \(text)")
    }

    /// Issue #48 finding 6: argument errors echoed URLs with their passwords: `--db`, `--to` and
    /// `--from` given twice (text and `--json`, also in `copy` and `enqueue`), a URL as a positional
    /// ("unexpected argument …", three times), a URL as an input file ("cannot read …"), and the
    /// `postgresql:/` and `redis:/` typos. Every URL-taking option and positional, every form.
    @Test("no argument error prints a URL's password: options given twice, stray positionals, unreadable inputs, single-slash typos")
    func argumentErrorsHidePasswords() throws {
        let test = try TestLedger()
        let secret = "PW-s3cr3t-48"
        let forms = [
            "postgresql://app:\(secret)@127.0.0.1:1/ledger", "postgres://app:\(secret)@127.0.0.1:1/ledger",
            "POSTGRESQL://app:\(secret)@127.0.0.1:1/ledger", "postgresql:/app:\(secret)@127.0.0.1:1/ledger",
            "postgresql://app@127.0.0.1:1/ledger?sslmode=disable&password=\(secret)",
            "postgresql://app:\(secret)/x@y@127.0.0.1:1/ledger", "redis://:\(secret)@127.0.0.1:1/stream",
            "redis://user:\(secret)@127.0.0.1:1/stream", "redis:/:\(secret)@127.0.0.1:1/stream",
        ]
        var leaks: [String] = []
        var runs = 0
        for url in forms {
            let other = url.replacingOccurrences(of: "127.0.0.1:1", with: "127.0.0.1:2")
            var commands: [[String]] = [
                ["groups", "--db", url, "--db", other], ["verify", "--db", url, "--db", other],
                ["copy", "--from", url, "--from", other, "--to", test.path], ["copy", "--to", url, "--to", other, "--from", test.path],
                ["enqueue", "--to", url, "--to", other, "in.ndjson"],
                ["ingest", "--db", test.path, "--from", url, "--from", other],
                ["groups", url, "--db", test.path], ["verify", url, "--db", test.path], ["config", "show", url, "--db", test.path],
                ["copy", url, "--from", test.path, "--to", other], ["enqueue", "--to", url, "in.ndjson", other],
                ["ingest", "--db", test.path, url], ["check", url, "--db", test.path], ["record", "--db", test.path, url],
                ["quarantine", "show", url, "--db", test.path],
            ]
            if url.contains(":/"), !url.contains("://") { commands += [["groups", "--db", url], ["ingest", "--db", test.path, "--from", url]] }
            for command in commands {
                for json in [false, true] {
                    let result = try CLI.run(command + (json ? ["--json"] : []))
                    runs += 1
                    if result.stdout.contains(secret) || result.stderr.contains(secret) {
                        leaks.append("\(command.joined(separator: " "))\(json ? " --json" : ""): \(result.stdout)\(result.stderr)")
                    }
                }
            }
        }
        #expect(runs > 200)
        #expect(leaks.isEmpty, "\(leaks.count) commands printed the password:\n\(leaks.prefix(12).joined(separator: "\n"))")
    }
}
