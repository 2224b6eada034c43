import Foundation
import Testing

@testable import StandardWebhooks

/// The Standard Webhooks reference libraries' published vector, reproduced exactly.
///
/// Source: github.com/standard-webhooks/standard-webhooks, `libraries/python/tests/test_webhooks.py`,
/// `test_sign_function` (key, message id, timestamp 1614265330, payload and expected signature
/// below); `test_invalid_signature_raises_error` in the same file refuses the same signature with
/// its last base64 digit changed (`…OLJ1OA=`). The PyPI `standardwebhooks==1.0.0` package's
/// `Webhook.sign` gives the same string for these inputs.
@Suite("Standard Webhooks: the published test vector")
struct SignatureVectorTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let id = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    static let timestamp: Int64 = 1_614_265_330
    static let payload = #"{"test": 2432232314}"#
    static let expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

    @Test("our signer gives the vector's signature and headers")
    func signerReproducesVector() throws {
        let signer = WebhookSigner(secret: try WebhookSecret(parsing: Self.secret))
        let headers = try signer.headers(id: Self.id, timestamp: Self.timestamp, body: Self.payload)
        #expect(headers.map(\.name) == ["webhook-id", "webhook-timestamp", "webhook-signature"])
        #expect(headers.map(\.value) == [Self.id, "1614265330", Self.expected])
    }

    @Test("the vector verifies at its own time and at the edges of the tolerance")
    func verifierAcceptsVector() throws {
        let verifier = WebhookVerifier(secret: try WebhookSecret(parsing: Self.secret))
        let headers = [("webhook-id", Self.id), ("webhook-timestamp", "1614265330"), ("webhook-signature", Self.expected)]
        for offset in [-300.0, 0, 299.9, 300.5] {
            let verified = try verifier.verify(headers: headers, body: Self.payload, now: Date(timeIntervalSince1970: Double(Self.timestamp) + offset))
            #expect(verified == VerifiedWebhook(id: Self.id, timestamp: Self.timestamp))
        }
    }

    @Test("the reference tests' near-miss signature is refused")
    func nearMissRefused() throws {
        let verifier = WebhookVerifier(secret: try WebhookSecret(parsing: Self.secret))
        let headers = [("webhook-id", Self.id), ("webhook-timestamp", "1614265330"), ("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=")]
        #expect(throws: WebhookVerificationError.noMatchingSignature(offered: 1)) {
            try verifier.verify(headers: headers, body: Self.payload, now: Date(timeIntervalSince1970: Double(Self.timestamp)))
        }
    }

    @Test("HMAC-SHA256 through OpenSSL matches RFC 4231 test case 2")
    func hmacMatchesRFC4231() throws {
        // RFC 4231 §4.3: key "Jefe", data "what do ya want for nothing?".
        let tag = try HMACSHA256.tag(key: Array("Jefe".utf8), parts: [Array("what do ya want ".utf8), Array("for nothing?".utf8)])
        #expect(tag.map { String(format: "%02x", $0) }.joined() == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}
