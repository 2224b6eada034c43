import Foundation
import PostgresTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` on a free loopback port with its own temporary directory, stopped in `deinit`.
///
/// Requires Debian's `redis-server` (installed by `.ci/run`); a missing binary is an error.
final class RedisServer {
    let port: Int
    let directory: TemporaryDirectory

    /// The password `requirepass` asks for (`nil`: none).
    let password: String?

    /// Starts a server with AOF persistence (`appendfsync always`) so a restart keeps the stream;
    /// with `password`, clients must `AUTH` first.
    init(password: String? = nil) throws {
        self.password = password
        directory = try TemporaryDirectory(label: "redis")
        port = try PostgresTestCluster.freePort()  // any loopback port; the helper lives with the cluster
        try start()
    }

    deinit { stop() }

    var url: String { "redis://127.0.0.1:\(port)" }

    static func binary() throws -> String {
        for candidate in ["/usr/bin/redis-server", "/usr/local/bin/redis-server"] where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw TestSupportError("redis-server not found: install Debian's redis-server (.ci/run does)")
    }

    /// Starts the server daemonized (so no `Process` has to track it) and waits for PING.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.binary())
        process.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--dir", directory.url.path, "--save", "",
                             "--appendonly", "yes", "--appendfsync", "always", "--daemonize", "yes",
                             "--pidfile", directory.url.appendingPathComponent("redis.pid").path,
                             "--logfile", directory.url.appendingPathComponent("redis.log").path]
            + (password.map { ["--requirepass", $0] } ?? [])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? redisCLI(["PING"])) == "PONG" { running = true; return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestSupportError("redis-server did not answer PING on port \(port)")
    }

    private var running = false

    /// Shuts the server down (AOF keeps the data) and waits until it stops answering.
    func stop() {
        guard running else { return }
        running = false
        _ = try? redisCLI(["SHUTDOWN"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, (try? redisCLI(["PING"])) == "PONG" { Thread.sleep(forTimeInterval: 0.02) }
    }

    /// Stops and starts the server on the same port and data directory.
    func restart() throws {
        stop()
        try start()
    }

    /// Runs `redis-cli -p PORT args…` and returns its trimmed output.
    ///
    /// Output goes through a file and the child is polled (no pipes, no `waitUntilExit`), which
    /// keeps corelibs Foundation from blocking.
    @discardableResult
    func redisCLI(_ arguments: [String]) throws -> String {
        let output = directory.url.appendingPathComponent("cli-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        process.arguments = ["-p", String(port)] + (password.map { ["-a", $0, "--no-auth-warning"] } ?? []) + arguments
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning {
            if Date() > deadline { process.terminate(); throw TestSupportError("redis-cli \(arguments) timed out") }
            Thread.sleep(forTimeInterval: 0.01)
        }
        let data = FileManager.default.contents(atPath: output.path) ?? Data()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
