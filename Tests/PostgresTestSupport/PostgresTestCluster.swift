import Foundation
import PostgresClient
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster: a fresh temporary directory holding a copy of an initdb'd
/// template, a server on a free loopback TCP port (its unix socket inside that directory), one
/// database created. `deinit` stops the server and removes the directory; so does a failed `init`.
///
/// initdb and postgres refuse to run as root: as root, the tools run as the `postgres` OS user
/// through `runuser` and the directory is chowned to it. As any other user they run directly.
/// Tuned to start fast and to be thrown away: fsync, full-page writes and synchronous commit off.
///
/// ```swift
/// let cluster = try PostgresTestCluster()
/// let connection = try cluster.connect()
/// try cluster.restart()  // connection is now lost; reconnect()
/// ```
public final class PostgresTestCluster {
    /// The temporary directory holding `data/`, the socket and the logs.
    public let directory: String
    /// The loopback TCP port the server listens on (kept across ``restart()``).
    public let port: Int
    /// The database created for the test.
    public let database: String
    /// The superuser role initdb created.
    public let user = "postgres"

    private let installation: PostgresInstallation
    private var running = false
    private var removed = false

    /// Creates, starts and prepares a cluster with database `database`.
    public init(database: String = "seatledger_test") throws {
        installation = try PostgresInstallation.shared()
        directory = try installation.makeClusterDirectory()
        self.database = database
        do {
            port = try Self.freePort()
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        do {
            try installation.runAsServerUser("/bin/cp", ["-a", installation.templateDirectory + "/data", dataDirectory], log: log("cp"))
            try PostgresInstallation.append("""
                listen_addresses = '127.0.0.1'
                port = \(port)
                unix_socket_directories = '\(directory)'

                """, to: dataDirectory + "/postgresql.conf")
            try start()
            let admin = try PostgresConnection(url: url(database: "postgres"))
            try admin.execute("CREATE DATABASE \(PostgresConnection.quoteIdentifier(database))")
        } catch {
            stop()
            remove()
            throw error
        }
    }

    deinit {
        stop()
        remove()
    }

    /// `data/` inside ``directory``.
    public var dataDirectory: String { directory + "/data" }

    /// A libpq URL for `database` (the test database by default) over loopback TCP, SSL off.
    public func url(database: String? = nil) -> String {
        "postgresql://\(user)@127.0.0.1:\(port)/\(database ?? self.database)?sslmode=disable"
    }

    /// A new connection to the test database.
    public func connect() throws -> PostgresConnection {
        try PostgresConnection(url: url(), connectTimeoutSeconds: 5)
    }

    /// Whether the server is running (as far as this object started and stopped it).
    public var isRunning: Bool { running }

    /// Starts the server and waits until it accepts connections.
    public func start() throws {
        guard !running else { return }
        running = true  // from here on stop() cleans up, even if the wait below fails
        try installation.runTool("pg_ctl", ["start", "-D", dataDirectory, "-l", directory + "/postgres.log", "-w", "-t", "30", "-s"],
                                 log: log("pg_ctl"))
    }

    /// Stops the server (fast shutdown: open sessions are terminated) and waits until it is gone.
    ///
    /// Goes by `postmaster.pid`, not only by what this object believes, so a server whose start
    /// timed out after all is stopped too.
    public func stop() {
        running = false
        guard FileManager.default.fileExists(atPath: dataDirectory + "/postmaster.pid") else { return }
        if (try? installation.runTool("pg_ctl", ["stop", "-D", dataDirectory, "-m", "fast", "-w", "-t", "30", "-s"], log: log("pg_ctl"))) != nil {
            return
        }
        Self.signalPostmaster(dataDirectory: dataDirectory, signal: SIGQUIT)  // pg_ctl failed: immediate shutdown
    }

    /// Stops and starts the server on the same port and data (connections made before are lost).
    public func restart() throws {
        stop()
        try start()
    }

    /// The directory with the server's tools (`psql`, `pg_ctl`, …).
    public var binDirectory: String { installation.binDirectory }

    /// The server log (for failure messages).
    public func serverLog() -> String { ToolProcess.readFile(directory + "/postgres.log") }

    /// Sends `signal` to the postmaster named in `dataDirectory/postmaster.pid`, if that process is a
    /// live postgres (not a recycled pid), and waits up to 10 s for it to exit.
    static func signalPostmaster(dataDirectory: String, signal: Int32) {
        let text = ToolProcess.readFile(dataDirectory + "/postmaster.pid")
        guard let line = text.split(separator: "\n").first, let pid = pid_t(line), pid > 0, isLivePostgres(pid) else { return }
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(10)
        while isLivePostgres(pid), Date() < deadline { usleep(10_000) }
    }

    /// Whether `pid` is a running (not zombie) process named postgres.
    private static func isLivePostgres(_ pid: pid_t) -> Bool {
        // /proc/PID/stat: "PID (comm) STATE …"
        let stat = ToolProcess.readFile("/proc/\(pid)/stat")
        guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return false }
        let name = stat[stat.index(after: open)..<close]
        let state = stat[close...].dropFirst(2).first
        return name.hasPrefix("postgres") && state != "Z" && state != "X"
    }

    // MARK: - Internals

    private func log(_ tool: String) -> String { directory + "/\(tool).log" }

    private func remove() {
        guard !removed else { return }
        removed = true
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A loopback TCP port nobody listens on right now.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestClusterError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TestClusterError("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
