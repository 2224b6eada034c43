import AppStoreAPI
import Foundation
import StandardWebhooks
import Testing
import WebhookDelivery

/// WebhookPoster against `Tools/scripts/webhook-receiver.py`, a receiver built on the reference
/// implementation (PyPI `standardwebhooks`), run as a subprocess on 127.0.0.1.
@Suite("WebhookPoster: one signed delivery, judged by a real Standard Webhooks receiver")
struct WebhookPosterTests {
    static let body = WebhookReceiver.DeliveryBody(type: "access.granted", memberId: "m-1", note: "Zoë — ✓ 👩‍👩‍👧")

    static func bodyBytes() throws -> [UInt8] { Array(try JSONEncoder().encode(body)) }

    /// Now, in Unix seconds: the receiver checks the timestamp against its own clock (±5 min).
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// No secret of `secrets`, in text or base64 alone, appears in anything the outcome or the
    /// poster shows.
    static func expectNoSecret(_ outcome: DeliveryAttemptOutcome, _ poster: WebhookPoster, _ secrets: [WebhookSecret],
                               sourceLocation: SourceLocation = #_sourceLocation) {
        let texts = [outcome.description, outcome.error ?? "", outcome.responseSnippet, String(reflecting: outcome),
                     String(describing: poster), String(reflecting: poster)]
        for secret in secrets {
            let base64 = String(secret.revealedText.dropFirst(WebhookSecret.prefix.count))
            for text in texts {
                #expect(!text.contains(base64), "a secret shows in \(text)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("a signed delivery is verified and recorded with its id, timestamp, body and headers")
    func verifiedAndRecorded() throws {
        let secret = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [secret])
        let poster = WebhookPoster(timeout: .seconds(10))
        let timestamp = Self.now()
        let outcome = try poster.post(to: try receiver.endpoint(), messageID: "tr_0001_delivered", timestamp: timestamp,
                                      body: try Self.bodyBytes(), signer: WebhookSigner(secret: secret))
        #expect(outcome.status == 204)
        #expect(outcome.succeeded)
        #expect(outcome.error == nil)
        #expect(outcome.responseSnippet == "")
        #expect(outcome.latencyMilliseconds >= 0 && outcome.latencyMilliseconds < 10_000)
        let records = try receiver.records()
        try #require(records.count == 1)
        #expect(records[0].webhookId == "tr_0001_delivered")
        #expect(records[0].timestamp == timestamp)
        #expect(records[0].body == Self.body)
        #expect(records[0].contentType == "application/json")
        #expect(records[0].userAgent == "SeatLedger-Webhooks/1")
        #expect(try receiver.refusals().isEmpty)
        Self.expectNoSecret(outcome, poster, [secret])
    }

    @Test("a delivery signed with the wrong secret is refused: 400, the reason in the snippet, the refusal logged")
    func wrongSecretRefused() throws {
        let right = WebhookSecret.generate(), wrong = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [right])
        let poster = WebhookPoster(timeout: .seconds(10))
        let outcome = try poster.post(to: try receiver.endpoint(), messageID: "tr_0002_wrong", timestamp: Self.now(),
                                      body: try Self.bodyBytes(), signer: WebhookSigner(secret: wrong))
        #expect(outcome.status == 400)
        #expect(!outcome.succeeded)
        #expect(outcome.responseSnippet == "No matching signature found ")
        let refusals = try receiver.refusals()
        try #require(refusals.count == 1)
        #expect(refusals[0].reason == "No matching signature found")
        #expect(refusals[0].webhookId == "tr_0002_wrong")
        #expect(try receiver.records().isEmpty)
        Self.expectNoSecret(outcome, poster, [right, wrong])
    }

    @Test("the injected timestamp is the one signed: ten minutes old, the receiver refuses it as too old")
    func injectedTimestamp() throws {
        let secret = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [secret])
        let outcome = try WebhookPoster().post(to: try receiver.endpoint(), messageID: "tr_0003_old", timestamp: Self.now() - 600,
                                               body: try Self.bodyBytes(), signer: WebhookSigner(secret: secret))
        #expect(outcome.status == 400)
        #expect(try receiver.refusals().map(\.reason) == ["Message timestamp too old"])
    }

    /// A transport between the poster and the receiver that changes one byte of every body it
    /// carries (the signature headers untouched): a body altered on the way.
    struct TamperingTransport: HTTPTransport {
        let inner = URLSessionTransport(followsRedirects: false)

        func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
            var altered = request
            if var body = request.body, let index = body.firstIndex(of: UInt8(ascii: "m")) {
                body[index] = UInt8(ascii: "n")
                altered.body = body
            }
            return try inner.send(altered)
        }
    }

    @Test("a body altered after it was signed is refused by the reference receiver: 400, no matching signature, nothing recorded")
    func tamperedBodyRefused() throws {
        let secret = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [secret])
        let outcome = try WebhookPoster(transport: TamperingTransport()).post(
            to: try receiver.endpoint(), messageID: "tr_0004_tampered", timestamp: Self.now(), body: try Self.bodyBytes(),
            signer: WebhookSigner(secret: secret))
        #expect(outcome.status == 400)
        #expect(!outcome.succeeded)
        #expect(try receiver.refusals().map(\.reason) == ["No matching signature found"])
        #expect(try receiver.records().isEmpty)
        // The same delivery through an honest transport is accepted (so the refusal is the alteration's).
        let honest = try WebhookPoster(transport: URLSessionTransport(followsRedirects: false)).post(
            to: try receiver.endpoint(), messageID: "tr_0004_honest", timestamp: Self.now(), body: try Self.bodyBytes(),
            signer: WebhookSigner(secret: secret))
        #expect(honest.status == 204)
        #expect(try receiver.records().map(\.webhookId) == ["tr_0004_honest"])
    }

    @Test("--status 500: not a success, status 500, the answer's start in the snippet")
    func serverError() throws {
        let secret = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [secret], options: ["--status", "500"])
        let poster = WebhookPoster(timeout: .seconds(10))
        let outcome = try poster.post(to: try receiver.endpoint(), messageID: "tr_0004_500", timestamp: Self.now(),
                                      body: try Self.bodyBytes(), signer: WebhookSigner(secret: secret))
        #expect(outcome.status == 500)
        #expect(!outcome.succeeded)
        #expect(outcome.error == nil)
        #expect(outcome.responseSnippet == "status 500 from webhook-receiver.py ")
        #expect(outcome.description.hasPrefix("failed: 500 in "))
        #expect(try receiver.records().isEmpty, "a delivery answered 500 is not recorded")
        Self.expectNoSecret(outcome, poster, [secret])
    }

    @Test("no answer within the timeout: no status, an error naming the timeout")
    func timeout() throws {
        let secret = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [secret], options: ["--delay-ms", "4000"])
        let poster = WebhookPoster(timeout: .milliseconds(500))
        let outcome = try poster.post(to: try receiver.endpoint(), messageID: "tr_0005_timeout", timestamp: Self.now(),
                                      body: try Self.bodyBytes(), signer: WebhookSigner(secret: secret))
        #expect(outcome.status == nil)
        #expect(!outcome.succeeded)
        let error = try #require(outcome.error)
        #expect(error.contains("timed out") && error.contains("0.5 s"), "\(error)")
        #expect(outcome.latencyMilliseconds >= 450 && outcome.latencyMilliseconds < 4000, "\(outcome)")
        Self.expectNoSecret(outcome, poster, [secret])
    }

    @Test("nothing listening: no status, an error saying the connection failed")
    func connectionRefused() throws {
        let secret = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [secret])
        let endpoint = try receiver.endpoint()
        receiver.stop()
        let outcome = try WebhookPoster(timeout: .seconds(5)).post(to: endpoint, messageID: "tr_0006_refused", timestamp: Self.now(),
                                                                   body: try Self.bodyBytes(), signer: WebhookSigner(secret: secret))
        #expect(outcome.status == nil)
        #expect(!outcome.succeeded)
        let error = try #require(outcome.error)
        #expect(error.hasPrefix("request failed without a response"), "\(error)")
    }

    @Test("a 302 is not followed: a failure with status 302, and the target never sees a request")
    func redirectNotFollowed() throws {
        let secret = WebhookSecret.generate()
        let target = try WebhookReceiver(secrets: [secret])
        let redirecting = try WebhookReceiver(secrets: [secret], options: ["--redirect", "http://127.0.0.1:\(target.port)/followed"])
        let poster = WebhookPoster(timeout: .seconds(10))
        let outcome = try poster.post(to: try redirecting.endpoint(), messageID: "tr_0007_redirect", timestamp: Self.now(),
                                      body: try Self.bodyBytes(), signer: WebhookSigner(secret: secret))
        #expect(outcome.status == 302)
        #expect(!outcome.succeeded)
        #expect(outcome.responseSnippet == "moved ")
        let error = try #require(outcome.error)
        #expect(error == "answered 302, a redirect to http://127.0.0.1:\(target.port)/followed, which is not followed")
        #expect(try target.records().isEmpty)
        #expect(try target.refusals().isEmpty)
    }

    @Test("the same 302 through a transport that follows redirects reaches the target (so the test above can fail)")
    func redirectFollowedByDefaultTransport() throws {
        let secret = WebhookSecret.generate()
        let target = try WebhookReceiver(secrets: [secret])
        let redirecting = try WebhookReceiver(secrets: [secret], options: ["--redirect", "http://127.0.0.1:\(target.port)/followed"])
        let poster = WebhookPoster(timeout: .seconds(10), transport: URLSessionTransport(timeout: 10))
        let outcome = try poster.post(to: try redirecting.endpoint(), messageID: "tr_0008_followed", timestamp: Self.now(),
                                      body: try Self.bodyBytes(), signer: WebhookSigner(secret: secret))
        #expect(outcome.status != 302)
        #expect(try target.records().count + target.refusals().count == 1, "the target got the followed request")
    }

    /// The receiver's `--chaos` modes, each at rate 1, and what the poster must report.
    static let chaosModes: [(options: [String], status: Int?, errorPart: String?)] = [
        (["--fail-rate", "1"], 500, nil),
        (["--close-rate", "1"], nil, "request failed without a response"),
        (["--timeout-rate", "1", "--hang-seconds", "5"], nil, "timed out"),
    ]

    @Test("the receiver's chaos: a 500, a connection closed without an answer, an answer that never comes", arguments: chaosModes)
    func chaos(_ mode: (options: [String], status: Int?, errorPart: String?)) throws {
        let secret = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [secret], options: ["--chaos", "7"] + mode.options)
        let outcome = try WebhookPoster(timeout: .milliseconds(1500)).post(
            to: try receiver.endpoint(), messageID: "tr_0011_chaos", timestamp: Self.now(), body: try Self.bodyBytes(), signer: WebhookSigner(secret: secret))
        #expect(outcome.status == mode.status, "\(outcome)")
        #expect(!outcome.succeeded)
        if let part = mode.errorPart { #expect(outcome.error?.contains(part) == true, "\(outcome)") }
        #expect(try receiver.records().isEmpty, "a delivery the receiver did not acknowledge is not recorded")
    }

    /// Which of a rotation's secrets a receiver holds.
    enum Holding: String, CaseIterable, Sendable {
        case onlyNew, onlyOld, both
    }

    @Test("during a rotation (signed with the new and the old secret) a receiver holding either accepts", arguments: Holding.allCases)
    func rotation(holding: Holding) throws {
        let new = WebhookSecret.generate(), old = WebhookSecret.generate()
        let held: [WebhookSecret] = switch holding {
        case .onlyNew: [new]
        case .onlyOld: [old]
        case .both: [old, new]
        }
        let receiver = try WebhookReceiver(secrets: held)
        let poster = WebhookPoster(timeout: .seconds(10))
        let outcome = try poster.post(to: try receiver.endpoint(), messageID: "tr_0009_rotation_\(holding.rawValue)", timestamp: Self.now(),
                                      body: try Self.bodyBytes(), signer: WebhookSigner(secrets: [new, old]))
        #expect(outcome.status == 204)
        #expect(outcome.succeeded)
        #expect(try receiver.records().map(\.webhookId) == ["tr_0009_rotation_\(holding.rawValue)"])
        Self.expectNoSecret(outcome, poster, [new, old])
    }

    @Test("after a rotation the old secret alone is refused by a receiver holding only the new one")
    func rotationOver() throws {
        let new = WebhookSecret.generate(), old = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [new])
        let outcome = try WebhookPoster().post(to: try receiver.endpoint(), messageID: "tr_0010_old_only", timestamp: Self.now(),
                                               body: try Self.bodyBytes(), signer: WebhookSigner(secret: old))
        #expect(outcome.status == 400)
        #expect(try receiver.records().isEmpty)
    }

    @Test("an id that cannot be a header is refused before anything is sent")
    func invalidID() throws {
        let secret = WebhookSecret.generate()
        let receiver = try WebhookReceiver(secrets: [secret])
        #expect(throws: WebhookSigningError.invalidID) {
            try WebhookPoster().post(to: try receiver.endpoint(), messageID: "has space", timestamp: Self.now(),
                                     body: try Self.bodyBytes(), signer: WebhookSigner(secret: secret))
        }
        #expect(try receiver.records().isEmpty && receiver.refusals().isEmpty)
    }
}

@Suite("WebhookPoster.snippet: at most 512 bytes, cut on a character, control characters replaced")
struct ResponseSnippetTests {
    @Test("examples", arguments: [
        (Array("ok".utf8), "ok"),
        (Array("line one\nline two\r\n\tend\u{1B}[31m".utf8), "line one line two   end [31m"),
        (Array(String(repeating: "a", count: 600).utf8), String(repeating: "a", count: 512)),
        (Array((String(repeating: "a", count: 511) + "é").utf8), String(repeating: "a", count: 511)),
        (Array((String(repeating: "a", count: 510) + "€").utf8), String(repeating: "a", count: 510)),
        (Array((String(repeating: "a", count: 509) + "€").utf8), String(repeating: "a", count: 509) + "€"),
        (Array((String(repeating: "a", count: 509) + "👩").utf8), String(repeating: "a", count: 509)),
        ([0x61, 0x00, 0x7F, 0x62] as [UInt8], "a  b"),
        (Array("\u{85}x".utf8), " x"),
    ] as [([UInt8], String)])
    func examples(_ example: ([UInt8], String)) {
        let snippet = WebhookPoster.snippet(example.0)
        #expect(snippet == example.1)
        #expect(snippet.utf8.count <= WebhookPoster.snippetByteLimit)
    }

    @Test("invalid UTF-8 never makes the snippet longer than 512 bytes")
    func invalidBytes() {
        let snippet = WebhookPoster.snippet([UInt8](repeating: 0xFF, count: 600))
        #expect(snippet.utf8.count <= 512)
        #expect(snippet.unicodeScalars.allSatisfy { $0 == "\u{FFFD}" })
        #expect(!snippet.isEmpty)
    }
}
