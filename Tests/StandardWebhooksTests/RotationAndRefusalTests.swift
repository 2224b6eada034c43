import Foundation
import Testing

@testable import StandardWebhooks

/// Rotation (several signatures) and every refusal of the verifier, each with its own error.
@Suite("Standard Webhooks: rotation and refusals")
struct RotationAndRefusalTests {
    static let newer = try! WebhookSecret(keyBytes: Array(repeating: 0x11, count: 32))
    static let older = try! WebhookSecret(keyBytes: Array(repeating: 0x22, count: 24))
    static let stranger = try! WebhookSecret(keyBytes: Array(repeating: 0x33, count: 64))
    static let id = "tr_01JD4Z3K9Q"
    static let timestamp: Int64 = 1_800_000_000
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let body = Array(#"{"type":"access.granted","member":"Zoë"}"#.utf8)

    static func signed(by secrets: [WebhookSecret], timestamp: Int64 = timestamp, body: [UInt8] = body) throws -> [(name: String, value: String)] {
        try WebhookSigner(secrets: secrets).headers(id: id, timestamp: timestamp, body: body)
    }

    static func value(_ name: String, _ headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name == name }?.value
    }

    @Test("two secrets give two signatures, newest first, each the one-secret signature")
    func twoSignatures() throws {
        let both = try #require(Self.value("webhook-signature", try Self.signed(by: [Self.newer, Self.older])))
        let newerOnly = try #require(Self.value("webhook-signature", try Self.signed(by: [Self.newer])))
        let olderOnly = try #require(Self.value("webhook-signature", try Self.signed(by: [Self.older])))
        #expect(both == "\(newerOnly) \(olderOnly)")
        #expect(newerOnly != olderOnly)
        #expect(newerOnly.hasPrefix("v1,") && newerOnly.count == 3 + 44)
    }

    @Test("during a rotation a receiver holding either secret (or both) accepts",
          arguments: [[newer], [older], [older, newer], [stranger, older]])
    func eitherSecretAccepts(receiverSecrets: [WebhookSecret]) throws {
        let headers = try Self.signed(by: [Self.newer, Self.older])
        let verified = try WebhookVerifier(secrets: receiverSecrets).verify(headers: headers, body: Self.body, now: Self.now)
        #expect(verified.id == Self.id)
    }

    @Test("a receiver with neither secret refuses both signatures")
    func neitherSecretRefuses() throws {
        let headers = try Self.signed(by: [Self.newer, Self.older])
        #expect(throws: WebhookVerificationError.noMatchingSignature(offered: 2)) {
            try WebhookVerifier(secret: Self.stranger).verify(headers: headers, body: Self.body, now: Self.now)
        }
    }

    /// A delivery changed in one way, and the error the verifier must give for it.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let headers: @Sendable () throws -> [(name: String, value: String)]
        let body: [UInt8]
        let error: WebhookVerificationError
        var testDescription: String { name }

        init(_ name: String, body: [UInt8] = RotationAndRefusalTests.body, error: WebhookVerificationError,
             headers: @escaping @Sendable () throws -> [(name: String, value: String)]) {
            self.name = name
            self.headers = headers
            self.body = body
            self.error = error
        }
    }

    static func replacing(_ name: String, with value: String?) -> @Sendable () throws -> [(name: String, value: String)] {
        {
            let headers = try signed(by: [newer])
            return headers.compactMap { $0.name == name ? value.map { (name, $0) } : $0 }
        }
    }

    static let refusals: [Refusal] = [
        Refusal("tampered body", body: Array(#"{"type":"access.granted","member":"Zoe"}"#.utf8), error: .noMatchingSignature(offered: 1)) { try signed(by: [newer]) },
        Refusal("body with a byte appended", body: body + [0x0A], error: .noMatchingSignature(offered: 1)) { try signed(by: [newer]) },
        Refusal("wrong secret", error: .noMatchingSignature(offered: 1)) { try signed(by: [stranger]) },
        Refusal("id changed after signing", error: .noMatchingSignature(offered: 1), headers: replacing("webhook-id", with: "tr_other")),
        Refusal("timestamp changed after signing", error: .noMatchingSignature(offered: 1), headers: replacing("webhook-timestamp", with: "1800000001")),
        Refusal("timestamp 301 s old", error: .timestampTooOld(timestamp: timestamp - 301, now: timestamp, tolerance: 300)) { try signed(by: [newer], timestamp: timestamp - 301) },
        Refusal("timestamp 301 s in the future", error: .timestampTooNew(timestamp: timestamp + 301, now: timestamp, tolerance: 300)) { try signed(by: [newer], timestamp: timestamp + 301) },
        Refusal("no webhook-id", error: .missingHeader("webhook-id"), headers: replacing("webhook-id", with: nil)),
        Refusal("empty webhook-id", error: .missingHeader("webhook-id"), headers: replacing("webhook-id", with: "")),
        Refusal("no webhook-timestamp", error: .missingHeader("webhook-timestamp"), headers: replacing("webhook-timestamp", with: nil)),
        Refusal("no webhook-signature", error: .missingHeader("webhook-signature"), headers: replacing("webhook-signature", with: nil)),
        Refusal("webhook-signature twice", error: .repeatedHeader("webhook-signature")) { try signed(by: [newer]) + [("Webhook-Signature", "v1,AAAA")] },
        Refusal("timestamp not a number", error: .malformedTimestamp, headers: replacing("webhook-timestamp", with: "hello")),
        Refusal("timestamp with a fraction", error: .malformedTimestamp, headers: replacing("webhook-timestamp", with: "1800000000.5")),
        Refusal("negative timestamp", error: .malformedTimestamp, headers: replacing("webhook-timestamp", with: "-1800000000")),
        Refusal("timestamp past Int64", error: .malformedTimestamp, headers: replacing("webhook-timestamp", with: "99999999999999999999")),
        Refusal("signature without a version", error: .malformedSignature, headers: replacing("webhook-signature", with: "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")),
        Refusal("v1 signature not base64", error: .malformedSignature, headers: replacing("webhook-signature", with: "v1,not*base64")),
        Refusal("only another version's signature", error: .noMatchingSignature(offered: 0)) {
            let signature = try #require(value("webhook-signature", try signed(by: [newer])))
            return try replacing("webhook-signature", with: "v1a," + signature.dropFirst(3))()
        },
    ]

    @Test("refused with the right error", arguments: refusals)
    func refused(refusal: Refusal) throws {
        let headers = try refusal.headers()
        #expect(throws: refusal.error) {
            try WebhookVerifier(secret: Self.newer).verify(headers: headers, body: refusal.body, now: Self.now)
        }
    }

    @Test("header names are compared case-insensitively; unknown versions beside v1 are skipped")
    func lenientWhereTheSpecIs() throws {
        let headers = try Self.signed(by: [Self.newer])
        let signature = try #require(Self.value("webhook-signature", headers))
        let upper = [("Webhook-Id", Self.id), ("WEBHOOK-TIMESTAMP", String(Self.timestamp)),
                     ("Webhook-Signature", "v1a,AAAA  v2,BBBB \(signature)")]
        #expect(try WebhookVerifier(secret: Self.newer).verify(headers: upper, body: Self.body, now: Self.now).timestamp == Self.timestamp)
        let dictionary = Dictionary(uniqueKeysWithValues: headers.map { ($0.name, $0.value) })
        #expect(try WebhookVerifier(secret: Self.newer).verify(headers: dictionary, body: Self.body, now: Self.now).id == Self.id)
    }

    @Test("the tolerance is the verifier's: 10 s refuses what 300 s accepts")
    func toleranceInjected() throws {
        let headers = try Self.signed(by: [Self.newer], timestamp: Self.timestamp - 11)
        #expect(throws: Never.self) { try WebhookVerifier(secret: Self.newer).verify(headers: headers, body: Self.body, now: Self.now) }
        #expect(throws: WebhookVerificationError.timestampTooOld(timestamp: Self.timestamp - 11, now: Self.timestamp, tolerance: 10)) {
            try WebhookVerifier(secret: Self.newer, tolerance: 10).verify(headers: headers, body: Self.body, now: Self.now)
        }
    }

    @Test("ids that cannot be a header value are refused by the signer", arguments: ["", "a b", "line\nbreak", "naïve", String(repeating: "x", count: 257)])
    func badIDs(id: String) throws {
        #expect(throws: WebhookSigningError.invalidID) {
            try WebhookSigner(secret: Self.newer).headers(id: id, timestamp: Self.timestamp, body: Self.body)
        }
    }
}
