import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What every test cluster of this process shares, found and prepared once: the server binaries,
/// the OS user they run as, the base directory for clusters, and an initdb'd template data
/// directory that each cluster copies (a copy is ~10× faster than initdb).
struct PostgresInstallation: Sendable {
    /// The directory with `initdb`, `pg_ctl` and `postgres`.
    let binDirectory: String
    /// The account the server runs as when the tests run as root (initdb and postgres refuse root); `nil` otherwise.
    let osUser: OSUser?
    /// Where cluster directories are made: /dev/shm when it is a roomy tmpfs, else /tmp.
    let baseDirectory: String
    /// The template cluster's directory (holding `data/`), removed when the process exits.
    let templateDirectory: String

    /// The installation, prepared on first use; the error says what is missing.
    static func shared() throws -> PostgresInstallation { try prepared.get() }

    private static let prepared: Result<PostgresInstallation, TestClusterError> = {
        do {
            let installation = try prepare()
            atexit { PostgresInstallation.removeTemplate() }
            return .success(installation)
        } catch let error as TestClusterError {
            return .failure(error)
        } catch {
            return .failure(TestClusterError("\(error)"))
        }
    }()

    private static func removeTemplate() {
        if case .success(let installation) = prepared {
            try? FileManager.default.removeItem(atPath: installation.templateDirectory)
        }
    }

    /// Settings every test cluster gets: throwaway durability, small memory.
    static let settings = """

        # PostgresTestCluster: a throwaway cluster, tuned to start fast
        fsync = off
        full_page_writes = off
        synchronous_commit = off
        shared_buffers = 32MB
        max_connections = 40
        max_wal_size = 1GB
        log_min_messages = warning

        """

    private static func prepare() throws -> PostgresInstallation {
        let binDirectory = try findBinDirectory()
        let osUser = geteuid() == 0 ? try OSUser.named("postgres") : nil
        let base = baseDirectory(rootless: osUser == nil)
        sweepStaleClusters(in: base)
        let template = try makeDirectory(in: base, label: "template", owner: osUser)
        let installation = PostgresInstallation(binDirectory: binDirectory, osUser: osUser, baseDirectory: base, templateDirectory: template)
        do {
            try installation.runTool("initdb", ["-D", template + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8",
                                                "--locale=C", "--no-sync", "--no-instructions"], log: template + "/initdb.log")
            try append(settings, to: template + "/data/postgresql.conf")
        } catch {
            try? FileManager.default.removeItem(atPath: template)
            throw error
        }
        return installation
    }

    /// Runs a PostgreSQL tool from ``binDirectory`` (as ``osUser`` when we are root).
    @discardableResult
    func runTool(_ tool: String, _ arguments: [String], log: String, timeout: TimeInterval = 60) throws -> String {
        try runAsServerUser(binDirectory + "/" + tool, arguments, log: log, timeout: timeout)
    }

    /// Runs any executable as the server's OS user (through runuser when we are root), in a directory it can enter.
    @discardableResult
    func runAsServerUser(_ executable: String, _ arguments: [String], log: String, timeout: TimeInterval = 60) throws -> String {
        let directory = (log as NSString).deletingLastPathComponent
        if let osUser {
            return try ToolProcess.run(osUser.runuser, ["-u", osUser.name, "--", executable] + arguments, log: log, timeout: timeout, in: directory)
        }
        return try ToolProcess.run(executable, arguments, log: log, timeout: timeout, in: directory)
    }

    /// A new directory `slpg-<our pid>-<label>-XXXXXX` in ``baseDirectory``, owned by the server's user.
    func makeClusterDirectory() throws -> String {
        try Self.makeDirectory(in: baseDirectory, label: "cluster", owner: osUser)
    }

    private static func makeDirectory(in base: String, label: String, owner: OSUser?) throws -> String {
        var template = Array((base + "/slpg-\(getpid())-\(label)-XXXXXX").utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw TestClusterError("mkdtemp in \(base) failed: errno \(errno)")
        }
        let path = String(cString: created)
        if let owner, chown(path, owner.uid, owner.gid) != 0 {
            let code = errno
            try? FileManager.default.removeItem(atPath: path)
            throw TestClusterError("cannot chown \(path) to \(owner.name): errno \(code)")
        }
        return path
    }

    static func append(_ text: String, to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw TestClusterError("cannot open \(path)") }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// /dev/shm when it is a tmpfs with room to spare (Docker's default is only 64 MB), else /tmp.
    /// `SEATLEDGER_PG_TMPDIR` overrides. Paths stay short: the socket path must fit in 107 bytes,
    /// and the root case needs a directory the postgres user can reach (so not $TMPDIR).
    private static func baseDirectory(rootless: Bool) -> String {
        if let override = ProcessInfo.processInfo.environment["SEATLEDGER_PG_TMPDIR"], !override.isEmpty { return override }
        var stats = statvfs()
        if statvfs("/dev/shm", &stats) == 0, access("/dev/shm", W_OK) == 0,
           UInt64(stats.f_bavail) * UInt64(stats.f_frsize) > 4 << 30 {
            return "/dev/shm"
        }
        let temporary = FileManager.default.temporaryDirectory.path
        return rootless && temporary.utf8.count <= 60 ? temporary : "/tmp"
    }

    /// Removes cluster directories left by test processes that died without cleaning up,
    /// stopping their servers first (each directory name carries its creator's pid).
    private static func sweepStaleClusters(in base: String) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        for entry in entries where entry.hasPrefix("slpg-") {
            let parts = entry.split(separator: "-")
            guard parts.count >= 4, let owner = pid_t(parts[1]), owner != getpid(), kill(owner, 0) != 0, errno == ESRCH else { continue }
            let directory = base + "/" + entry
            PostgresTestCluster.signalPostmaster(dataDirectory: directory + "/data", signal: SIGQUIT)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// The directory with `initdb`, `pg_ctl` and `postgres`: `SEATLEDGER_PG_BINDIR`, `pg_config
    /// --bindir`, the newest /usr/lib/postgresql/N/bin, or a usual place on the PATH.
    private static func findBinDirectory() throws -> String {
        let fileManager = FileManager.default
        func hasTools(_ directory: String) -> Bool {
            ["initdb", "pg_ctl", "postgres"].allSatisfy { fileManager.isExecutableFile(atPath: directory + "/" + $0) }
        }
        if let override = ProcessInfo.processInfo.environment["SEATLEDGER_PG_BINDIR"], hasTools(override) {
            return override
        }
        // Debian's pg_config (libpq-dev) reports the server's bindir, /usr/lib/postgresql/N/bin.
        if fileManager.isExecutableFile(atPath: "/usr/bin/pg_config"),
           let output = try? ToolProcess.run("/usr/bin/pg_config", ["--bindir"], timeout: 10) {
            let candidate = output.trimmingCharacters(in: .whitespacesAndNewlines)
            if hasTools(candidate) { return candidate }
        }
        let versions = ((try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).compactMap { Int($0) }.sorted(by: >)
        for version in versions where hasTools("/usr/lib/postgresql/\(version)/bin") {
            return "/usr/lib/postgresql/\(version)/bin"
        }
        for directory in ["/usr/local/pgsql/bin", "/usr/local/bin", "/usr/bin"] where hasTools(directory) {
            return directory
        }
        throw TestClusterError("PostgreSQL server binaries not found (initdb, pg_ctl, postgres): install Debian's postgresql package, or set SEATLEDGER_PG_BINDIR")
    }
}

/// The OS account the server runs as when the tests run as root.
struct OSUser: Sendable {
    let name: String
    let uid: uid_t
    let gid: gid_t
    /// The `runuser` binary that switches to it.
    let runuser: String

    static func named(_ name: String) throws -> OSUser {
        guard let entry = getpwnam(name) else {
            throw TestClusterError("running as root, and initdb refuses root; there is no '\(name)' user to run it as (Debian's postgresql package creates one)")
        }
        guard let runuser = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw TestClusterError("running as root needs runuser (util-linux) to start PostgreSQL as '\(name)'")
        }
        return OSUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid, runuser: runuser)
    }
}
