import Foundation
import Testing

/// `ingest`'s default transaction size: 1,024 for a regular file (a bulk load), 256 for stdin and
/// other streams, and `--batch-size` wins over both. Seen through `--progress`, whose first line
/// comes right after the first batch commits.
@Suite("Ingest batch size")
struct IngestBatchSizeTests {
    /// The counts of `ingest --progress`'s first progress line (appended + duplicates + quarantined).
    private func firstBatch(_ result: CLIResult) throws -> Int {
        let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("ingest: ") })
        // "ingest: 41% (… of … MB) · N messages · R/s · ETA … · A appended, D duplicates, Q quarantined"
        let counts = try #require(line.components(separatedBy: " · ").last)
        let numbers = counts.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        try #require(numbers.count == 3 && counts.hasSuffix(" quarantined"), "\(line)")
        return numbers[0] + numbers[1] + numbers[2]
    }

    @Test("a regular file commits 1,024 per transaction, stdin 256, --batch-size overrides", arguments: [
        (source: "file", extra: [String](), expected: 1_024),
        (source: "stdin", extra: [String](), expected: 256),
        (source: "file", extra: ["--batch-size", "100"], expected: 100),
        (source: "stdin", extra: ["--batch-size", "700"], expected: 700),
    ])
    func defaults(source: String, extra: [String], expected: Int) throws {
        let dir = try TemporaryDirectory(label: "batch")
        let db = dir.path("ledger.sqlite")
        try CLI.initLedger(db: db)
        // 1,500 distinct lines that are not JSON: each is quarantined, so each counts at once.
        let lines = (0..<1_500).map { "not a notification \($0)" }
        let input = try dir.writeLines(lines, to: "input.ndjson")
        let result = source == "file"
            ? try CLI.run(["ingest", "--api-responses", "--db", db, "--progress"] + extra + [input.path])
            : try CLI.run(["ingest", "--api-responses", "--db", db, "--progress"] + extra + ["-"], stdin: try Data(contentsOf: input))
        #expect(result.exitCode == 3, "\(result)")
        #expect(try firstBatch(result) == expected, "\(result.stderr)")
    }
}
