import Foundation
import Testing

/// Golden-file tests of CLI and report output, run through the built binary.
///
/// Clocks are pinned (`SEATLEDGER_NOW`, `--as-of`) so output is byte-stable. To accept a deliberate
/// change, run the suite with `SEATLEDGER_UPDATE_GOLDEN=1` and review the diff of
/// `Tests/SeatLedgerTests/Golden/files/` (refused when `CI` is set: see ``GoldenFile``).
@Suite("Golden CLI output", .serialized)
struct GoldenCLITests {
    static let now = "2026-11-16T00:00:00.000Z"
    static let environment = ["SEATLEDGER_NOW": now, "NO_COLOR": "1"]
    static let goldenDirectory = TestPaths.repoRoot.appendingPathComponent("Tests/SeatLedgerTests/Golden/files")
    static let scenarios = ["guide-10-9-6", "developer-unclaim", "apple-member-removed", "grace-expired", "partial-seat-refund-developer"]
    static let guideGroup = "2000010000000001"

    /// One ledger for the whole suite, built through the CLI from committed scenario streams.
    final class Fixture: @unchecked Sendable {  // immutable after init; only read by the tests
        let directory: TemporaryDirectory
        let db: String
        init() throws {
            directory = try TemporaryDirectory(label: "golden")
            db = directory.path("golden.sqlite")
            let root = TestPaths.testRoot.path
            let created = try CLI.run(["init", "--db", db, "--bundle-id", "com.example.reps", "--environment", "Sandbox", "--root-cert", root],
                                      environment: GoldenCLITests.environment)
            guard created.exitCode == 0 else { throw TestSupportError("init failed: \(created)") }
            // Relative paths: event sources (and so chain hashes) must not depend on where the repository is checked out.
            let streams = GoldenCLITests.scenarios.map { "\($0).ndjson" }
            let ingested = try CLI.run(["ingest", "--api-responses", "--db", db] + streams, environment: GoldenCLITests.environment,
                                       currentDirectory: TestPaths.repoRoot.appendingPathComponent("Events/scenarios"))
            guard ingested.exitCode == 0 else { throw TestSupportError("ingest failed: \(ingested)") }
        }
    }
    static let fixture = Result { try Fixture() }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let arguments: [String]
        let exitCode: Int32
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "groups.txt", arguments: ["groups", "--as-of", now], exitCode: 0),
        Case(name: "groups.json", arguments: ["groups", "--as-of", now, "--json"], exitCode: 0),
        Case(name: "group-show.txt", arguments: ["group", "show", guideGroup, "--as-of", now], exitCode: 0),
        Case(name: "group-show.json", arguments: ["group", "show", guideGroup, "--as-of", now, "--json"], exitCode: 0),
        Case(name: "group-show-known-at.json", arguments: ["group", "show", guideGroup, "--as-of", "2026-10-25T00:00:00Z", "--known-at", now, "--json"], exitCode: 0),
        Case(name: "member-show.txt", arguments: ["member", "show", "m1", "--as-of", now], exitCode: 0),
        Case(name: "member-show.json", arguments: ["member", "show", "m1", "--as-of", now, "--json"], exitCode: 0),
        Case(name: "replay.txt", arguments: ["replay", guideGroup], exitCode: 0),
        Case(name: "replay.json", arguments: ["replay", guideGroup, "--json"], exitCode: 0),
        Case(name: "replay-window.txt", arguments: ["replay", guideGroup, "--from", "2026-10-20T00:00:00Z", "--to", "2026-11-01T00:00:00Z"], exitCode: 0),
        Case(name: "diff-as-of.txt", arguments: ["diff", guideGroup, "--as-of", "2026-10-20T00:00:00Z", "--as-of", now], exitCode: 1),
        Case(name: "diff-as-of.json", arguments: ["diff", guideGroup, "--as-of", "2026-10-20T00:00:00Z", "--as-of", now, "--json"], exitCode: 1),
        Case(name: "diff-no-change.txt", arguments: ["diff", guideGroup, "--as-of", "2026-11-01T00:00:00Z", "--as-of", "2026-11-02T00:00:00Z"], exitCode: 0),
        Case(name: "diff-against-apple.txt", arguments: ["diff", guideGroup, "--against-apple"], exitCode: 0),
        Case(name: "audit-group.txt", arguments: ["audit", "group", guideGroup, "--format", "text"], exitCode: 0),
        Case(name: "audit-group.md", arguments: ["audit", "group", guideGroup, "--format", "markdown"], exitCode: 0),
        Case(name: "audit-group.html", arguments: ["audit", "group", guideGroup, "--format", "html"], exitCode: 0),
        Case(name: "audit-group.json", arguments: ["audit", "group", guideGroup, "--format", "json"], exitCode: 0),
        Case(name: "audit-group-grace.txt", arguments: ["audit", "group", "2000018000000001", "--format", "text"], exitCode: 0),
        Case(name: "audit-member.txt", arguments: ["audit", "member", "m1", "--format", "text"], exitCode: 0),
        Case(name: "audit-member.md", arguments: ["audit", "member", "m1", "--format", "markdown"], exitCode: 0),
        Case(name: "audit-member.html", arguments: ["audit", "member", "m1", "--format", "html"], exitCode: 0),
        Case(name: "audit-member.json", arguments: ["audit", "member", "m1", "--format", "json"], exitCode: 0),
        Case(name: "verify.txt", arguments: ["verify"], exitCode: 0),
        Case(name: "quarantine-list.txt", arguments: ["quarantine", "list"], exitCode: 0),
    ]

    @Test("command output matches its golden file", arguments: cases)
    func golden(_ testCase: Case) throws {
        let fixture = try Self.fixture.get()
        let result = try CLI.run(testCase.arguments + ["--db", fixture.db], environment: Self.environment)
        #expect(result.exitCode == testCase.exitCode, "\(result)")
        try GoldenFile.check(testCase.name, actual: result.stdoutData)
    }

    @Test("audit --out writes the same report to a file")
    func auditOut() throws {
        let fixture = try Self.fixture.get()
        let out = fixture.directory.path("report.md")
        let result = try CLI.run(["audit", "group", Self.guideGroup, "--format", "markdown", "--out", out, "--db", fixture.db], environment: Self.environment)
        #expect(result.exitCode == 0, "\(result)")
        let expected = try String(contentsOf: Self.goldenDirectory.appendingPathComponent("audit-group.md"), encoding: .utf8)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == expected)
    }

    @Test("the HTML report is self-contained: no scripts, no external references")
    func htmlSelfContained() throws {
        let html = try String(contentsOf: Self.goldenDirectory.appendingPathComponent("audit-group.html"), encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<svg"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("http://") || html.components(separatedBy: "http://").count == 2, "only the SVG namespace may name a URL")
        #expect(!html.contains("https://"))
        #expect(!html.contains("<link"))
    }
}

/// Compares output with a file in `Tests/SeatLedgerTests/Golden/files/`, or rewrites the file when
/// `SEATLEDGER_UPDATE_GOLDEN=1`.
///
/// Updating is refused (the test fails) when `CI` is set: a CI run with the variable set would
/// otherwise rewrite every file and pass whatever the output, so the suite could not fail.
enum GoldenFile {
    static let directory = TestPaths.repoRoot.appendingPathComponent("Tests/SeatLedgerTests/Golden/files")

    /// Whether golden files are being rewritten (and may be: not under CI).
    static func updating(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Bool {
        guard environment["SEATLEDGER_UPDATE_GOLDEN"] == "1" else { return false }
        if let ci = environment["CI"], !ci.isEmpty {
            throw TestSupportError("SEATLEDGER_UPDATE_GOLDEN=1 with CI=\(ci): golden files are never rewritten in CI (the suite could not fail); unset one of them")
        }
        return true
    }

    static func check(_ name: String, actual: Data, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = directory.appendingPathComponent(name)
        if try updating() {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try actual.write(to: file)
            return
        }
        guard let expected = try? Data(contentsOf: file) else {
            Issue.record("no golden file \(name); run with SEATLEDGER_UPDATE_GOLDEN=1 (outside CI) to create it", sourceLocation: sourceLocation)
            return
        }
        #expect(String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self),
                "\(name) differs from its golden file; rerun with SEATLEDGER_UPDATE_GOLDEN=1 to accept", sourceLocation: sourceLocation)
    }
}
