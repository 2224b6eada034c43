import Foundation

/// The Python with the reference implementation of Standard Webhooks (the PyPI package
/// `standardwebhooks`, pinned to ``version``), for the tests that check our signatures and
/// deliveries against it (StandardWebhooksTests, WebhookDeliveryTests).
///
/// The interpreter is `SEATLEDGER_STANDARDWEBHOOKS_PYTHON` (set by `Tools/scripts/test.sh`, which
/// installs the package first); without it the venv under `SEATLEDGER_STANDARDWEBHOOKS_VENV`
/// (default `/tmp/seatledger-standardwebhooks-venv`) is used, made first if needed, and reused
/// between runs. No Python, no venv or no package is a failure, never a skip.
public enum StandardWebhooksPython {
    /// The pinned version of the PyPI package (the same pin as `Tools/scripts/test.sh`).
    public static let version = "1.0.0"

    /// Why the interpreter could not be found or made, or a command failed.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
        /// A failure saying `description`.
        public init(description: String) { self.description = description }
    }

    /// The interpreter, found or made once per test process (tests run in parallel; a `static let`
    /// is initialised once, so two tests never build the venv at the same time).
    public static let interpreter: Result<String, Failure> = Result { () throws(Failure) -> String in
        do { return try python() } catch let failure as Failure { throw failure } catch { throw Failure(description: "\(error)") }
    }

    /// The interpreter: `SEATLEDGER_STANDARDWEBHOOKS_PYTHON`, else the venv's, made if needed.
    static func python() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let given = environment["SEATLEDGER_STANDARDWEBHOOKS_PYTHON"], !given.isEmpty { return given }
        let venv = environment["SEATLEDGER_STANDARDWEBHOOKS_VENV"] ?? "/tmp/seatledger-standardwebhooks-venv"
        let python = venv + "/bin/python"
        let probe = "import importlib.metadata as m, sys; sys.exit(m.version('standardwebhooks') != '\(version)')"
        if (try? run(python, ["-c", probe])) == nil {
            try run("/usr/bin/env", ["python3", "-m", "venv", venv])
            try run(venv + "/bin/pip", ["install", "--quiet", "--disable-pip-version-check", "standardwebhooks==\(version)"])
        }
        return python
    }

    /// Runs `executable` with `arguments` to the end; returns its standard output, or throws with
    /// its exit status and standard error (kept in a temporary file, so neither pipe can fill and
    /// block it).
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String]) throws -> Data {
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-standardwebhooks-\(UUID().uuidString).stderr")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(errors)")
        }
        return data
    }
}
