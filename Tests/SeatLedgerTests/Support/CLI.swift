import AppStoreModels
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What one `seatledger` run produced.
struct CLIResult: Sendable, CustomStringConvertible {
    /// The exit status (or the signal number when `terminatedBySignal`).
    let exitCode: Int32
    /// Whether the process was ended by a signal (e.g. `kill -9`).
    let terminatedBySignal: Bool
    let stdoutData: Data
    let stderrData: Data

    var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    var stderr: String { String(decoding: stderrData, as: UTF8.self) }

    /// stdout parsed as JSON (for `--json` output).
    func json() throws -> JSONValue {
        do {
            return try JSONValue.parse(stdoutData)
        } catch {
            throw TestSupportError("stdout is not JSON (\(error)): \(stdout)\nstderr: \(stderr)")
        }
    }

    var description: String { "exit \(exitCode)\(terminatedBySignal ? " (signal)" : "")\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
}

/// Runs the built `seatledger` executable as a child process.
///
/// The binary is looked up next to the running test bundle (the build products directory of
/// whatever `--scratch-path` was used, e.g. `/tmp/build-tests/debug/seatledger`); set
/// `SEATLEDGER_BIN` to override. A missing binary is an error, never a silent skip.
///
/// `$SEATLEDGER_DB` is removed from the child's environment unless a test passes it explicitly.
enum CLI {
    /// The `seatledger` executable.
    static func binary() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let override = environment["SEATLEDGER_BIN"], !override.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: override) else {
                throw TestSupportError("SEATLEDGER_BIN=\(override) is not an executable file")
            }
            return URL(fileURLWithPath: override)
        }
        var starts: [URL] = []
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            starts.append(URL(fileURLWithPath: path))
        }
        if let executable = Bundle.main.executableURL { starts.append(executable) }
        if let first = CommandLine.arguments.first { starts.append(URL(fileURLWithPath: first)) }
        starts.append(Bundle.main.bundleURL)
        var tried: [String] = []
        for start in starts {
            // The test runner lives in the products directory (or inside a bundle below it).
            var directory = start.resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("seatledger")
                tried.append(candidate.path)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw TestSupportError("""
            the seatledger executable was not found next to the test bundle (tried \(Set(tried).sorted().joined(separator: ", "))); \
            build it (`swift build --scratch-path …`) or set SEATLEDGER_BIN
            """)
    }

    /// Runs `seatledger arguments…` to completion.
    ///
    /// - Parameters:
    ///   - stdin: bytes for standard input (default: empty input).
    ///   - environment: added to (and overriding) the inherited environment.
    ///   - currentDirectory: the child's working directory.
    ///   - timeout: seconds before the child is killed and the call throws.
    @discardableResult
    static func run(_ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
                    currentDirectory: URL? = nil, timeout: TimeInterval = 120) throws -> CLIResult {
        let running = try start(arguments, stdin: stdin, environment: environment, currentDirectory: currentDirectory)
        return try running.wait(timeout: timeout)
    }

    /// Runs `seatledger arguments…` as a user without write access to the caller's files: as
    /// root (CI), through `setpriv` as `nobody`; otherwise as the calling user, whom a directory's
    /// missing write bit stops as well.
    @discardableResult
    static func runWithoutWriteAccess(_ arguments: [String]) throws -> CLIResult {
        guard getuid() == 0 else { return try run(arguments) }
        let running = try RunningCLI(binary: URL(fileURLWithPath: "/usr/bin/setpriv"),
                                     arguments: ["--reuid=65534", "--regid=65534", "--clear-groups", try binary().path] + arguments,
                                     stdin: nil, environment: [:], currentDirectory: nil)
        return try running.wait(timeout: 120)
    }

    /// `run` with variadic arguments.
    @discardableResult
    static func run(_ arguments: String..., stdin: Data? = nil, environment: [String: String] = [:]) throws -> CLIResult {
        try run(arguments, stdin: stdin, environment: environment)
    }

    /// Starts `seatledger arguments…` and returns at once (for kill tests).
    static func start(_ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:],
                      currentDirectory: URL? = nil) throws -> RunningCLI {
        try RunningCLI(binary: binary(), arguments: arguments, stdin: stdin, environment: environment,
                       currentDirectory: currentDirectory)
    }
}

/// A `seatledger` child process. Output goes to files (no pipe can fill up and block the child).
final class RunningCLI {
    let process = Process()
    private let files: TemporaryDirectory

    fileprivate init(binary: URL, arguments: [String], stdin: Data?, environment: [String: String],
                     currentDirectory: URL?) throws {
        files = try TemporaryDirectory(label: "cli")
        let stdinURL = try files.write(stdin ?? Data(), to: "stdin")
        _ = FileManager.default.createFile(atPath: files.path("stdout"), contents: nil)
        _ = FileManager.default.createFile(atPath: files.path("stderr"), contents: nil)
        process.executableURL = binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["SEATLEDGER_DB"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardInput = try FileHandle(forReadingFrom: stdinURL)
        process.standardOutput = try FileHandle(forWritingTo: files.url("stdout"))
        process.standardError = try FileHandle(forWritingTo: files.url("stderr"))
        try process.run()
    }

    /// What the child has written to stderr so far (it may still be running).
    var stderrSoFar: String {
        String(decoding: (try? Data(contentsOf: files.url("stderr"))) ?? Data(), as: UTF8.self)
    }

    /// The child's process id.
    var pid: Int32 { process.processIdentifier }

    /// Whether the child is still running.
    var isRunning: Bool { process.isRunning }

    /// Sends `signal` (default SIGKILL, i.e. `kill -9`).
    func kill(_ signal: Int32 = SIGKILL) {
        _ = Glibc.kill(process.processIdentifier, signal)
    }

    /// Waits for the child to end; kills it and throws after `timeout` seconds.
    func wait(timeout: TimeInterval = 120) throws -> CLIResult {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                kill()
                process.waitUntilExit()
                throw TestSupportError("seatledger \(process.arguments?.joined(separator: " ") ?? "") timed out after \(timeout) s")
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        process.waitUntilExit()
        return CLIResult(exitCode: process.terminationStatus,
                         terminatedBySignal: process.terminationReason == .uncaughtSignal,
                         stdoutData: (try? Data(contentsOf: files.url("stdout"))) ?? Data(),
                         stderrData: (try? Data(contentsOf: files.url("stderr"))) ?? Data())
    }
}

extension CLI {
    /// `seatledger init --db DB` with the test defaults (bundle `com.example.reps`, Sandbox, the
    /// main test root); throws with the child's output unless it exits 0.
    @discardableResult
    static func initLedger(db: String, bundleId: String = TestLedger.bundleId, environment: String = "Sandbox",
                           roots: [URL] = [TestPaths.testRoot], extra: [String] = []) throws -> CLIResult {
        let result = try run(["init", "--db", db, "--bundle-id", bundleId, "--environment", environment]
                             + roots.flatMap { ["--root-cert", $0.path] } + extra)
        guard result.exitCode == 0 else { throw TestSupportError("seatledger init failed: \(result)") }
        return result
    }
}
