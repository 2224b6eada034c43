import Foundation
import LedgerIntake

// seatledger-bench: the in-process pieces of Tools/bench/run. Each subcommand prints one JSON
// object on stdout (progress on stderr); `report` merges them into bench-results.json.

let usage = """
seatledger-bench — benchmark steps for Tools/bench/run (see Tools/bench/README.md)

  es256 --input NDJSON --pki DIR [--seconds S] [--sample-lines N] [--threads N]
      raw ES256 verifications/s through OpenSSL over the stream's JWS, all cores
  sqlite --input NDJSON --db PATH [--rows N] [--batch 1000]
      raw batched SQLite inserts/s of the stream's lines (plain table, WAL, synchronous FULL)
  build-ledger --db PATH --pki DIR --scenario FILE --groups N [--seed S] [--batch N] [--shared-member-refs]
      a ledger from the simulator through MessageDecoder + EventStore.commit, no projections
  reset-projections --db PATH
      empty event_facts / group_index / group_snapshot (and a schema 1 group_state) so the next rebuild starts from the log
  rebuild-floor --db PATH --scratch PATH
      the storage floor of a rebuild: SQLite alone reading its input and writing its output (no computation)
  group-show --db PATH [--count 1000] [--seed S] [--seatledger BIN] [--cli-runs 50]
      Ledger.groupState latency (and `seatledger group show --json` through the CLI)
  post --input NDJSON --port P [--connections 16] [--limit N] [--path /notifications]
      POST the lines to a running server over C keep-alive connections, closed loop: notifications/s, p50/p99 ms
  post --input NDJSON --port P --rate R --duration S [--connections 64] [--acks FILE]
      open loop: line i is due at start + i/R whatever the answers; latency from when it was due
      (--acks: one JSON line per 200, {"line", "notificationUUID", "dueAt", "ackedAt"} in epoch ms)
  get --db PATH --port P --token T [--connections 16] [--duration 10] [--warmup 2] [--count 10000] [--seed 1] [--pid SERVER]
      GET /v1/members/{id} for member ids sampled from the ledger, closed loop: requests/s, p50/p99 ms
  lapses --groups N --pki DIR [--dir DIR] [--batch 8192]
      N groups whose periods end in the same minute: Ledger.deriveAccessChanges until every lapse is derived
  measure [--prefix P] [--timeout S] [--stdout FILE] -- COMMAND ARGS…
      wall time, peak RSS and exit status of a command (killed after the timeout)
  report --parts DIR --out FILE
      merge step results, derive ratios, check targets, print the table, write the JSON
"""

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first, command != "--help", command != "-h" else {
    print(usage)
    exit(arguments.isEmpty ? 2 : 0)
}
arguments.removeFirst()
do {
    switch command {
    case "es256": try ES256Bench.run(arguments)
    case "sqlite": try SQLiteBench.run(arguments)
    case "build-ledger": try LedgerBuild.run(arguments)
    case "reset-projections": try ResetProjections.run(arguments)
    case "rebuild-floor": try RebuildFloorBench.run(arguments)
    case "group-show": try GroupShowBench.run(arguments)
    case "post": try WebhookPostBench.run(arguments)
    case "get": try MemberGetBench.run(arguments)
    case "lapses": try LapsesBench.run(arguments)
    case "measure": try Measure.run(arguments)
    case "report": try Report.run(arguments)
    default:
        FileHandle.standardError.write(Data("unknown subcommand \(command)\n\(usage)\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("seatledger-bench \(command): \(error)\n".utf8))
    exit(2)
}
