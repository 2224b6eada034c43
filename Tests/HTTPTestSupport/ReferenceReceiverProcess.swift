import Dispatch
import Foundation
import Synchronization

/// `Tools/scripts/webhook-receiver.py` (a Standard Webhooks receiver written with the PyPI
/// reference implementation) run as a subprocess on 127.0.0.1 with ``StandardWebhooksPython``:
/// started with its secrets in a file (never on its command line), ready once it printed
/// `listening PORT`, stopped (SIGTERM, then SIGKILL after 10 s) when the test lets go of it.
/// Its `--record` and `--refusals` files are read as JSON lines.
public final class ReferenceReceiverProcess: @unchecked Sendable {
    /// Why the receiver could not start.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/scripts/webhook-receiver.py")

    /// The port it listens on.
    public let port: Int
    /// Its files: `secrets`, `record.ndjson`, `refusals.ndjson`, `stderr`.
    public let directory: URL
    private let process: Process

    /// Starts a receiver accepting `secrets` (`whsec_…`), with `options` passed on (`--status 500`, `--chaos 7`, …).
    public init(secrets: [String], options: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-webhook-receiver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secretFile = directory.appendingPathComponent("secrets")
        try Data(secrets.map { $0 + "\n" }.joined().utf8).write(to: secretFile)
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
        if done.wait(timeout: .now() + 30) == .timedOut { process.terminate(); _ = done.wait(timeout: .now() + 5) }
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
    public func stop() {
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

    /// The lines of `--record` so far: one JSON object per verified delivery answered 2xx.
    public func recordLines() -> [Data] { lines(of: "record.ndjson") }

    /// The lines of `--refusals` so far: one JSON object per refused request.
    public func refusalLines() -> [Data] { lines(of: "refusals.ndjson") }

    /// The file's complete lines: a last line without its line break is one the receiver is
    /// still writing (a read can land between the bytes of one write), so it is left for later.
    private func lines(of name: String) -> [Data] {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(name)) else { return [] }
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        lines.removeLast()   // after the last line break: empty, or a line still being written
        return lines.filter { !$0.isEmpty }.map { Data($0) }
    }
}
