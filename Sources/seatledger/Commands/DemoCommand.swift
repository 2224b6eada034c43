import AppStoreModels
import DemoSamples
import Foundation
import JWSVerification
import LedgerIntake
import LedgerStorage
import Projections
import Reports
import SeatLedger

/// `seatledger demo`: a temporary ledger fed with the bundled sample streams, then a report.
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "ingest the bundled sample streams into a temporary ledger and print a report"
    static let scenarios = Option<String?>("scenarios", value: "DIR", help: "read the sample streams from DIR instead of the built-in ones")
    static let pki = Option<String?>("pki", value: "DIR", help: "read the trust root from DIR/root.pem instead of the built-in test root")
    static let keep = Option<String?>("keep", value: "PATH", help: "keep the ledger at PATH instead of a temporary file")
    static let group = Option<String?>("group", value: "REF", help: "the group to audit (default: the guide's 10/9/6 group)")
    static let asOf = Clocks.asOf.help("report as of T (default: the last event in the streams)\n\(Clocks.forms)")
    static let options: [any DeclaredOption] = [
        scenarios, pki, keep, group, asOf, Flag.json.help("machine-readable output on stdout   the groups and the audit as JSON"),
    ]
    static let examples = ["seatledger demo", "seatledger demo --keep demo.sqlite"]
    static let help = """
    Usage: seatledger demo [--scenarios DIR] [--pki DIR] [--keep PATH] [--group REF] [--as-of T] [--json]

    Creates a temporary ledger trusting the test root, ingests every sample stream (the streams of
    Events/scenarios and Tools/pki/root.pem are compiled into this binary) as if received live (each
    event recorded a second after Apple signed it) (group lifecycles signed with the test PKI:
    purchases, Apple- and developer-hosted members, seat changes, refunds, grace periods, organization
    seats …), then prints the group list and an audit of the group from the testing guide whose 10 seats
    with 9 claims renew at 6. Works from any directory.

    Options:
    \(OptionHelp.lines(options))
    """

    static func run(_ arguments: Arguments) throws -> Terminal.ExitCode {
        let streams = try arguments[scenarios].map { try streamFiles(in: URL(fileURLWithPath: $0)) }
            ?? DemoSamples.streams.map { (name: $0.name, lines: $0.lines) }
        let roots = try arguments[pki].map { directory -> [TrustAnchor] in
            let root = URL(fileURLWithPath: directory).appendingPathComponent("root.pem")
            guard FileManager.default.fileExists(atPath: root.path) else { throw InputError(message: "no test root at \(root.path)") }
            return try TrustAnchor.load(contentsOf: root)
        } ?? TrustAnchor.load(Data(DemoSamples.testRootPEM.utf8), named: "the built-in test root")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try arguments[keep] ?? directory.appendingPathComponent("demo.sqlite").path
        let configuration = try LedgerConfiguration(bundleId: "com.example.reps", environment: .sandbox, appAppleId: nil)
        let ledger = try Ledger.create(path: path, configuration: configuration,
                                       rootCertificates: roots)
        var summary = IngestSummary()
        for stream in streams {
            for line in stream.lines {
                // The bundled sample streams are the operator's own input: their envelopes are applied.
                let message = InboundMessage(raw: line.bytes, source: "\(stream.name):\(line.number)", origin: .file,
                                             acceptsAPIResponses: true)
                // Replay the streams as if they were received live: record each a second after Apple signed it.
                if case .success(let events) = ledger.decoder.decode(message), let signed = events.first?.occurredAt {
                    ledger.useRecordingClock { signed + 1000 }
                }
                summary.add(try ledger.ingestBatch([message]).0)
            }
        }
        let lastEvent = try ledger.lastOccurredAt() ?? Clocks.now
        let asOf = try arguments[Self.asOf] ?? lastEvent
        let groups = try ledger.groups(asOf: asOf)
        let auditRef = try arguments[group] ?? defaultAuditGroup(groups)
        let audit = try auditRef.map { try ledger.auditGroup($0, asOf: asOf, now: asOf) }
        if arguments[Flag.json] {
            Terminal.json(["ingested": ["appended": .count(summary.appended), "duplicates": .count(summary.duplicates),
                                        "quarantined": .count(summary.quarantined)],
                           "asOf": .timestamp(asOf), "groups": .array(groups.map(\.json)), "audit": audit?.json ?? .null])
            return .success
        }
        Terminal.out("SeatLedger demo: ingested \(streams.count) sample streams — \(summary.appended) events appended, \(summary.duplicates) duplicates, \(summary.quarantined) quarantined.")
        Terminal.out("Every event was signature-verified against the test root and hash-chained. Groups as of \(Timestamp.iso8601(asOf)):\n")
        Terminal.out(GroupText.table(groups, width: Terminal.width))
        if let audit {
            Terminal.out("\n" + audit.render(.text, color: Terminal.colorOnStdout))
        }
        let member = auditRef.flatMap { ref in groups.first { $0.groupKey == ref } }?.members.lazy
            .compactMap { $0.memberRef ?? $0.appTransactionId ?? $0.originalTransactionId }.first
        Terminal.out("\n" + nextSteps(kept: try arguments[keep], group: auditRef, member: member))
        return .success
    }

    /// "Try next": with --keep the commands name the kept ledger; without, how to keep one.
    static func nextSteps(kept: String?, group: String?, member: String?) -> String {
        let db = kept.map(shellWord) ?? "demo.sqlite"
        let reads = "`seatledger replay \(group ?? "REF") --db \(db)`, `seatledger audit member \(member ?? "ID") --db \(db) --format markdown`"
        guard kept != nil else {
            return "Try next: `seatledger demo --keep demo.sqlite` keeps the ledger; then \(reads), or `seatledger --help`."
        }
        return "The ledger is kept at \(db). Try next: \(reads), or `seatledger --help`."
    }

    /// `text` as one shell word: as is when it is plain, else single-quoted.
    static func shellWord(_ text: String) -> String {
        let plain = !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/._-+:@%=,".contains($0)) }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The `.ndjson` streams in `directory`, read whole, sorted by name.
    static func streamFiles(in directory: URL) throws -> [(name: String, lines: [(number: Int, bytes: Data)])] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            throw InputError(message: "no sample streams at \(directory.path)")
        }
        let files = names.filter { $0.hasSuffix(".ndjson") }.sorted()
        guard !files.isEmpty else { throw InputError(message: "no .ndjson streams in \(directory.path)") }
        return try files.map { name in
            let url = directory.appendingPathComponent(name)
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw InputError(message: "cannot read \(url.path)") }
            return (name, DemoSamples.Stream(name: name, text: text).lines)
        }
    }

    /// The guide's over-capacity group if present, else the group with most members.
    static func defaultAuditGroup(_ groups: [GroupState]) -> String? {
        groups.first { $0.seats.renewalOverCapacity > 0 || $0.seats.overCapacity > 0 }?.groupKey
            ?? groups.max { $0.members.count < $1.members.count }?.groupKey
    }
}
