import AppStoreModels
import EventStore
import Foundation
import JWSVerification
import Projections
import Reports
import SeatLedger

/// `seatledger demo`: a temporary ledger fed with the bundled sample streams, then a report.
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "ingest the bundled sample streams into a temporary ledger and print a report"
    static let options: Set<String> = ["scenarios", "pki", "keep", "group", "as-of"]
    static let flags: Set<String> = ["json"]
    static let help = """
    Usage: seatledger demo [--scenarios DIR] [--pki DIR] [--keep PATH] [--group REF] [--as-of T] [--json]

    Creates a temporary ledger trusting the test root in Tools/pki, ingests every sample stream in
    Events/scenarios as if received live (each event recorded a second after Apple signed it) (group lifecycles signed with the test PKI: purchases, Apple- and
    developer-hosted members, seat changes, refunds, grace periods, organization seats …), then
    prints the group list and an audit of the group from the testing guide whose 10 seats with 9
    claims renew at 6. Run from the repository root (or give --scenarios and --pki).

    Options:
      --scenarios DIR  sample streams (default: Events/scenarios)
      --pki DIR        test PKI with root.pem (default: Tools/pki)
      --keep PATH      keep the ledger at PATH instead of a temporary file
      --group REF      the group to audit (default: the guide's 10/9/6 group)
      --as-of T        report as of T (default: the last event in the streams)
    \(HelpText.json)   the groups and the audit as JSON

    \(HelpText.exitCodes)
    """

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let scenarios = URL(fileURLWithPath: arguments.value("scenarios") ?? "Events/scenarios")
        let pki = URL(fileURLWithPath: arguments.value("pki") ?? "Tools/pki")
        let streams = try streamFiles(in: scenarios)
        let root = pki.appendingPathComponent("root.pem")
        guard FileManager.default.fileExists(atPath: root.path) else {
            throw InputError(message: "no test root at \(root.path); run from the repository root or give --pki DIR")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = arguments.value("keep") ?? directory.appendingPathComponent("demo.sqlite").path
        let configuration = try LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox, appAppleId: nil)
        let ledger = try Ledger.create(path: path, configuration: configuration,
                                       rootCertificates: try TrustAnchor.load(contentsOf: root))
        var summary = IngestSummary()
        for file in streams {
            guard let handle = FileHandle(forReadingAtPath: file.path) else { throw InputError(message: "cannot read \(file.path)") }
            let reader = LineReader(handle: handle)
            while let line = try reader.nextLine() {
                guard !line.isEmpty else { continue }
                // The bundled sample streams are the operator's own input: their envelopes are applied.
                let message = InboundMessage(raw: line, source: "\(file.lastPathComponent):\(reader.lineNumber)", origin: .file,
                                             acceptsAPIResponses: true)
                // Replay the streams as if they were received live: record each a second after Apple signed it.
                if case .success(let events) = ledger.decoder.decode(message), let signed = events.first?.occurredAt {
                    ledger.store.clock = { signed + 1000 }
                }
                summary.add(try ledger.ingestBatch([message]).0)
            }
        }
        let lastEvent = try ledger.store.lastOccurredAt() ?? Clocks.now
        let asOf = try Clocks.parse(arguments.value("as-of"), option: "as-of") ?? lastEvent
        let groups = try ledger.groups(asOf: asOf)
        let auditRef = arguments.value("group") ?? defaultAuditGroup(groups)
        let audit = try auditRef.map { try ledger.auditGroup($0, asOf: asOf, now: asOf) }
        if arguments.flag("json") {
            Terminal.json(["ingested": ["appended": .count(summary.appended), "duplicates": .count(summary.duplicates),
                                        "quarantined": .count(summary.quarantined)],
                           "asOf": .timestamp(asOf), "groups": .array(groups.map(\.json)), "audit": audit?.json ?? .null])
            return .success
        }
        Terminal.out("SeatLedger demo: ingested \(streams.count) sample streams — \(summary.appended) events appended, \(summary.duplicates) duplicates, \(summary.quarantined) quarantined.")
        Terminal.out("Every event was signature-verified against the test root and hash-chained. Groups as of \(Timestamp.iso8601(asOf)):\n")
        Terminal.out(GroupText.table(groups))
        if let audit {
            Terminal.out("\n" + audit.render(.text, color: Terminal.stdoutIsTTY))
        }
        let keepHint = arguments.value("keep") == nil ? "seatledger demo --keep demo.sqlite" : "seatledger"
        Terminal.out("""

        Try next: `\(keepHint)` keeps the ledger; then `seatledger replay \(auditRef ?? "REF") --db demo.sqlite`, \
        `seatledger audit member <id> --db demo.sqlite --format markdown`, or `seatledger --help`.
        """)
        return .success
    }

    static func streamFiles(in directory: URL) throws -> [URL] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            throw InputError(message: "no sample streams at \(directory.path); run from the repository root or give --scenarios DIR")
        }
        let files = names.filter { $0.hasSuffix(".ndjson") }.sorted().map { directory.appendingPathComponent($0) }
        guard !files.isEmpty else { throw InputError(message: "no .ndjson streams in \(directory.path)") }
        return files
    }

    /// The guide's over-capacity group if present, else the group with most members.
    static func defaultAuditGroup(_ groups: [GroupState]) -> String? {
        groups.first { $0.seats.renewalOverCapacity > 0 || $0.seats.overCapacity > 0 }?.groupKey
            ?? groups.max { $0.members.count < $1.members.count }?.groupKey
    }
}
