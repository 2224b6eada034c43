import AppStoreModels
import Foundation
import GroupSimulator
import SeatLedger
#if canImport(Glibc)
import Glibc
#endif

/// `group-show`: `Ledger.groupState(ref, asOf: now)` latency for random groups of a ledger
/// (one open ledger, warm cache: what a server embedding the library sees per request), and,
/// with `--seatledger BIN`, `seatledger group show REF --json` through the CLI (a new process per
/// call: start, open, resolve, fold, print JSON).
enum GroupShowBench {
    static func run(_ arguments: [String]) throws {
        let options = try Options(arguments, valued: ["--db", "--count", "--seed", "--seatledger", "--cli-runs", "--warmup", "--max-seconds"])
        let path = try options.string("--db")
        let count = try options.int("--count", default: 1000)
        let cliRuns = try options.int("--cli-runs", default: 50)
        let warmup = try options.int("--warmup", default: 20)
        // Each half (in-process, CLI) stops early after this long, with the samples it has.
        let maxSeconds = try options.double("--max-seconds", default: 120)
        var random = SeededRandom(seed: UInt64(try options.int("--seed", default: 1)))

        let ledger = try Ledger.open(path: path)
        let keys = try ledger.store.allGroupKeys()
        guard !keys.isEmpty else { throw BenchError("\(path) has no groups (rebuild first)") }
        let picks = (0..<count).map { _ in keys[Int(random.next() % UInt64(keys.count))] }
        let asOf = Timestamp.millis(Date())

        let warmupStarted = now()
        for key in picks.prefix(warmup) where now() - warmupStarted < maxSeconds / 4 { _ = try ledger.groupState(key, asOf: asOf) }
        var samples: [Double] = []
        samples.reserveCapacity(picks.count)
        var members = 0
        let started = now()
        for key in picks where now() - started < maxSeconds {
            let t0 = now()
            let state = try ledger.groupState(key, asOf: asOf)
            samples.append((now() - t0) * 1000)
            members += state.members.count
            guard state.groupKey == key else { throw BenchError("group show \(key) returned group \(state.groupKey)") }
        }
        var result: [String: Any] = [
            "group_show_inprocess_median_ms": round(median(samples), 3),
            "group_show_inprocess_p99_ms": round(percentile(samples, 99), 3),
            "group_show_inprocess_mean_ms": round(samples.reduce(0, +) / Double(samples.count), 3),
            "group_show_inprocess_max_ms": round(samples.max() ?? 0, 3),
            "group_show_inprocess_samples": samples.count,
            "group_show_inprocess_requested": count,
            "group_show_ledger_groups": keys.count,
            "group_show_avg_members": round(Double(members) / Double(samples.count), 1),
        ]

        if let binary = options.optional("--seatledger"), cliRuns > 0 {
            var cli: [Double] = []
            _ = try spawn(binary, ["group", "show", picks[0], "--json", "--db", path])   // warm the page cache
            let cliStarted = now()
            for key in picks.suffix(cliRuns) where now() - cliStarted < maxSeconds {
                let t0 = now()
                let status = try spawn(binary, ["group", "show", key, "--json", "--db", path])
                cli.append((now() - t0) * 1000)
                guard status == 0 else { throw BenchError("seatledger group show \(key) exited \(status)") }
            }
            // The fixed cost of a process that does nothing: start-up, dynamic linking, Foundation.
            var startup: [Double] = []
            for _ in 0..<min(10, cliRuns) {
                let t0 = now()
                _ = try spawn(binary, ["--help"])
                startup.append((now() - t0) * 1000)
            }
            result["group_show_cli_median_ms"] = round(median(cli), 2)
            result["group_show_cli_p99_ms"] = round(percentile(cli, 99), 2)
            result["group_show_cli_samples"] = cli.count
            result["cli_startup_median_ms"] = round(median(startup), 2)
        }
        try emit(result)
    }

    /// Runs `binary arguments…` with stdout and stderr to /dev/null; returns the exit status.
    static func spawn(_ binary: String, _ arguments: [String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([binary] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        guard rc == 0 else { throw BenchError("cannot run \(binary): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
