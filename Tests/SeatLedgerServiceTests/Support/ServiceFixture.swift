import AppStoreModels
import Foundation
import HTTPTestSupport
import JWSSigning
import JWSVerification
import LedgerStorage
import SeatLedger
import Synchronization

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Paths of the repository, derived from this file.
enum Repository {
    static let root: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let pki = root.appendingPathComponent("Tools/pki", isDirectory: true)
    static let scenarios = root.appendingPathComponent("Events/scenarios", isDirectory: true)

    /// The built `seatledger` next to the test bundle (or `$SEATLEDGER_BIN`); a missing binary is an error.
    static func binary() throws -> URL {
        if let override = ProcessInfo.processInfo.environment["SEATLEDGER_BIN"], !override.isEmpty { return URL(fileURLWithPath: override) }
        var directory = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("seatledger")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw FixtureError("the seatledger executable was not found next to the test bundle; build it or set SEATLEDGER_BIN")
    }
}

/// A SQLite ledger in a temporary directory trusting the test root, removed at the end.
final class LedgerFixture: @unchecked Sendable {
    let directory: URL
    let path: String

    /// A ledger of `bundleId` in `environment` (default the test app in Sandbox).
    init(bundleId: String = "com.example.reps", environment: AppStoreEnvironment = .sandbox) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("ledger.sqlite").path
        let configuration = try LedgerConfiguration(bundleId: bundleId, environment: environment,
                                                    appAppleId: environment == .production ? Notifications.appAppleId : nil)
        _ = try Ledger.create(path: path, configuration: configuration,
                              rootCertificates: try TrustAnchor.load(contentsOf: Repository.pki.appendingPathComponent("root.pem")))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// Signed notifications like Apple's, from the test PKI: one SUBSCRIBED per group.
enum Notifications {
    static let signedDate: EpochMillis = 1_748_779_200_000
    static let day: EpochMillis = 86_400_000
    /// The app Apple id of the test apps' Production ledgers and notifications.
    static let appAppleId: Int64 = 1_234_567_890

    /// `count` bodies `{"signedPayload":"…"}`, each a purchase of its own group `2100000000000000 + index`,
    /// of `bundleId` in `environment` (default the test app in Sandbox).
    static func subscribed(count: Int, offset: Int = 0, bundleId: String = "com.example.reps", environment: String = "Sandbox") throws -> [Data] {
        let signer = try JWSSigner.loadTestPKI(directory: Repository.pki)
        let results = Mutex<[Int: Result<Data, any Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let otid = String(2_100_000_000_000_000 + offset + index)
            let transaction: JSONValue = [
                "originalTransactionId": .string(otid), "transactionId": .string(otid), "appTransactionId": .string("7060\(otid)"),
                "productId": "com.example.reps.team.monthly", "inAppOwnershipType": "PURCHASED", "quantity": 5,
                "purchaseDate": .int(signedDate - day), "originalPurchaseDate": .int(signedDate - day),
                "expiresDate": .int(signedDate + 29 * day), "bundleId": .string(bundleId), "environment": .string(environment),
                "signedDate": .int(signedDate), "type": "Auto-Renewable Subscription", "subscriptionGroupIdentifier": "21000001",
                "storefront": "USA", "storefrontId": "143441", "transactionReason": "PURCHASE", "currency": "USD", "price": 9990,
                "multiSeatInfo": ["invitationManagement": "DEVELOPER", "priceTiers": [["price": 9990, "quantity": 5]]],
            ]
            let result = Result { () throws -> Data in
                var data: [String: JSONValue] = ["bundleId": .string(bundleId), "environment": .string(environment), "bundleVersion": "1.0", "status": 1,
                                                 "signedTransactionInfo": .string(try signer.sign(payload: transaction))]
                if environment == "Production" { data["appAppleId"] = .int(appAppleId) }
                let payload: JSONValue = [
                    "notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY",
                    "notificationUUID": .string("00000000-0000-4000-8000-\(String(format: "%012d", offset + index))"),
                    "signedDate": .int(signedDate), "version": "2.0", "data": .object(data),
                ]
                return Data(JSONValue.object(["signedPayload": .string(try signer.sign(payload: payload))]).canonicalString().utf8)
            }
            results.withLock { $0[index] = result }
        }
        return try (0..<count).map { index in try results.withLock { $0[index]! }.get() }
    }

    /// Every line of the bundled sample streams (signed notifications and API-response envelopes).
    static func sampleLines() throws -> [Data] {
        let files = try FileManager.default.contentsOfDirectory(at: Repository.scenarios, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "ndjson" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        return try files.flatMap { file in
            try String(contentsOf: file, encoding: .utf8).split(separator: "\n").filter { !$0.isEmpty }.map { Data($0.utf8) }
        }
    }
}

/// A `seatledger` child process run to completion.
struct CLIRun {
    let status: Int32
    let stdout: Data
    let stderr: String
    var text: String { String(decoding: stdout, as: UTF8.self) }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> CLIRun {
        let process = Process()
        process.executableURL = try Repository.binary()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIRun(status: process.terminationStatus, stdout: output, stderr: String(decoding: errors, as: UTF8.self))
    }
}

/// A real `seatledger serve` process on an ephemeral loopback port.
///
/// The port is read from the JSON start line on stderr; readiness is polled on `/healthz`.
/// `@unchecked Sendable`: `process` and the pipe are used from the test only; the log lines are
/// collected under a mutex by the reading thread.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port: UInt16 = 0
    private let lines = LineBuffer()
    private let stderrPipe = Pipe()

    /// `fileSizeLimit`: the largest file the process may write, in bytes (`prlimit --fsize`, with
    /// `SIGXFSZ` ignored, so a write past it fails with `EFBIG` as a write to a full disk fails).
    convenience init(db: String, extra: [String] = [], environment: [String: String] = [:], fileSizeLimit: Int? = nil) throws {
        try self.init(serving: ["--db", db], extra: extra, environment: environment, fileSizeLimit: fileSizeLimit)
    }

    /// `serve --config FILE`: the ledgers of a deployment file (its `listen` replaced by an ephemeral port).
    convenience init(config: String, extra: [String] = [], environment: [String: String] = [:], fileSizeLimit: Int? = nil) throws {
        try self.init(serving: ["--config", config], extra: extra, environment: environment, fileSizeLimit: fileSizeLimit)
    }

    /// `serve` with `serving` (where the ledgers are) and `extra`, on an ephemeral loopback port.
    init(serving: [String], extra: [String], environment: [String: String], fileSizeLimit: Int?) throws {
        let serve = ["serve"] + serving + ["--listen", "127.0.0.1:0"] + extra
        if let fileSizeLimit {
            // The shell ignores SIGXFSZ (kept across exec) and execs prlimit, which execs serve: one pid.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "trap '' XFSZ; exec prlimit --fsize=\(fileSizeLimit) \"$0\" \"$@\"", try Repository.binary().path] + serve
        } else {
            process.executableURL = try Repository.binary()
            process.arguments = serve
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardError = stderrPipe
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = stderrPipe.fileHandleForReading
        let lines = self.lines
        Thread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer += chunk
                while let newline = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer = Data(buffer[(newline + 1)...])
                    lines.append(line)
                }
            }
        }.start()
        let started = waitUntil(timeout: .seconds(30)) { self.startPort() != nil || !self.process.isRunning }
        guard started, let port = startPort() else {
            throw FixtureError("serve did not start: \(logLines().joined(separator: "\n"))")
        }
        self.port = port
        guard waitUntil(timeout: .seconds(30), { (try? RawHTTPClient(port: port, timeoutSeconds: 5).request("GET", "/healthz").status) == 200 }) else {
            throw FixtureError("serve on port \(port) never answered /healthz")
        }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    private func startPort() -> UInt16? {
        for line in logLines() {
            guard let value = try? JSONValue.parse(bytes: Array(line.utf8)), value["event"]?.stringValue == "start",
                  let address = value["address"]?.stringValue, let colon = address.lastIndex(of: ":") else { continue }
            return UInt16(address[address.index(after: colon)...])
        }
        return nil
    }

    /// The stderr lines so far.
    func logLines() -> [String] { lines.all }

    /// Sends `signal` and waits for the exit; the exit status.
    @discardableResult
    func stop(signal number: Int32 = SIGTERM) -> Int32 {
        kill(process.processIdentifier, number)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Lines collected by one thread and read by another.
final class LineBuffer: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
