import AppStoreModels
import Foundation
import GroupSimulator

let usage = """
seatledger-sim — scripts App Store multiseat (group) subscription lifecycles and emits what Apple
would send: signed notifications ({"signedPayload": …}) and recorded API responses ({"apiResponse": …}).

USAGE
  seatledger-sim (--lifecycle NAME | --scenario FILE) [options]
  seatledger-sim --list                 built-in lifecycles
  seatledger-sim --list-steps           step actions of the scenario file format
  seatledger-sim --print-scenario NAME  a built-in as a scenario file (a starting point for your own)
  seatledger-sim --regenerate DIR       rewrite DIR/<name>.ndjson + .expected.json for every built-in
  seatledger-sim --check DIR            exit 1 if those files drifted from what the simulator produces
  seatledger-sim --help

OUTPUT
  --out FILE              the NDJSON stream (default: standard output; "-" also means it)
  --expect FILE           expected `group show --json` states: a JSON array, one object per group
  --history-out FILE      Get Notification History apiResponse lines (≤ 20 items a page) carrying
                          the notifications --drop removed, for a backfill
  --list-events           print the stream's events (index, kind, time, id, label) instead of the stream

RUN
  --seed N                seeds identifiers, UUIDs and fault-drill draws (default 0)
  --bundle-id ID          the app the notifications name (default com.example.reps; for a ledger of
                          another app, e.g. several ledgers behind one `serve --config`)
  --accelerated           sandbox time: every duration ÷ 8640 (30 days → 5 minutes)
  --start ISO8601         scenario start (default 2026-10-01T00:00:00Z, or the file's "start")
  --load N                N groups × the lifecycle, each with its own identifiers, streamed
  --unclaim-shape S       UNCLAIM_SEATS payload: unclaimInfo | data+unclaimInfo (overrides the scenario)
  --revoked-seat-quantity P  where revokedSeatQuantity goes: multiSeatInfo | topLevel
  --pki DIR               signing material (default Tools/pki: leaf.key, leaf.pem, intermediate.pem, root.pem)

FAULT DRILLS (notifications only)
  --drop SPEC             missed: left out of the stream (see --history-out)
  --duplicate SPEC        retried: the byte-identical line again, right after the original
  --delay SPEC            late: moved to the end of the stream
  --reorder SPEC          swapped with the following line
  SPEC is a rate with a decimal point (0.1, 1.0: each notification independently, from --seed)
  or a comma-separated list of event indexes (see --list-events) and/or notificationUUIDs.

EXAMPLES
  seatledger-sim --lifecycle guide-10-9-6 --out g.ndjson --expect g.expected.json
  seatledger-sim --lifecycle apple-member-join --drop 1,3 --history-out backfill.ndjson
  seatledger-sim --lifecycle developer-claim --load 10000 --seed 7 --out load.ndjson
  seatledger-sim --regenerate Events/scenarios
"""

struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// Buffered writer to a file or standard output.
final class Output {
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(path: String?) throws {
        if let path, path != "-" {
            // open(2) rather than FileManager.createFile, which replaces the path atomically and so
            // cannot write to /dev/stdout or a named pipe.
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else { throw UsageError("cannot write \(path): \(String(cString: strerror(errno)))") }
            handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        } else {
            handle = FileHandle.standardOutput
        }
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 20 { flush() }
    }

    func line(_ text: String) {
        write(text)
        buffer.append(UInt8(ascii: "\n"))
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}

func eprint(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

func main() throws -> Int32 {
    var args = Array(CommandLine.arguments.dropFirst())
    if args.isEmpty || args.contains("--help") || args.contains("-h") {
        print(usage)
        return 0
    }
    var values: [String: String] = [:]
    var flags: Set<String> = []
    let valued: Set<String> = ["--lifecycle", "--scenario", "--print-scenario", "--regenerate", "--check", "--out", "--expect",
                               "--history-out", "--seed", "--bundle-id", "--start", "--load", "--unclaim-shape", "--revoked-seat-quantity",
                               "--pki", "--drop", "--duplicate", "--delay", "--reorder"]
    let boolean: Set<String> = ["--list", "--list-steps", "--list-events", "--accelerated"]
    while !args.isEmpty {
        let arg = args.removeFirst()
        var name = arg, inline: String?
        if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
            name = String(arg[..<eq])
            inline = String(arg[arg.index(after: eq)...])
        }
        if valued.contains(name) {
            guard let value = inline ?? (args.isEmpty ? nil : args.removeFirst()) else { throw UsageError("\(name) needs a value") }
            guard values[name] == nil else { throw UsageError("\(name) given twice") }
            values[name] = value
        } else if boolean.contains(name), inline == nil {
            flags.insert(name)
        } else {
            throw UsageError("unknown option \(arg) (see --help)")
        }
    }

    if flags.contains("--list") {
        for s in BuiltInLifecycles.all { print("\(s.name.padding(toLength: 30, withPad: " ", startingAt: 0)) \(s.description)") }
        return 0
    }
    if flags.contains("--list-steps") {
        for a in StepAction.allCases { print("\(a.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0)) \(a.summary)") }
        return 0
    }
    if let name = values["--print-scenario"] {
        guard let s = BuiltInLifecycles.named(name) else { throw UsageError("unknown lifecycle \(name) (see --list)") }
        print(s.json.prettyString())
        return 0
    }
    let pki = URL(fileURLWithPath: values["--pki"] ?? "Tools/pki")
    if let dir = values["--regenerate"] ?? values["--check"] {
        let write = values["--regenerate"] != nil
        let simulator = try GroupSimulator(pkiDirectory: pki)
        let report = try ScenarioFiles.sync(directory: URL(fileURLWithPath: dir), simulator: simulator, write: write)
        for f in report.written { eprint("wrote \(dir)/\(f)") }
        for d in report.drifted { eprint("DRIFT \(dir)/\(d.file): \(d.detail)") }
        for f in report.stale { eprint("note: \(dir)/\(f) belongs to no built-in lifecycle") }
        eprint("\(report.unchanged.count) unchanged, \(report.written.count) written, \(report.drifted.count) drifted")
        if !write, !report.drifted.isEmpty {
            eprint("run: swift run seatledger-sim --regenerate \(dir)")
            return 1
        }
        return 0
    }

    // The scenario.
    let scenario: Scenario
    switch (values["--lifecycle"], values["--scenario"]) {
    case (let name?, nil):
        guard let s = BuiltInLifecycles.named(name) else { throw UsageError("unknown lifecycle \(name) (see --list)") }
        scenario = s
    case (nil, let path?):
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
        do { scenario = try Scenario.parse(data) } catch { throw UsageError("\(path): \(error)") }
    case (nil, nil):
        throw UsageError("choose --lifecycle NAME (see --list) or --scenario FILE")
    default:
        throw UsageError("--lifecycle and --scenario are mutually exclusive")
    }

    var options = BuiltInLifecycles.options(for: scenario)
    if values["--scenario"] != nil { options.groupIndexBase = 0 }
    if let seed = values["--seed"] {
        guard let n = UInt64(seed) else { throw UsageError("--seed must be a non-negative integer") }
        options.seed = n
    }
    if let bundleId = values["--bundle-id"] {
        guard !bundleId.isEmpty, bundleId.allSatisfy({ $0.isLetter || $0.isNumber || ".-".contains($0) }) else {
            throw UsageError("--bundle-id must be a bundle id such as com.example.focus, got \(bundleId)")
        }
        options.bundleId = bundleId
    }
    options.accelerated = flags.contains("--accelerated")
    if let start = values["--start"] {
        guard let millis = Timestamp.parse(start) else { throw UsageError("--start must be ISO 8601, e.g. 2026-10-01T00:00:00Z") }
        options.start = millis
    }
    if let shape = values["--unclaim-shape"] {
        guard let s = UnclaimShape(rawValue: shape) else { throw UsageError("--unclaim-shape: unclaimInfo or data+unclaimInfo") }
        options.unclaimShape = s
    }
    if let placement = values["--revoked-seat-quantity"] {
        guard let p = RevokedSeatPlacement(rawValue: placement) else { throw UsageError("--revoked-seat-quantity: multiSeatInfo or topLevel") }
        options.revokedSeatPlacement = p
    }
    options.faults.drop = try values["--drop"].map { try DrillSelection.parse($0) } ?? .none
    options.faults.duplicate = try values["--duplicate"].map { try DrillSelection.parse($0) } ?? .none
    options.faults.delay = try values["--delay"].map { try DrillSelection.parse($0) } ?? .none
    options.faults.reorder = try values["--reorder"].map { try DrillSelection.parse($0) } ?? .none
    var groups = 1
    if let load = values["--load"] {
        guard let n = Int(load), n >= 1 else { throw UsageError("--load must be a positive integer") }
        groups = n
    }
    if values["--history-out"] != nil, options.faults.drop == .none {
        eprint("note: --history-out without --drop writes one empty history page")
    }

    if flags.contains("--list-events") {
        let plan = try SimulationPlan(scenario, options: options)
        for e in plan.events {
            print("\(String(e.index).padding(toLength: 4, withPad: " ", startingAt: 0)) \(e.kind == .notification ? "N" : "A") \(Timestamp.iso8601(e.occurredAt))  \(e.eventId)  \(e.label)")
        }
        print("evaluation time: \(Timestamp.iso8601(plan.evaluationTime))")
        return 0
    }

    let simulator = try GroupSimulator(pkiDirectory: pki)
    let out = try Output(path: values["--out"])
    let expect = try values["--expect"].map { try Output(path: $0) }
    let historyOut = try values["--history-out"].map { try Output(path: $0) }
    var firstExpected = true
    expect?.write("[")
    let summary = try simulator.stream(
        scenario, options: options, groups: groups,
        line: { out.line($0) },
        expected: expect.map { file in
            { expectation in
                for element in expectation.arrayElements {
                    file.write(firstExpected ? "\n" : ",\n")
                    file.write(element)
                    firstExpected = false
                }
            }
        },
        history: historyOut.map { file in { file.line($0) } })
    expect?.write(firstExpected ? "]\n" : "\n]\n")
    out.flush()
    expect?.flush()
    historyOut?.flush()
    if groups > 1 || values["--out"] != nil {
        let rate = summary.seconds > 0 ? Int(Double(summary.lines) / summary.seconds) : 0
        eprint("\(summary.groups) group(s), \(summary.lines) lines (\(summary.notifications) notifications, \(summary.dropped) dropped) in \(String(format: "%.2f", summary.seconds)) s — \(rate) lines/s")
    }
    return 0
}

do {
    exit(try main())
} catch let error as UsageError {
    eprint("seatledger-sim: \(error.description)")
    exit(2)
} catch {
    eprint("seatledger-sim: \(error)")
    exit(2)
}
