import Foundation
import HTTPTestSupport
import StandardWebhooks
import WebhookDelivery

/// The reference receiver (``ReferenceReceiverProcess``) with these tests' record types.
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

    private let process: ReferenceReceiverProcess
    /// The port it listens on.
    var port: Int { process.port }
    /// Its files.
    var directory: URL { process.directory }

    /// Starts a receiver accepting `secrets`, with `options` passed on (`--status 500`, …).
    init(secrets: [WebhookSecret], options: [String] = []) throws {
        process = try ReferenceReceiverProcess(secrets: secrets.map(\.revealedText), options: options)
    }

    /// Stops the receiver (its port is free afterwards).
    func stop() { process.stop() }

    /// The receiver's URL at `path`.
    func endpoint(_ path: String = "/hooks/seatledger") throws -> WebhookEndpointURL {
        try WebhookEndpointURL(validating: "http://127.0.0.1:\(port)\(path)", allowsLoopbackHTTP: true)
    }

    /// The verified deliveries recorded so far.
    func records() throws -> [Record] { try process.recordLines().map { try JSONDecoder().decode(Record.self, from: $0) } }

    /// The refusals logged so far.
    func refusals() throws -> [Refusal] { try process.refusalLines().map { try JSONDecoder().decode(Refusal.self, from: $0) } }
}
