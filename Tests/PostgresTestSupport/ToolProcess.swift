import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to completion for the test cluster: stdin from /dev/null, stdout and stderr
/// into a file, every other descriptor closed, exit polled with `waitpid`.
///
/// Not `Foundation.Process`: on Linux it notices a child's exit through a descriptor the child
/// inherits, so `pg_ctl start`, whose postmaster daemon keeps it open, never looks finished.
enum ToolProcess {
    /// Runs `executable arguments…` (in `directory` if given) and returns its output; throws on a
    /// non-zero exit, a signal or `timeout`. The output is appended to `log` when given.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], log: String? = nil, timeout: TimeInterval = 60,
                    in directory: String? = nil) throws -> String {
        let output = log ?? (NSTemporaryDirectory() + "/pgtool-\(UUID().uuidString).out")
        defer { if log == nil { try? FileManager.default.removeItem(atPath: output) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // closefrom_np / addchdir_np are not visible to Swift: close what /proc/self/fd lists
        // (glibc ignores a close action on a descriptor closed meanwhile) and cd through sh.
        let inherited = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
        for fd in inherited where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        let command = directory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0, executable] } ?? [executable]

        let argv: [UnsafeMutablePointer<CChar>?] = (command + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw TestClusterError("cannot run \(executable): \(String(cString: strerror(spawned)))")
        }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while true {
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid { break }
            if waited < 0, errno != EINTR { throw TestClusterError("waitpid(\(executable)) failed: errno \(errno)") }
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw TestClusterError("\(executable) \(arguments.joined(separator: " ")) timed out after \(Int(timeout)) s: \(readFile(output))")
            }
            usleep(2_000)
        }
        let text = readFile(output)
        // WIFEXITED / WEXITSTATUS are macros Swift cannot import.
        let exited = status & 0x7F == 0
        guard exited, (status >> 8) & 0xFF == 0 else {
            let how = exited ? "exited \((status >> 8) & 0xFF)" : "was killed by signal \(status & 0x7F)"
            throw TestClusterError("\(executable) \(arguments.joined(separator: " ")) \(how): \(text)")
        }
        return text
    }

    /// A file's text, or "" when it cannot be read.
    static func readFile(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}

/// A failure of the test cluster, saying what is missing or what went wrong.
public struct TestClusterError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    /// Creates an error saying `description`.
    public init(_ description: String) { self.description = description }
}
