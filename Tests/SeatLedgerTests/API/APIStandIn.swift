import AppStoreAPI
import AppStoreModels
import Dispatch
import Foundation
import LedgerIntake
#if canImport(Glibc)
import Glibc
#endif
import SeatLedger
import SeatLedgerAppStoreAPI

/// The test API key: `Tools/api-standin/test-key.p8` and its public key, which the stand-in checks.
enum StandInKey {
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let keyId = "STANDIN001"
    static let directory = TestPaths.repoRoot.appendingPathComponent("Tools/api-standin", isDirectory: true)
    static let privateKey = directory.appendingPathComponent("test-key.p8")
    static let publicKey = directory.appendingPathComponent("test-key.pub.pem")
    static let script = directory.appendingPathComponent("standin.py")

    /// Copies `key` (default: the test key) into `directory` with `mode` and returns the
    /// credential environment variables pointing at the copy.
    static func environment(in directory: TemporaryDirectory, key: URL = privateKey, mode: Int = 0o600) throws -> [String: String] {
        let copy = try directory.write(try Data(contentsOf: key), to: "keys/\(UUID().uuidString).p8")
        try FileManager.default.setAttributes([.posixPermissions: NSNumber(value: mode)], ofItemAtPath: copy.path)
        return ["SEATLEDGER_ISSUER_ID": issuerId, "SEATLEDGER_KEY_ID": keyId, "SEATLEDGER_PRIVATE_KEY_FILE": copy.path]
    }
}

/// `Tools/api-standin/standin.py` running on 127.0.0.1 on a free port, serving `state`; stopped
/// when the object goes away (and by itself when the test process exits).
///
/// Needs Python 3 with Debian's `python3-cryptography` (for the JWT signature check); the
/// interpreter is `$SEATLEDGER_PYTHON`, else `/usr/bin/python3`, else `python3` on the PATH.
final class APIStandIn {
    let directory: TemporaryDirectory
    let process = Process()
    let port: Int
    var baseURL: String { "http://127.0.0.1:\(port)" }
    private let logFile: URL

    init(state: JSONValue, bundleId: String = TestLedger.bundleId, groupsPrefix: String = AppStoreAPIPaths.groupsPrefix) throws {
        directory = try TemporaryDirectory(label: "standin")
        let stateFile = try directory.write(Data(state.canonicalData()), to: "state.json")
        logFile = directory.url("requests.json")
        let environment = ProcessInfo.processInfo.environment
        let python: URL
        var prefixArguments: [String] = []
        if let custom = environment["SEATLEDGER_PYTHON"], !custom.isEmpty {
            python = URL(fileURLWithPath: custom)
        } else if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            python = URL(fileURLWithPath: "/usr/bin/python3")
        } else {
            python = URL(fileURLWithPath: "/usr/bin/env")
            prefixArguments = ["python3"]
        }
        process.executableURL = python
        process.arguments = prefixArguments + [
            StandInKey.script.path, "--state", stateFile.path, "--public-key", StandInKey.publicKey.path,
            "--issuer-id", StandInKey.issuerId, "--key-id", StandInKey.keyId, "--bundle-id", bundleId,
            "--groups-prefix", groupsPrefix, "--log", logFile.path, "--port", "0",
        ]
        let stdout = Pipe()
        process.standardOutput = stdout
        _ = FileManager.default.createFile(atPath: directory.path("stderr"), contents: nil)
        process.standardError = try FileHandle(forWritingTo: directory.url("stderr"))
        try process.run()
        let line = Self.firstLine(of: stdout.fileHandleForReading, timeout: 20)
        guard let line, line.hasPrefix("LISTENING "), let port = Int(line.dropFirst("LISTENING ".count)) else {
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
            let stderr = (try? String(contentsOf: directory.url("stderr"), encoding: .utf8)) ?? ""
            throw TestSupportError("""
                the API stand-in did not start (needs python3 with Debian's python3-cryptography): \
                stdout \(line ?? "<nothing>"), stderr: \(stderr)
                """)
        }
        self.port = port
    }

    deinit {
        // SIGKILL: a child of Foundation's Process may start with SIGTERM blocked.
        if process.isRunning {
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    private static func firstLine(of handle: FileHandle, timeout: TimeInterval) -> String? {
        let result = LockedBox<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var buffer = Data()
            while !buffer.contains(0x0A) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
            }
            let text = String(decoding: buffer, as: UTF8.self)
            result.set(text.split(separator: "\n").first.map(String.init))
            done.signal()
        }
        return done.wait(timeout: .now() + timeout) == .success ? result.get() : nil
    }

    /// Every request the stand-in saw (method, path, query, endpoint, body, auth, token, status, fault).
    func requests() throws -> [JSONValue] {
        guard let data = FileManager.default.contents(atPath: logFile.path) else { return [] }
        return try JSONValue.parse(data).arrayValue ?? []
    }

    /// Requests for one endpoint.
    func requests(_ endpoint: String) throws -> [JSONValue] {
        try requests().filter { $0["endpoint"]?.stringValue == endpoint }
    }

    /// Appends scripted faults (`{"endpoint", "status", "headers", "body", "delay", "times"}`).
    func addFaults(_ faults: [JSONValue]) throws {
        try admin("POST", "/_standin/faults", .array(faults))
    }

    /// Replaces top-level keys of the served state.
    func update(_ state: [String: JSONValue]) throws {
        try admin("POST", "/_standin/state", .object(state))
    }

    /// The served state now (seats change with claims).
    func state() throws -> JSONValue {
        try JSONValue.parse(try admin("GET", "/_standin/state", nil))
    }

    @discardableResult
    private func admin(_ method: String, _ path: String, _ body: JSONValue?) throws -> Data {
        guard let url = URL(string: baseURL + path) else { throw TestSupportError("bad URL") }
        let response = try URLSessionTransport().send(HTTPRequest(method: method, url: url, headers: ["Content-Type": "application/json"],
                                                                  body: body.map { $0.canonicalData() }, timeout: 10))
        guard response.status == 200 else { throw TestSupportError("stand-in admin \(path): HTTP \(response.status)") }
        return response.body
    }
}

/// A value behind a lock, for handing results across threads in tests.
final class LockedBox<T: Sendable>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ value: T) { self.value = value }
    func get() -> T { lock.withLock { value } }
    func set(_ newValue: T) { lock.withLock { value = newValue } }
}

/// A ledger, a stand-in and credentials, with a runner for API commands through the CLI.
final class APIFixture {
    let test: TestLedger
    let standIn: APIStandIn
    let credentials: [String: String]
    /// `$SEATLEDGER_NOW` for every command (the stand-in's history window uses the same moment).
    let now: EpochMillis

    init(state: [String: JSONValue], now: EpochMillis, ledger: TestLedger? = nil) throws {
        test = try ledger ?? TestLedger()
        var served = state
        served["now"] = .int(now)
        standIn = try APIStandIn(state: .object(served))
        credentials = try StandInKey.environment(in: test.directory)
        self.now = now
    }

    /// Runs `seatledger arguments… --db … --api-base-url …` with the test credentials.
    @discardableResult
    func run(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60) throws -> CLIResult {
        var env = credentials
        env["SEATLEDGER_NOW"] = Timestamp.iso8601(now)
        for (key, value) in environment { env[key] = value }
        return try CLI.run(arguments + ["--db", test.path, "--api-base-url", standIn.baseURL], environment: env, timeout: timeout)
    }

    /// Starts a command without waiting (for kill drills).
    func start(_ arguments: [String]) throws -> RunningCLI {
        var env = credentials
        env["SEATLEDGER_NOW"] = Timestamp.iso8601(now)
        return try CLI.start(arguments + ["--db", test.path, "--api-base-url", standIn.baseURL], environment: env)
    }

    /// Ingests lines into the ledger as if delivered live, recorded at `recordedAt` (default:
    /// an hour before ``now``; the CLI records at `$SEATLEDGER_NOW`, so knowledge times stay ordered).
    func ingest(_ lines: [String], recordedAt: EpochMillis? = nil) throws {
        let pinned = recordedAt ?? now - 3_600_000
        let store = test.store
        let previous = store.clock
        store.clock = { pinned }
        defer { store.clock = previous }
        _ = try test.ledger.ingest(lines.enumerated().map {
            InboundMessage(raw: Data($0.element.utf8), source: "fixture:\($0.offset + 1)", origin: .file, acceptsAPIResponses: true)
        })
    }
}

/// `{"signedPayload": "<jws>"}` lines → the stand-in's `notifications` entries.
func historyEntries(_ lines: [String], sendAttemptResult: String = "SUCCESS") throws -> [JSONValue] {
    try lines.map { line in
        guard let jws = try JSONValue.parse(line)["signedPayload"]?.stringValue else {
            throw TestSupportError("not a notification line: \(line.prefix(80))")
        }
        let signedDate = jwsPayload(jws)?["signedDate"]?.int64Value ?? 0
        return ["signedPayload": .string(jws),
                "sendAttempts": [["attemptDate": .int(signedDate + 500), "sendAttemptResult": .string(sendAttemptResult)]]]
    }
}

/// The (unverified) payload of a compact JWS.
func jwsPayload(_ jws: String) -> JSONValue? {
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let data = Base64URL.decode(parts[1]) else { return nil }
    return try? JSONValue.parse(data)
}
