import Dispatch
import Foundation
import HTTPTestSupport
import StandardWebhooks
import Synchronization
import WebhookDelivery

/// `Tools/scripts/webhook-receiver.py` run as a subprocess on 127.0.0.1 with the reference
/// implementation's Python: started with its secrets in a file, ready once it printed
/// `listening PORT`, stopped (SIGTERM to its own pid) when the test lets go of it.
final class WebhookReceiver {
    /// One line of `--record`.
    struct Record: Decodable {
        let webhookId: String
        let timestamp: Int64
        let receivedAt: Int64
        let body: DeliveryBody
        let contentType: String?
        let userAgent: String?
    }

    /// One line of `--refusals`.
    struct Refusal: Decodable {
        let reason: String
        let webhookId: String?
    }

    /// The JSON body the tests send.
    struct DeliveryBody: Codable, Equatable {
        let type: String
        let memberId: String
        let note: String
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/scripts/webhook-receiver.py")

    let port: Int
    let directory: URL
    private let process: Process

    /// Starts a receiver accepting `secrets`, with `options` passed on (`--status 500`, …).
    init(secrets: [WebhookSecret], options: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-webhook-receiver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secretFile = directory.appendingPathComponent("secrets")
        try Data(secrets.map { $0.revealedText + "\n" }.joined().utf8).write(to: secretFile)
        let errorFile = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try StandardWebhooksPython.interpreter.get())
        process.arguments = [Self.script.path, "--secret-file", secretFile.path, "--port", "0",
                             "--record", directory.appendingPathComponent("record.ndjson").path,
                             "--refusals", directory.appendingPathComponent("refusals.ndjson").path] + options
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        self.process = process

        // Readiness: the script prints `listening PORT` once bound. Read it on another thread so
        // a receiver that never gets there fails the test after a deadline instead of hanging it.
        let line = Mutex<String?>(nil)
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
        if done.wait(timeout: .now() + 30) == .timedOut { process.terminate() ; _ = done.wait(timeout: .now() + 5) }
        let text = line.withLock { $0 } ?? ""
        guard text.hasPrefix("listening "), let port = Int(text.dropFirst("listening ".count).prefix { $0.isNumber }) else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw Failure(description: "webhook-receiver.py did not start (stdout \(text.debugDescription)): \(errors)")
        }
        self.port = port
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the receiver (its port is free afterwards): SIGTERM, and SIGKILL if it has not
    /// exited 10 s later (a script that stopped honouring SIGTERM must not hang the tests).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let exited = DispatchSemaphore(value: 0)
        let process = self.process
        DispatchQueue.global().async {
            process.waitUntilExit()
            exited.signal()
        }
        if exited.wait(timeout: .now() + 10) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
        }
    }

    /// The receiver's URL at `path`.
    func endpoint(_ path: String = "/hooks/seatledger") throws -> WebhookEndpointURL {
        try WebhookEndpointURL(validating: "http://127.0.0.1:\(port)\(path)", allowsLoopbackHTTP: true)
    }

    /// The verified deliveries recorded so far.
    func records() throws -> [Record] { try lines(of: "record.ndjson") }

    /// The refusals logged so far.
    func refusals() throws -> [Refusal] { try lines(of: "refusals.ndjson") }

    private func lines<T: Decodable>(of name: String) throws -> [T] {
        let url = directory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(T.self, from: Data($0.utf8))
        }
    }
}
