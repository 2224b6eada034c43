import Foundation
import HTTPTestSupport
import Testing

@testable import StandardWebhooks

/// Our signatures checked by the reference implementation: the `standardwebhooks` package from
/// PyPI, pinned to ``ReferenceImplementation/version``, run from `reference_receiver.py`.
///
/// The Python is `StandardWebhooksPython.interpreter` (`Tests/HTTPTestSupport`):
/// `SEATLEDGER_STANDARDWEBHOOKS_PYTHON` (set by `Tools/scripts/test.sh`, which installs the package
/// first), else the venv under `SEATLEDGER_STANDARDWEBHOOKS_VENV` (default
/// `/tmp/seatledger-standardwebhooks-venv`), made if needed and reused between runs. It never
/// skips: no Python, no venv or no package is a failure.
@Suite("Standard Webhooks: the reference implementation (PyPI standardwebhooks) verifies our deliveries")
struct ReferenceImplementationTests {
    /// A delivery as the script reads it.
    struct Message: Encodable {
        let id: String
        let timestamp: Int64
        let body: String
        let headers: [String: String]
        let tamperedBody: String
        let oldHeaders: [String: String]
        let newHeaders: [String: String]
        let wrongSecretHeaders: [String: String]
    }

    struct Document: Encodable {
        let receiverSecrets: [String]
        let messages: [Message]
    }

    /// What the library said about one message: "accepted" or its error's message, per receiver secret.
    struct Result: Decodable {
        let id: String
        let referenceSignature: String
        let valid: [String]
        let tamperedBody: [String]
        let old: [String]
        let new: [String]
        let wrongSecret: [String]
    }

    struct Output: Decodable {
        let version: String
        let results: [Result]
    }

    static let bodies = [
        #"{"type":"access.granted","memberId":"m-1","seat":1}"#,
        #"{"type":"access.revoked","reason":"REFUNDED","member":"Zoë Ångström","note":"naïve — ✓"}"#,
        "{\n  \"type\": \"access.granted\",\n  \"nested\": {\"list\": [1, 2.5, null, true]}\n}\n",
        #"{"empty":""}"#,
        #"[]"#,
        #"{"emoji":"👩‍👩‍👧","escaped":"a\"b\\c\u0000"}"#,
        "{\"long\":\"" + String(repeating: "x", count: 20_000) + "\"}",
        #"{"dots":"a.b.c","ids":"msg.1614265330.body"}"#,
    ]

    @Test("every delivery verifies; a tampered body, an old or future timestamp and a wrong secret are refused")
    func referenceVerifies() throws {
        let newer = WebhookSecret.generate()
        let older = WebhookSecret.generate()
        let wrong = WebhookSecret.generate()
        let now = Int64(Date().timeIntervalSince1970)
        let rotating = WebhookSigner(secrets: [newer, older])
        func dictionary(_ headers: [(name: String, value: String)]) -> [String: String] {
            Dictionary(uniqueKeysWithValues: headers.map { ($0.name, $0.value) })
        }
        var messages: [Message] = []
        var ourSignatures: [String] = []
        for (index, body) in Self.bodies.enumerated() {
            let id = "tr_\(index)_" + UUID().uuidString.lowercased()
            let timestamp = now - Int64(index)  // inside the library's 5 minutes
            let headers = try rotating.headers(id: id, timestamp: timestamp, body: body)
            ourSignatures.append(try #require(headers.last?.value.split(separator: " ").first.map(String.init)))
            messages.append(Message(
                id: id, timestamp: timestamp, body: body, headers: dictionary(headers),
                tamperedBody: body.replacingOccurrences(of: "a", with: "b") + " ",
                oldHeaders: dictionary(try rotating.headers(id: id, timestamp: now - 400, body: body)),
                newHeaders: dictionary(try rotating.headers(id: id, timestamp: now + 400, body: body)),
                wrongSecretHeaders: dictionary(try WebhookSigner(secret: wrong).headers(id: id, timestamp: timestamp, body: body))))
        }
        // Receivers: one holding the newest secret, one still on the older (a rotation in progress).
        let output = try ReferenceImplementation.run(Document(receiverSecrets: [newer.revealedText, older.revealedText], messages: messages))

        #expect(output.version == ReferenceImplementation.version)
        try #require(output.results.count == messages.count)
        for (index, result) in output.results.enumerated() {
            #expect(result.id == messages[index].id)
            #expect(result.referenceSignature == ourSignatures[index], "message \(index): the library signs the same bytes the same way")
            #expect(result.valid == ["accepted", "accepted"], "message \(index)")
            #expect(result.tamperedBody == ["No matching signature found", "No matching signature found"], "message \(index)")
            #expect(result.old == ["Message timestamp too old", "Message timestamp too old"], "message \(index)")
            #expect(result.new == ["Message timestamp too new", "Message timestamp too new"], "message \(index)")
            #expect(result.wrongSecret == ["No matching signature found", "No matching signature found"], "message \(index)")
        }
    }

    @Test("the library refuses a signature made with a deliberately wrong HMAC key (the check can fail)")
    func wrongKeyRefused() throws {
        let secret = WebhookSecret.generate()
        // The right secret's bytes with the last one flipped: one bit away from valid.
        var bytes = secret.key
        bytes[bytes.count - 1] ^= 0x01
        let nearly = try WebhookSecret(keyBytes: bytes)
        let now = Int64(Date().timeIntervalSince1970)
        let body = #"{"type":"access.granted"}"#
        let headers = Dictionary(uniqueKeysWithValues: try WebhookSigner(secret: nearly).headers(id: "tr_wrong_key", timestamp: now, body: body).map { ($0.name, $0.value) })
        let message = Message(id: "tr_wrong_key", timestamp: now, body: body, headers: headers, tamperedBody: body,
                              oldHeaders: headers, newHeaders: headers, wrongSecretHeaders: headers)
        let output = try ReferenceImplementation.run(Document(receiverSecrets: [secret.revealedText], messages: [message]))
        let result = try #require(output.results.first)
        #expect(result.valid == ["No matching signature found"])
        #expect(result.referenceSignature != headers["webhook-signature"])
    }
}

/// Runs `reference_receiver.py` with the Python that has the pinned `standardwebhooks`
/// (found or made by `StandardWebhooksPython`, shared with WebhookDeliveryTests).
enum ReferenceImplementation {
    /// The pinned version of the PyPI package (the same pin as `Tools/scripts/test.sh`).
    static let version = StandardWebhooksPython.version
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("reference_receiver.py")

    /// Writes `document` to a temporary file, runs the script on it, and decodes its output.
    static func run(_ document: ReferenceImplementationTests.Document) throws -> ReferenceImplementationTests.Output {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-standardwebhooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("messages.json")
        try JSONEncoder().encode(document).write(to: file)
        let output = try StandardWebhooksPython.run(try StandardWebhooksPython.interpreter.get(), [script.path, file.path])
        return try JSONDecoder().decode(ReferenceImplementationTests.Output.self, from: output)
    }
}
