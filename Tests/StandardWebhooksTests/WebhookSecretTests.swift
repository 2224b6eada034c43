import Foundation
import Testing

@testable import StandardWebhooks

/// Secrets: generation, the text form, parsing errors, and that no text but `revealedText` shows one.
@Suite("Standard Webhooks: secrets")
struct WebhookSecretTests {
    @Test("generate gives 32 fresh bytes that survive the text form")
    func generate() throws {
        let first = WebhookSecret.generate()
        let second = WebhookSecret.generate()
        #expect(first.key.count == 32)
        #expect(first != second)
        #expect(first.revealedText.hasPrefix("whsec_"))
        #expect(try WebhookSecret(parsing: first.revealedText) == first)
        #expect(try WebhookSecret(parsing: " \(first.revealedText)\n") == first, "a newline from a file is ignored")
    }

    @Test("parsing refuses with an error naming the problem", arguments: [
        ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", WebhookSecretError.missingPrefix),
        ("WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", .missingPrefix),
        ("whsec_", .notBase64),
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS*", .notBase64),
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS", .notBase64),
        ("whsec_" + Data(repeating: 7, count: 23).base64EncodedString(), .tooShort(byteCount: 23, minimum: 24)),
        ("whsec_" + Data(repeating: 7, count: 65).base64EncodedString(), .tooLong(byteCount: 65, maximum: 64)),
    ])
    func parsingErrors(text: String, error: WebhookSecretError) {
        #expect(throws: error) { try WebhookSecret(parsing: text) }
    }

    @Test("24 and 64 bytes are the bounds accepted", arguments: [24, 64])
    func bounds(count: Int) throws {
        #expect(try WebhookSecret(parsing: "whsec_" + Data(repeating: 9, count: count).base64EncodedString()).key.count == count)
    }

    @Test("description, debugDescription, dump and interpolation never show the secret")
    func redacted() throws {
        let secret = try WebhookSecret(parsing: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let encoded = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        var dumped = ""
        dump(secret, to: &dumped)
        let texts = [secret.description, secret.debugDescription, "\(secret)", String(reflecting: secret), dumped,
                     "\([secret])", String(describing: Optional(secret)), "\(Mirror(reflecting: secret).children.map { "\($0.value)" })"]
        for text in texts {
            #expect(!text.contains(encoded), "\(text)")
            #expect(!text.contains(String(encoded.prefix(8))), "\(text)")
            #expect(text.contains(secret.fingerprint), "\(text) names the secret by its fingerprint")
            // The key bytes as decimal (what a synthesized dump would show) are absent too.
            #expect(!text.contains("[49, 242"), "\(text)")
        }
        #expect(secret.description == "whsec_…(redacted, sha256 prefix \(secret.fingerprint))")
        #expect(secret.fingerprint.count == 8)
        #expect(secret.revealedText == "whsec_" + encoded)
    }

    @Test("fingerprints tell secrets apart")
    func fingerprints() throws {
        let a = try WebhookSecret(keyBytes: Array(repeating: 1, count: 32))
        let b = try WebhookSecret(keyBytes: Array(repeating: 2, count: 32))
        #expect(a.fingerprint != b.fingerprint)
        // SHA-256 of 32 bytes of 0x01, first 4 bytes.
        #expect(a.fingerprint == "72cd6e84")
    }

    @Test("no error message contains the secret text it was given")
    func errorsDoNotEcho() throws {
        let candidates = ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa!!",
                          "whsec_" + Data(repeating: 0xAB, count: 20).base64EncodedString(),
                          "whsec_" + Data(repeating: 0xCD, count: 80).base64EncodedString()]
        for text in candidates {
            let body = String(text.dropFirst(text.hasPrefix("whsec_") ? 6 : 0))
            do {
                _ = try WebhookSecret(parsing: text)
                Issue.record("\(text.count) characters parsed; expected a refusal")
            } catch {
                for message in [error.description, "\(error)", String(reflecting: error), error.localizedDescription] {
                    #expect(!message.contains(body.prefix(12)), "\(message)")
                }
            }
        }
        // Verification and signing errors carry names and numbers, never a key or a signature.
        let secret = try WebhookSecret(parsing: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let headers = try WebhookSigner(secret: secret).headers(id: "m", timestamp: 1, body: "{}")
        let signature = try #require(headers.last?.value)
        do {
            try WebhookVerifier(secret: WebhookSecret.generate()).verify(headers: headers, body: "{}", now: Date(timeIntervalSince1970: 1))
            Issue.record("a wrong secret was accepted")
        } catch {
            #expect(!error.description.contains(signature.dropFirst(3).prefix(12)))
            #expect(!error.description.contains("MfKQ9r8G"))
        }
    }
}
