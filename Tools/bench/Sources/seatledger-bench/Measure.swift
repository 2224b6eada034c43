import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `measure`: runs a command, and reports its wall time, peak RSS (wait4's ru_maxrss of the child)
/// and exit status as `<prefix>seconds`, `<prefix>peak_rss_mb`, `<prefix>exit`,
/// `<prefix>timed_out`. The child's stdout goes to `--stdout FILE` (stderr is inherited); a child
/// still running after `--timeout S` is killed (SIGKILL) and reported as timed out.
/// The exit status of `measure` itself is 0 unless the command could not be started.
enum Measure {
    static func run(_ arguments: [String]) throws {
        guard let separator = arguments.firstIndex(of: "--"), separator + 1 < arguments.count else {
            throw BenchError("usage: measure [--prefix P] [--timeout S] [--stdout FILE] -- COMMAND ARGS…")
        }
        let options = try Options(Array(arguments[..<separator]), valued: ["--prefix", "--timeout", "--stdout"])
        let prefix = options.string("--prefix", default: "")
        let timeout = try options.double("--timeout", default: 0)
        let command = Array(arguments[(separator + 1)...])

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, options.optional("--stdout") ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let started = now()
        let rc = posix_spawnp(&pid, command[0], &actions, nil, argv, environ)
        guard rc == 0 else { throw BenchError("cannot run \(command[0]): \(String(cString: strerror(rc)))") }

        var status: Int32 = 0
        var usage = rusage()
        var timedOut = false
        while true {
            let result = wait4(pid, &status, WNOHANG, &usage)
            if result == pid { break }
            if result < 0 && errno != EINTR { throw BenchError("wait4: \(String(cString: strerror(errno)))") }
            if timeout > 0, !timedOut, now() - started > timeout {
                kill(pid, SIGKILL)
                timedOut = true
            }
            usleep(1000)
        }
        let seconds = now() - started
        let exitCode: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        try emit([
            prefix + "seconds": round(seconds, 3),
            prefix + "peak_rss_mb": round(Double(usage.ru_maxrss) / 1024, 1),
            prefix + "exit": Int(exitCode),
            prefix + "timed_out": timedOut,
        ])
    }
}
