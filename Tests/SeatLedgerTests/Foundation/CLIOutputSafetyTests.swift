import AppStoreModels
import Foundation
import Testing

/// What a command writes, and what it says when it cannot: a ledger is never overwritten by an
/// `--out`, an empty option value names no file, and with `--json` a failure is one object.
@Suite("CLI: outputs that cannot destroy a ledger, and one JSON object on failure")
struct CLIOutputSafetyTests {
    /// A file's bytes, to show it is unchanged.
    private static func contents(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// A ledger with one group and one quarantined line.
    private static func ledger() throws -> (TestLedger, groupKey: String) {
        let test = try TestLedger()
        let factory = try PayloadFactory()
        let transaction = factory.transaction()
        try test.append(line: try factory.notification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: transaction))
        let file = try test.directory.writeLines(["not json"], to: "in.ndjson")
        #expect(try CLI.run(["ingest", "--db", test.path, file.path]).exitCode == 3)
        let groups = try CLI.run(["groups", "--db", test.path, "--json"])
        let key = try #require(try groups.json().arrayValue?.first?["groupKey"]?.stringValue, "\(groups)")
        return (test, key)
    }

    @Test("audit --out and quarantine show --out refuse a SQLite database (the ledger itself or another) and leave it as it was")
    func outRefusesDatabases() throws {
        let (test, key) = try Self.ledger()
        let other = try TestLedger()
        for target in [test.path, other.path] {
            let before = try Self.contents(target)
            let audit = try CLI.run(["audit", "group", key, "--db", test.path, "--out", target, "--json"])
            #expect(audit.exitCode == 2, "\(audit)")
            #expect(try audit.json()["error"]?["message"]?.stringValue == "cannot write \(target): it is a SQLite database (a ledger?); refusing to overwrite it: name another file")
            let show = try CLI.run(["quarantine", "show", "1", "--raw", "--db", test.path, "--out", target])
            #expect(show.exitCode == 2 && show.stderr.contains("refusing to overwrite it"), "\(show)")
            #expect(try Self.contents(target) == before, "\(target) unchanged")
        }
        // A report file that exists is replaced, as before.
        let report = try test.directory.write("old report", to: "report.html")
        #expect(try CLI.run(["audit", "group", key, "--db", test.path, "--format", "html", "--out", report.path]).exitCode == 0)
        #expect(try String(contentsOf: report, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
    }

    @Test("quarantine show --raw --out writes the bytes to the file only; --raw with --json is a usage error")
    func quarantineShowOutputs() throws {
        let (test, _) = try Self.ledger()
        let out = test.directory.path("raw.bin")
        let written = try CLI.run(["quarantine", "show", "1", "--raw", "--out", out, "--db", test.path])
        #expect(written.exitCode == 0 && written.stdoutData.isEmpty, "\(written)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data("not json".utf8))
        #expect(written.stderr.contains("Wrote the 8 raw bytes of #1 to \(out)"))
        let both = try CLI.run(["quarantine", "show", "1", "--raw", "--json", "--db", test.path])
        #expect(both.exitCode == 2, "\(both)")
        #expect(try both.json()["error"]?["code"] == "usage")
    }

    @Test("an empty option value is a usage error naming the option", arguments: [
        (["groups", "--db", ""], "--db"), (["groups", "--db="], "--db"),
        (["init", "--db", "", "--bundle-id", "com.x", "--environment", "Sandbox"], "--db"),
        (["copy", "--from", "x.sqlite", "--to", ""], "--to"), (["demo", "--keep", ""], "--keep"),
    ])
    func emptyValues(_ arguments: [String], option: String) throws {
        let result = try CLI.run(arguments + ["--json"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(try result.json()["error"]?["message"] == .string("\(option) needs a value, not an empty string"), "\(result)")
    }

    @Test("an empty $SEATLEDGER_DB falls back to ./seatledger.sqlite, as an unset one does")
    func emptyEnvironmentLedger() throws {
        let test = try TestLedger()
        let result = try CLI.run(["groups", "--json"], environment: ["SEATLEDGER_DB": ""])
        #expect(result.exitCode == 2, "\(result)")
        #expect(try result.json()["error"]?["message"]?.stringValue?.hasPrefix("no ledger at seatledger.sqlite;") == true, "\(result)")
        let named = try CLI.run(["groups", "--json"], environment: ["SEATLEDGER_DB": test.path])
        #expect(named.exitCode == 0, "\(named)")
    }

    @Test("verify --anchor to a path that cannot be written prints one JSON error object, not the report and then the error")
    func anchorFailureIsOneObject() throws {
        let (test, _) = try Self.ledger()
        let result = try CLI.run(["verify", "--db", test.path, "--anchor", test.directory.path("missing/anchor"), "--json"])
        #expect(result.exitCode == 2, "\(result)")
        let object = try result.json()  // the whole of stdout parses as one value
        #expect(object["error"]?["message"]?.stringValue?.contains("missing/anchor") == true, "\(object)")
        #expect(object["intact"] == nil)
    }

    @Test("copy names the end it could not open (--from), without the URL's password")
    func copyNamesTheEnd() throws {
        let result = try CLI.run(["copy", "--from", "postgresql://a:secret@127.0.0.1:1/src", "--to", "postgresql://b@127.0.0.1:2/dst", "--json"])
        #expect(result.exitCode == 2, "\(result)")
        let message = try #require(try result.json()["error"]?["message"]?.stringValue, "\(result)")
        #expect(message.hasPrefix("--from postgresql://a@127.0.0.1:1/src: "), "\(message)")
        #expect(!result.stdout.contains("secret") && !result.stderr.contains("secret"))
    }

    @Test("diff --against-apple --as-of T compares with Apple's answers effective by T, not with later ones")
    func againstAppleAsOf() throws {
        let directory = try TemporaryDirectory(label: "demo")
        let demo = directory.path("demo.sqlite")
        #expect(try CLI.run(["demo", "--keep", demo]).exitCode == 0)
        // Group 2000001000000001's Get Group Members was answered at 04:00.
        let before = try CLI.run(["diff", "2000001000000001", "--against-apple", "--as-of", "2026-10-01T03:30:00Z", "--db", demo])
        #expect(before.exitCode == 0 && before.stdout.contains("No Get Seat Info or Get Group Members response recorded"), "\(before)")
        #expect(!before.stdout.contains("04:00"), "\(before)")
        let after = try CLI.run(["diff", "2000001000000001", "--against-apple", "--as-of", "2026-10-01T05:00:00Z", "--db", demo])
        #expect(after.stdout.contains("Apple observed at 2026-10-01T04:00:00.000Z"), "\(after)")
    }

    @Test("ingest --follow takes one spool directory: a second would never be reached by the follow loop")
    func followOneSpool() throws {
        let test = try TestLedger()
        let first = test.directory.url("sp1"), second = test.directory.url("sp2")
        for spool in [first, second] { try FileManager.default.createDirectory(at: spool.appendingPathComponent("done"), withIntermediateDirectories: true) }
        let result = try CLI.run(["ingest", "--db", test.path, "--follow", first.path, second.path, "--json"])
        #expect(result.exitCode == 2, "\(result)")
        #expect(try result.json()["error"]?["message"]?.stringValue?.hasPrefix("--follow watches one spool directory, got 2") == true, "\(result)")
    }

    @Test("help --help prints the global help")
    func helpAboutHelp() throws {
        let result = try CLI.run(["help", "--help"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("seatledger — "))
    }

    @Test("serve refuses a --credentials or --private-key file it cannot read, at start, naming the option")
    func serveChecksCredentialFiles() throws {
        let test = try TestLedger()
        for option in ["--credentials", "--private-key"] {
            let missing = test.directory.path("nofile")
            let result = try CLI.run(["serve", "--db", test.path, "--listen", "127.0.0.1:0", option, missing])
            #expect(result.exitCode == 2, "\(result)")
            #expect(result.stderr.contains("\(option): cannot read \(missing): no such file"), "\(result)")
        }
    }

    @Test("ingest --from redis://… --until-empty that cannot reach Redis is one JSON error with --json")
    func unreachableQueueIsOneObject() throws {
        let test = try TestLedger()
        let result = try CLI.run(["ingest", "--db", test.path, "--from", "redis://127.0.0.1:1/s", "--until-empty", "--json"])
        #expect(result.exitCode == 2, "\(result)")
        let message = try #require(try result.json()["error"]?["message"]?.stringValue, "\(result)")
        #expect(message.hasPrefix("cannot reach redis://127.0.0.1:1/s after "), "\(message)")
    }
}
