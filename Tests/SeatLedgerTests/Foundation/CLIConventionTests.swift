import AppStoreModels
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Terminal conventions through the built binary: progress only on a terminal or with
/// `--progress`, `--quiet`, colour rules (`NO_COLOR`, `TERM=dumb`) on a real pseudo-terminal,
/// the stdin note, "stopping…" on a signal, and the JSON status lines of a consumer.
@Suite("CLI conventions", .serialized)
struct CLIConventionTests {
    static let streams = ["guide-10-9-6", "developer-unclaim"].map {
        TestPaths.repoRoot.appendingPathComponent("Events/scenarios/\($0).ndjson")
    }

    /// A ledger with the test root, and one input file holding the two streams.
    static func ledgerAndInput() throws -> (TemporaryDirectory, db: String, input: String) {
        let directory = try TemporaryDirectory(label: "conventions")
        let db = directory.path("ledger.sqlite")
        try CLI.initLedger(db: db)
        let text = try streams.map { try String(contentsOf: $0, encoding: .utf8) }.joined()
        let input = try directory.write(text, to: "input.ndjson")
        return (directory, db, input.path)
    }

    /// Runs `command` (a shell line) on a pseudo-terminal through util-linux `script`; returns
    /// what the terminal showed.
    static func onTerminal(_ command: String, environment: [String: String] = [:]) throws -> String {
        let directory = try TemporaryDirectory(label: "pty")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qefc", command, "/dev/null"]
        var env = ProcessInfo.processInfo.environment
        env["SEATLEDGER_DB"] = nil
        env["NO_COLOR"] = nil
        env["TERM"] = "xterm"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let output = directory.url("out")
        try #require(FileManager.default.createFile(atPath: output.path, contents: nil), "could not create \(output.path)")
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = process.standardOutput
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return String(decoding: try Data(contentsOf: output), as: UTF8.self)
    }

    @Test("progress: nothing on a non-terminal, done/total and ETA with --progress, nothing with --quiet")
    func progressRules() throws {
        let (first, db, input) = try Self.ledgerAndInput()
        let plain = try CLI.run(["ingest", "--api-responses", "--db", db, input, "--batch-size", "4"])
        #expect(plain.exitCode == 0 && plain.stderr.isEmpty, "\(plain)")
        let (second, db2, _) = try Self.ledgerAndInput()
        let shown = try CLI.run(["ingest", "--api-responses", "--db", db2, input, "--batch-size", "4", "--progress"])
        #expect(shown.exitCode == 0, "\(shown)")
        let lines = shown.stderr.split(separator: "\n")
        #expect(lines.last?.hasPrefix("ingest: 100% (") == true, "\(shown.stderr)")
        #expect(lines.contains { $0.contains("ETA ") && $0.contains("/s") }, "a partial line has a rate and an ETA: \(shown.stderr)")
        let verify = try CLI.run(["verify", "--db", db2, "--progress"])
        #expect(verify.stderr.contains("verify: 23 of 23 events checked (100%)"), "\(verify)")
        let (third, db3, _) = try Self.ledgerAndInput()
        let quiet = try CLI.run(["ingest", "--api-responses", "--db", db3, input, "--progress", "--quiet"])
        #expect(quiet.exitCode == 0 && quiet.stderr.isEmpty && quiet.stdout.contains("appended"), "\(quiet)")
        withExtendedLifetime((first, second, third)) {}
    }

    @Test("colour on a terminal only, never with NO_COLOR or TERM=dumb; ingest on a terminal says it reads stdin")
    func terminalRules() throws {
        let fixture = try GoldenCLITests.fixture.get()
        let binary = try CLI.binary().path
        let audit = "\(binary) audit group \(GoldenCLITests.guideGroup) --db \(fixture.db) --format text"
        #expect(try Self.onTerminal(audit).contains("\u{1B}["), "a terminal gets colour")
        #expect(!(try Self.onTerminal(audit, environment: ["NO_COLOR": "1"])).contains("\u{1B}["), "NO_COLOR")
        #expect(!(try Self.onTerminal(audit, environment: ["TERM": "dumb"])).contains("\u{1B}["), "TERM=dumb")
        #expect(!(try CLI.run(audit.split(separator: " ").dropFirst().map(String.init))).stdout.contains("\u{1B}["), "a pipe")
        let (directory, db, _) = try Self.ledgerAndInput()
        let waiting = try Self.onTerminal("\(binary) ingest --db \(db)")
        #expect(waiting.contains("reading messages from stdin (a terminal)"), "\(waiting)")
        withExtendedLifetime(directory) {}
    }

    @Test("a spool --follow consumer writes JSON status lines, says stopping… on SIGINT and exits 0")
    func statusLines() throws {
        let (directory, db, input) = try Self.ledgerAndInput()
        let spool = directory.url("spool")
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
        let lines = try String(contentsOfFile: input, encoding: .utf8).split(separator: "\n")
        for (index, line) in lines.prefix(3).enumerated() {
            try Data(line.utf8).write(to: spool.appendingPathComponent("m\(index).json"))
        }
        let running = try CLI.start(["ingest", "--api-responses", "--db", db, "--follow", spool.path, "--status-interval", "0.2"])
        // Poll until a status line reports the three spooled messages appended.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, running.isRunning, !running.stderrSoFar.contains("\"appended\":3,") {
            Thread.sleep(forTimeInterval: 0.02)
        }
        running.kill(SIGINT)
        let result = try running.wait(timeout: 30)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.contains("stopping…"), "\(result)")
        let statuses = try result.stderr.split(separator: "\n").filter { $0.hasPrefix("{\"status\"") }
            .map { try JSONValue.parse(Data($0.utf8))["status"] }
        #expect(statuses.count >= 2, "\(result)")
        let last = statuses.last??.objectValue ?? [:]
        #expect(last["appended"]?.int64Value == 3, "\(result.stderr)")
        #expect(last["ledgerHead"]?.int64Value == 3)
        #expect(last["lastError"] == .null)
        #expect(last["source"]?.stringValue == spool.path)
    }
}
