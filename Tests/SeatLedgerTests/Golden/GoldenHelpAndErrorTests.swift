import AppStoreModels
import Foundation
import Testing

/// Golden files of every command's help, the shell completions, and the CLI's conventions on
/// errors (did you mean, option values that are options, ambiguous times, JSON errors), run
/// through the built binary. A golden of an error holds its exit status, stdout and stderr.
@Suite("Golden CLI help and errors", .serialized)
struct GoldenHelpAndErrorTests {
    /// The commands the binary declares (`seatledger help --json`).
    static func declaredCommands() throws -> [(name: String, options: [String], flags: [String], exitCodes: [Int64])] {
        let result = try CLI.run(["help", "--json"])
        guard result.exitCode == 0, case .array(let commands)? = try result.json()["commands"] else {
            throw TestSupportError("help --json: \(result)")
        }
        return commands.map { command in
            func strings(_ key: String) -> [String] { command[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
            let codes = command["exitStatuses"]?.arrayValue?.compactMap { $0["code"]?.int64Value } ?? []
            return (command["name"]?.stringValue ?? "?", strings("options"), strings("flags"), codes)
        }
    }

    /// The widest a line of help prose may be.
    static let proseWidth = 100

    /// `exit N`, stdout and stderr as one text.
    static func transcript(_ result: CLIResult) -> Data {
        Data("exit \(result.exitCode)\n--- stdout\n\(result.stdout)--- stderr\n\(result.stderr)".utf8)
    }

    @Test("every declared command has golden help naming each of its options and only its exit statuses")
    func helpOfEveryCommand() throws {
        let commands = try Self.declaredCommands()
        #expect(commands.count >= 23)
        for command in commands {
            let result = try CLI.run([command.name, "--help"])
            #expect(result.exitCode == 0, "\(command.name) --help: \(result)")
            #expect(try CLI.run(["help", command.name]).stdout == result.stdout, "help \(command.name) is \(command.name) --help")
            for option in command.options + command.flags {
                #expect(result.stdout.contains(option), "\(command.name) --help does not mention \(option)")
            }
            let listed = result.stdout.components(separatedBy: "Exit status:\n").last?.components(separatedBy: "\n")
                .compactMap { line -> Int64? in
                    // "  N  meaning"; a wrapped meaning continues on lines indented further.
                    guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    guard let first = trimmed.first, first.isNumber, trimmed.dropFirst().first == " " else { return nil }
                    return Int64(String(first))
                } ?? []
            #expect(listed == command.exitCodes, "\(command.name) --help lists exit statuses \(listed), declares \(command.exitCodes)")
            // Prose (lines at the left margin, the usage lines aside) and the exit statuses read in
            // a 100-column terminal; options and examples are tables and may run longer.
            let exitStatuses = result.stdout.components(separatedBy: "Exit status:\n").last ?? ""
            let wide = result.stdout.split(separator: "\n").filter { line in
                line.first.map { !$0.isWhitespace } == true && !line.hasPrefix("Usage:") && line.count > Self.proseWidth
            } + exitStatuses.split(separator: "\n").filter { $0.count > Self.proseWidth }
            #expect(wide.isEmpty, "\(command.name) --help: prose or exit-status lines over \(Self.proseWidth) columns: \(wide)")
            // A `code span` wrapped across two lines reads as two broken ones.
            let brokenSpans = result.stdout.split(separator: "\n").filter { $0.filter { $0 == "`" }.count % 2 == 1 }
            #expect(brokenSpans.isEmpty, "\(command.name) --help: a `code span` is split across lines: \(brokenSpans)")
            try GoldenFile.check("help/\(command.name).txt", actual: result.stdoutData)
        }
        // A help file left for a command that is gone is drift too.
        let files = (try? FileManager.default.contentsOfDirectory(atPath: GoldenFile.directory.appendingPathComponent("help").path)) ?? []
        let stale = Set(files).subtracting(commands.map { "\($0.name).txt" } + ["seatledger.txt"])
        let updating = try GoldenFile.updating()
        #expect(stale.isEmpty || updating, "golden help of commands that no longer exist: \(stale.sorted())")
        try GoldenFile.check("help/seatledger.txt", actual: try CLI.run(["--help"]).stdoutData)
    }

    @Test("completion scripts are generated from the declared commands", arguments: ["bash", "zsh", "fish"])
    func completions(shell: String) throws {
        let result = try CLI.run(["completions", shell])
        #expect(result.exitCode == 0, "\(result)")
        for command in try Self.declaredCommands() {
            #expect(result.stdout.contains(command.name), "\(shell) completions lack \(command.name)")
        }
        try GoldenFile.check("completions.\(shell)", actual: result.stdoutData)
    }

    @Test("bash completion completes commands, actions, options and option values")
    func bashCompletes() throws {
        let script = try CLI.run(["completions", "bash"]).stdout
        let directory = try TemporaryDirectory(label: "completion")
        let file = try directory.write(script, to: "seatledger.bash")
        func complete(_ words: [String]) throws -> [String] {
            let probe = "source \(file.path); COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " "))); "
                + "COMP_CWORD=\(words.count - 1); _seatledger; printf '%s\\n' \"${COMPREPLY[@]}\""
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", probe]
            process.currentDirectoryURL = directory.url
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        #expect(try complete(["seatledger", "grou"]) == ["groups", "group"])
        #expect(try complete(["seatledger", "quarantine", "re"]) == ["retry"])
        #expect(try complete(["seatledger", "audit", "group", "x", "--format", "ma"]) == ["markdown"])
        #expect(try complete(["seatledger", "ingest", "--status-int"]) == ["--status-interval"])
        #expect(try complete(["seatledger", "completions", ""]) == ["bash", "zsh", "fish"])
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        let name: String
        let arguments: [String]
        let exitCode: Int32
        var testDescription: String { name }
    }

    /// `DB` is replaced by the fixture ledger's path.
    static let errorCases: [ErrorCase] = [
        ErrorCase(name: "missing-command.txt", arguments: [], exitCode: 2),
        ErrorCase(name: "unknown-command.txt", arguments: ["grops"], exitCode: 2),
        ErrorCase(name: "unknown-command.json", arguments: ["grops", "--json"], exitCode: 2),
        ErrorCase(name: "unknown-option.txt", arguments: ["groups", "--db", "DB", "--jsn"], exitCode: 2),
        ErrorCase(name: "unknown-action.txt", arguments: ["quarantine", "lst", "--db", "DB"], exitCode: 2),
        ErrorCase(name: "unknown-show.txt", arguments: ["group", "shwo", "2000010000000001", "--db", "DB"], exitCode: 2),
        ErrorCase(name: "option-value-is-option.txt", arguments: ["groups", "--db", "--as-of", "now"], exitCode: 2),
        ErrorCase(name: "option-value-is-option.json", arguments: ["groups", "--db", "--json"], exitCode: 2),
        ErrorCase(name: "epoch-seconds.txt", arguments: ["groups", "--db", "DB", "--as-of", "1761998400"], exitCode: 2),
        ErrorCase(name: "epoch-seconds.json", arguments: ["groups", "--db", "DB", "--known-at", "1761998400", "--json"], exitCode: 2),
        ErrorCase(name: "bad-time.txt", arguments: ["replay", "2000010000000001", "--db", "DB", "--from", "yesterday"], exitCode: 2),
        ErrorCase(name: "no-ledger.json", arguments: ["groups", "--db", "/nonexistent/ledger.sqlite", "--json"], exitCode: 2),
        ErrorCase(name: "not-found.json", arguments: ["member", "show", "nobody-42", "--db", "DB", "--json"], exitCode: 2),
        // A groupId resolves to a group but names no member: the documented JSON error, not `[]` and stderr (issue #49).
        ErrorCase(name: "member-show-group-id.json", arguments: ["member", "show", "810000000020000001", "--db", "DB", "--json"], exitCode: 2),
        ErrorCase(name: "member-show-group-id.txt", arguments: ["member", "show", "810000000020000001", "--db", "DB"], exitCode: 2),
        ErrorCase(name: "completions-unknown-shell.txt", arguments: ["completions", "tcsh"], exitCode: 2),
        ErrorCase(name: "groups-narrow.txt", arguments: ["groups", "--db", "DB", "--as-of", GoldenCLITests.now], exitCode: 0),
        ErrorCase(name: "group-show-narrow.txt", arguments: ["group", "show", GoldenCLITests.guideGroup, "--db", "DB", "--as-of", GoldenCLITests.now], exitCode: 0),
        ErrorCase(name: "member-show-narrow.txt", arguments: ["member", "show", "m1", "--db", "DB", "--as-of", GoldenCLITests.now], exitCode: 0),
        ErrorCase(name: "events-narrow.txt", arguments: ["events", "--db", "DB", "--limit", "4"], exitCode: 0),
        ErrorCase(name: "replay-narrow.txt", arguments: ["replay", GoldenCLITests.guideGroup, "--db", "DB"], exitCode: 0),
        ErrorCase(name: "audit-group-narrow.txt", arguments: ["audit", "group", GoldenCLITests.guideGroup, "--format", "text", "--db", "DB"], exitCode: 0),
        ErrorCase(name: "audit-member-narrow.txt", arguments: ["audit", "member", "m1", "--format", "text", "--db", "DB"], exitCode: 0),
    ]

    @Test("errors and narrow tables match their golden transcripts", arguments: errorCases)
    func errors(_ testCase: ErrorCase) throws {
        let fixture = try GoldenCLITests.fixture.get()
        let arguments = testCase.arguments.map { $0 == "DB" ? fixture.db : $0 }
        var environment = GoldenCLITests.environment
        environment["COLUMNS"] = "60"
        let result = try CLI.run(arguments, environment: environment)
        #expect(result.exitCode == testCase.exitCode, "\(result)")
        let text = String(decoding: Self.transcript(result), as: UTF8.self).replacingOccurrences(of: fixture.db, with: "DB")
        try GoldenFile.check("errors/\(testCase.name)", actual: Data(text.utf8))
        if testCase.name.hasSuffix(".json") {
            // The error is one JSON object on stdout and nothing is on stderr.
            let error = try result.json()["error"]
            #expect(error?["code"]?.stringValue != nil && error?["message"]?.stringValue != nil)
            #expect(error?["exitCode"]?.int64Value == Int64(result.exitCode))
            #expect(result.stderr.isEmpty, "\(result)")
        }
    }

    @Test("relative and ISO forms name the same moment for every time option")
    func relativeTimes() throws {
        let fixture = try GoldenCLITests.fixture.get()
        let environment = GoldenCLITests.environment  // now = 2026-11-16T00:00:00Z
        func run(_ arguments: [String]) throws -> CLIResult { try CLI.run(arguments + ["--db", fixture.db], environment: environment) }
        let pairs: [([String], [String])] = [
            (["groups", "--as-of", "now"], ["groups", "--as-of", GoldenCLITests.now]),
            (["group", "show", GoldenCLITests.guideGroup, "--as-of", "22d"], ["group", "show", GoldenCLITests.guideGroup, "--as-of", "2026-10-25T00:00:00Z"]),
            (["group", "show", GoldenCLITests.guideGroup, "--as-of", "-22d", "--known-at", "-1h"],
             ["group", "show", GoldenCLITests.guideGroup, "--as-of", "2026-10-25", "--known-at", "2026-11-15T23:00:00Z"]),
            (["replay", GoldenCLITests.guideGroup, "--from", "-27d", "--to", "-15d"],
             ["replay", GoldenCLITests.guideGroup, "--from", "1792454400000", "--to", "2026-11-01T00:00:00Z"]),
            (["diff", GoldenCLITests.guideGroup, "--as-of", "-27d", "--as-of", "now"],
             ["diff", GoldenCLITests.guideGroup, "--as-of", "2026-10-20T00:00:00Z", "--as-of", "+0h"]),
        ]
        for (relative, absolute) in pairs {
            let a = try run(relative), b = try run(absolute)
            #expect(a.exitCode == b.exitCode && a.exitCode <= 1, "\(relative): \(a)")
            #expect(a.stdout == b.stdout && !a.stdout.isEmpty, "\(relative) and \(absolute) differ")
        }
    }

    @Test("check accepts the exact body Apple posts, {\"signedPayload\": …}")
    func checkAcceptsAppleBody() throws {
        let fixture = try GoldenCLITests.fixture.get()
        let stream = TestPaths.repoRoot.appendingPathComponent("Events/scenarios/guide-10-9-6.ndjson")
        let firstLine = try String(contentsOf: stream, encoding: .utf8).components(separatedBy: "\n")[0]
        #expect(firstLine.hasPrefix("{\"signedPayload\":"))
        let body = try fixture.directory.write(firstLine + "\n", to: "body.json")
        let accepted = try CLI.run(["check", body.path, "--db", fixture.db])
        #expect(accepted.exitCode == 0 && accepted.stdout == "\(body.path): verified\n", "\(accepted)")
        let wrong = try fixture.directory.write("{\"payload\": \"x\"}", to: "wrong.json")
        let refused = try CLI.run(["check", wrong.path, "--db", fixture.db])
        #expect(refused.exitCode == 1 && refused.stdout.contains("without a \"signedPayload\" string"), "\(refused)")
    }

    @Test("golden files are never rewritten when CI is set")
    func updateRefusedUnderCI() throws {
        #expect(throws: TestSupportError.self) { try GoldenFile.updating(environment: ["SEATLEDGER_UPDATE_GOLDEN": "1", "CI": "true"]) }
        #expect(try GoldenFile.updating(environment: ["SEATLEDGER_UPDATE_GOLDEN": "1"]))
        #expect(try !GoldenFile.updating(environment: ["CI": "true"]))
        #expect(try GoldenFile.updating(environment: ["SEATLEDGER_UPDATE_GOLDEN": "1", "CI": ""]), "an empty CI is unset")
    }

    @Test("demo --keep names the kept ledger in its hint")
    func demoKeepHint() throws {
        let directory = try TemporaryDirectory(label: "demo")
        let kept = directory.path("my demo.sqlite")
        let result = try CLI.run(["demo", "--keep", kept], currentDirectory: TestPaths.repoRoot)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("The ledger is kept at '\(kept)'"), "\(result.stdout.suffix(400))")
        #expect(result.stdout.contains("seatledger replay 2000010000000001 --db '\(kept)'"))
        #expect(!result.stdout.contains("demo.sqlite`"), "no hint names a ledger that was not kept")
        #expect(FileManager.default.fileExists(atPath: kept))
    }
}
