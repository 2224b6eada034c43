import AppStoreModels
import Foundation
import HTTPTestSupport

/// The reference receiver (``ReferenceReceiverProcess``) for a `serve` test: what it verified
/// and what it refused, as JSON values.
final class ReferenceReceiver: @unchecked Sendable {
    private let process: ReferenceReceiverProcess
    /// The port it listens on.
    var port: Int { process.port }

    /// Starts a receiver accepting `secrets` (`whsec_…`), with `options` passed on (`--chaos 7`, …).
    init(secrets: [String], options: [String] = []) throws {
        process = try ReferenceReceiverProcess(secrets: secrets, options: options)
    }

    /// Every verified delivery answered 2xx: `{webhookId, timestamp, receivedAt, body, …}`.
    func records() throws -> [JSONValue] { try process.recordLines().map { try JSONValue.parse($0) } }
    /// Every refused request: `{reason, webhookId, receivedAt}`.
    func refusals() throws -> [JSONValue] { try process.refusalLines().map { try JSONValue.parse($0) } }

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
