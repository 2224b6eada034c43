import Foundation
import Testing

/// README.md's "Using the CLI" and everything below it, run as written.
///
/// Every fenced `sh` block runs, in order, in one `bash` session in a scratch directory holding
/// links to the repository's `Events/` and `Tools/` and a copy of Apple Root CA - G3 from the
/// shared fixtures (the `AppleRootCA-G3.cer` the text tells the reader to download), with the
/// built `seatledger` first on `PATH`. Each command line must exit 0, or the status its
/// `# exit N` comment names. Fenced `shell` blocks need servers of the reader's own (Redis,
/// PostgreSQL, Apple's API): each of their `seatledger` lines is run with `--help` appended,
/// which parses every option before printing help, so a renamed or removed option fails here.
@Suite("README walkthrough", .serialized)
struct ReadmeWalkthroughTests {
    /// One command line of a block, with the status the text says it returns.
    struct Step {
        let line: Int
        let text: String
        let expectedStatus: Int32
    }

    /// The part of README.md this suite owns: from "## Using the CLI" to the end.
    static func walkthroughText() throws -> (text: String, firstLine: Int) {
        let readme = try String(contentsOf: TestPaths.repoRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "\n## Using the CLI\n") else { throw TestSupportError("README.md has no \"## Using the CLI\" section") }
        let before = readme[..<start.lowerBound].components(separatedBy: "\n").count
        return (String(readme[start.lowerBound...].dropFirst()), before + 1)
    }

    /// The fenced blocks with the given info string (`sh`, `shell`), as steps; a heredoc is one step.
    static func steps(fence: String) throws -> [Step] {
        let (text, firstLine) = try walkthroughText()
        let lines = text.components(separatedBy: "\n")
        var steps: [Step] = []
        var index = 0
        var inBlock = false
        while index < lines.count {
            let line = lines[index]
            defer { index += 1 }
            if !inBlock {
                if line == "```\(fence)" { inBlock = true }
                continue
            }
            if line == "```" { inBlock = false; continue }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            var command = line
            let start = index
            if let marker = line.range(of: #"<<'(\w+)'"#, options: .regularExpression) {
                let terminator = String(line[marker]).dropFirst(3).dropLast()
                while index + 1 < lines.count, lines[index + 1] != terminator {
                    index += 1
                    command += "\n" + lines[index]
                }
                index += 1
                command += "\n" + terminator
            }
            var status: Int32 = 0
            if let comment = line.range(of: #"#\s*exit (\d+)"#, options: .regularExpression) {
                status = Int32(line[comment].filter(\.isNumber)) ?? -1
            }
            steps.append(Step(line: firstLine + start, text: command, expectedStatus: status))
        }
        #expect(!inBlock, "README.md: a ```\(fence) block is not closed")
        return steps
    }

    /// Runs `script` with bash in `directory`, the built binary first on PATH.
    static func bash(_ script: String, in directory: TemporaryDirectory) throws -> CLIResult {
        let binaryDirectory = try CLI.binary().deletingLastPathComponent().path
        let file = try directory.write(Data(script.utf8), to: "walkthrough.sh")
        let output = directory.url.appendingPathComponent("walkthrough.out")
        let errors = directory.url.appendingPathComponent("walkthrough.err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [file.path]
        process.currentDirectoryURL = directory.url
        var environment = ProcessInfo.processInfo.environment
        environment["SEATLEDGER_DB"] = nil
        environment["NO_COLOR"] = "1"
        environment["PATH"] = "\(binaryDirectory):\(environment["PATH"] ?? "/usr/bin:/bin")"
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let deadline = Date().addingTimeInterval(300)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                process.waitUntilExit()
                throw TestSupportError("the README walkthrough did not finish in 300 s")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return CLIResult(exitCode: process.terminationStatus, terminatedBySignal: process.terminationReason == .uncaughtSignal,
                         stdoutData: try Data(contentsOf: output), stderrData: try Data(contentsOf: errors))
    }

    /// A scratch directory laid out like the repository root for the walkthrough.
    static func scratch() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(label: "readme")
        for name in ["Events", "Tools"] {
            try FileManager.default.createSymbolicLink(at: directory.url.appendingPathComponent(name),
                                                       withDestinationURL: TestPaths.repoRoot.appendingPathComponent(name))
        }
        try FileManager.default.copyItem(at: TestPaths.appleRootG3, to: directory.url.appendingPathComponent("AppleRootCA-G3.cer"))
        return directory
    }

    @Test("every sh block of the README runs as written, each line with the exit status the text names")
    func shellBlocksRun() throws {
        let steps = try Self.steps(fence: "sh")
        #expect(steps.count >= 20, "the walkthrough lost its commands: \(steps.count)")
        #expect(steps.contains { $0.text.hasPrefix("seatledger init") && $0.text.contains("AppleRootCA-G3.cer") })
        // Every ledger command names its ledger: --db, --config (a deployment file), or SEATLEDGER_DB exported before it.
        var exported = false
        for step in steps {
            if step.text.hasPrefix("export SEATLEDGER_DB=") { exported = true }
            if step.text.hasPrefix("unset SEATLEDGER_DB") { exported = false }
            guard step.text.hasPrefix("seatledger "), !step.text.hasPrefix("seatledger demo") else { continue }
            #expect(exported || step.text.contains("--db ") || step.text.contains("--config ") || step.text.contains("--check-config "),
                    "README.md:\(step.line) names no ledger: \(step.text)")
        }
        let directory = try Self.scratch()
        var script = ""
        for (number, step) in steps.enumerated() {
            script += "echo '@@step \(number) start' >&2; echo '@@step \(number) start'\n\(step.text)\n"
            script += "echo \"@@step \(number) status $?\"\n"
        }
        let result = try Self.bash(script, in: directory)
        let statuses = Dictionary(uniqueKeysWithValues: result.stdout.components(separatedBy: "\n").compactMap { line -> (Int, Int32)? in
            let words = line.split(separator: " ")
            guard words.count == 4, words[0] == "@@step", words[2] == "status", let step = Int(words[1]), let status = Int32(words[3]) else { return nil }
            return (step, status)
        })
        for (number, step) in steps.enumerated() {
            #expect(statuses[number] == step.expectedStatus,
                    "README.md:\(step.line) exited \(statuses[number].map(String.init) ?? "never ran"), expected \(step.expectedStatus): \(step.text)\n\(Self.section(of: result, step: number))")
        }
        // What the text promises of the outputs.
        let out = result.stdout
        #expect(out.contains("known at 2026-10-25T00:00:00.000Z") && out.contains("Seats:         total 10, at renewal 6"),
                "the --known-at example must show the group before the renewal")
        #expect(out.contains("• seats 10 → 6"), "the diff must name the seat change")
        #expect(out.contains("chain_not_trusted"), "the Apple-root ledger must quarantine the test-signed samples")
        #expect(out.contains("body.json: verified"), "check must accept the body Apple posts")
        #expect(out.contains("Apple (Get Seat Info at 2026-11-01T01:00:00.000Z): total 6, available 0, 9 claim(s)"))
        #expect(!out.contains("claim …"), "the recorded envelope must not invent a claim")
        #expect(FileManager.default.fileExists(atPath: directory.path("report.html")))
    }

    /// The stdout and stderr one step printed, for a failure message.
    static func section(of result: CLIResult, step: Int) -> String {
        func cut(_ text: String) -> String {
            guard let start = text.range(of: "@@step \(step) start") else { return "" }
            let rest = text[start.upperBound...]
            return String(rest[..<(rest.range(of: "@@step \(step + 1) start")?.lowerBound ?? rest.endIndex)]).prefix(2000).description
        }
        return "--- stdout\(cut(result.stdout))\n--- stderr\(cut(result.stderr))"
    }

    @Test("every seatledger line of the README's shell blocks still parses (run with --help)")
    func serviceBlocksParse() throws {
        let steps = try Self.steps(fence: "shell").filter { $0.text.hasPrefix("seatledger ") }
        #expect(steps.count >= 8, "the services examples lost their commands: \(steps.count)")
        for step in steps {
            let command = step.text.components(separatedBy: " #").first!.trimmingCharacters(in: .whitespaces)
            let arguments = command.split(separator: " ").dropFirst().map(String.init) + ["--help"]
            let result = try CLI.run(arguments)
            #expect(result.exitCode == 0 && result.stdout.hasPrefix("Usage: seatledger \(arguments[0])"),
                    "README.md:\(step.line) does not parse: \(command)\n\(result)")
        }
    }
}
