import AppStoreModels
import Foundation
import HTTPTestSupport
import Synchronization

/// `Tools/scripts/webhook-receiver.py` (the PyPI `standardwebhooks` reference implementation)
/// started on loopback for a `serve` test: what it verified and what it refused, as JSON lines.
final class ReferenceReceiver: @unchecked Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tools/scripts/webhook-receiver.py")

    let port: Int
    let directory: URL
    private let process: Process

    /// Starts a receiver accepting `secrets` (`whsec_…`), with `options` passed on (`--chaos 7`, …).
    init(secrets: [String], options: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-receiver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secretFile = directory.appendingPathComponent("secrets")
        try Data(secrets.map { $0 + "\n" }.joined().utf8).write(to: secretFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try StandardWebhooksPython.interpreter.get())
        process.arguments = [Self.script.path, "--secret-file", secretFile.path, "--port", "0",
                             "--record", directory.appendingPathComponent("record.ndjson").path,
                             "--refusals", directory.appendingPathComponent("refusals.ndjson").path] + options
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // Readiness: the script prints `listening PORT` once bound (read on another thread, with a deadline).
        let line = Mutex<String>("")
        let done = DispatchSemaphore(value: 0)
        let reader = output.fileHandleForReading
        DispatchQueue.global().async {
            var bytes = Data()
            while !bytes.contains(UInt8(ascii: "\n")) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
            }
            line.withLock { $0 = String(decoding: bytes, as: UTF8.self) }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 30)
        let text = line.withLock { $0 }
        guard text.hasPrefix("listening "), let port = Int(text.dropFirst(10).prefix { $0.isNumber }) else {
            process.terminate()
            throw FixtureError("webhook-receiver.py did not start: \(text.debugDescription)")
        }
        self.port = port
    }

    deinit {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Every verified delivery answered 2xx: `{webhookId, timestamp, receivedAt, body, …}`.
    func records() throws -> [JSONValue] { try lines("record.ndjson") }
    /// Every refused request: `{reason, webhookId, receivedAt}`.
    func refusals() throws -> [JSONValue] { try lines("refusals.ndjson") }

    private func lines(_ name: String) throws -> [JSONValue] {
        guard let text = try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }

    /// Waits until `condition` holds of the records (checked as the receiver writes them), or
    /// fails after `seconds`.
    func waitForRecords(seconds: Double = 60, _ condition: ([JSONValue]) -> Bool) throws -> [JSONValue] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let records = try records()
            if condition(records) { return records }
            guard Date() < deadline else { throw FixtureError("the receiver got \(records.count) deliveries in \(seconds) s; condition unmet") }
            // The receiver writes each line before answering; this is the test waiting for another process.
            usleep(20_000)
        }
    }
}
