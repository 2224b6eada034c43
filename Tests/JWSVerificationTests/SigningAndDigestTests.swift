import AppStoreModels
import Foundation
import JWSSigning
import Testing

@testable import JWSVerification

@Suite("ES256 signing and JWT")
struct SigningTests {
    @Test("signatures are 64 bytes, randomised, and verify")
    func signatures() throws {
        let signer = try Fixtures.signer()
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let payload = Fixtures.payload(signedDate: TestDates.mid2025)
        let first = try signer.sign(payload: payload)
        let second = try signer.sign(payload: payload)
        #expect(first != second, "ECDSA signatures use a fresh nonce")
        for jws in [first, second] {
            let parts = jws.split(separator: ".")
            #expect(parts.count == 3)
            #expect(Base64URL.decode(parts[2])?.count == 64)
            #expect(try verifier.verify(jws).payload == payload)
        }
        // Header is canonical: sorted keys, no whitespace.
        let header = try #require(Base64URL.decode(first.split(separator: ".")[0]))
        #expect(String(decoding: header, as: UTF8.self).hasPrefix("{\"alg\":\"ES256\",\"x5c\":[\""))
    }

    @Test("loadTestPKI falls back to the main intermediate and root for leaf-only prefixes")
    func loadTestPKIFallback() throws {
        let expired = try Fixtures.signer("expired-")
        #expect(expired.certificateChain.count == 3)
        #expect(expired.certificateChain[0] == (try Fixtures.certificateDER("expired-leaf.pem")))
        #expect(expired.certificateChain[1] == (try Fixtures.certificateDER("intermediate.pem")))
        #expect(expired.certificateChain[2] == (try Fixtures.certificateDER("root.der")))
        let p256 = try Fixtures.signer("p256-")
        #expect(p256.certificateChain[2] == (try Fixtures.certificateDER("p256-root.der")))
        #expect(throws: (any Error).self) { try Fixtures.signer("no-such-") }
    }

    @Test("ES256Signer rejects text that is not a P-256 private key")
    func rejectsBadKeys() throws {
        #expect(throws: (any Error).self) { try ES256Signer(privateKeyPEM: "not a key") }
        let certificate = try String(contentsOf: Fixtures.pkiDirectory.appendingPathComponent("leaf.pem"), encoding: .utf8)
        #expect(throws: (any Error).self) { try ES256Signer(privateKeyPEM: certificate) }
        // Apple's App Store Connect API test key is a P-256 PKCS#8 key and loads.
        let appleKey = try ES256Signer(contentsOf: Fixtures.appleVectors.appendingPathComponent("certs/testSigningKey.p8"))
        #expect(try appleKey.sign(Data("x".utf8)).count == 64)
    }

    @Test("an encrypted key is refused at once, saying so: OpenSSL is never left to prompt for a passphrase")
    func encryptedKeyRefused() throws {
        do {
            _ = try ES256Signer(contentsOf: Fixtures.pkiDirectory.appendingPathComponent("encrypted-p256-key.p8"))
            Issue.record("an encrypted key loaded")
        } catch {
            #expect("\(error)".contains("the private key is encrypted"), "\(error)")
        }
    }

    @Test("ES256JWT produces a token whose signature the JWS verifier accepts")
    func jwt() throws {
        let pki = try Fixtures.signer()
        let header: JSONValue = .object([
            "typ": .string("JWT"), "kid": .string("TESTKEY"),
            "x5c": .array(pki.certificateChain.map { .string($0.base64EncodedString()) }),
        ])
        let claims: JSONValue = .object([
            "iss": .string("issuer"), "aud": .string("appstoreconnect-v1"), "bid": .string("com.example"),
            "signedDate": .int(TestDates.mid2025),
        ])
        let token = try ES256JWT.make(header: header, claims: claims, signer: pki.signer)
        let verified = try Fixtures.verifier(trusting: "root.pem").verify(token)
        #expect(verified.header["alg"] == .string("ES256"))
        #expect(verified.header["kid"] == .string("TESTKEY"))
        #expect(verified.payload == claims)

        #expect(throws: (any Error).self) {
            try ES256JWT.make(header: .object(["alg": .string("RS256")]), claims: claims, signer: pki.signer)
        }
        #expect(throws: (any Error).self) { try ES256JWT.make(header: .array([]), claims: claims, signer: pki.signer) }
    }
}

@Suite("SHA-256 and trust anchors")
struct DigestAndAnchorTests {
    @Test("known SHA-256 vectors", arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func vectors(input: String, hex: String) {
        #expect(SHA256Digest.hex(Data(input.utf8)) == hex)
        #expect(SHA256Digest.lowercaseHex(SHA256Digest.hash(Data(input.utf8))) == hex)
        let hasher = SHA256Hasher()
        hasher.update(input)
        #expect(hasher.finalizeHex() == hex)
    }

    @Test("streaming in uneven chunks equals one-shot, and finalize resets")
    func streaming() {
        let million = Data(repeating: UInt8(ascii: "a"), count: 1_000_000)
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(SHA256Digest.hex(million) == expected)
        let hasher = SHA256Hasher()
        var offset = 0
        var step = 1
        while offset < million.count {
            let end = min(million.count, offset + step)
            hasher.update(million[offset..<end])
            offset = end
            step = step * 3 + 1
        }
        #expect(hasher.finalizeHex() == expected)
        #expect(hasher.finalizeHex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Digest.lowercaseHex(Data([0x00, 0x0F, 0xA0, 0xFF])) == "000fa0ff")
    }

    @Test("PEM and DER files load; a PEM bundle yields every certificate")
    func loading() throws {
        let pem = try Fixtures.pkiAnchors("root.pem")
        let der = try Fixtures.pkiAnchors("root.der")
        #expect(pem == der)
        #expect(pem.first?.sha256Fingerprint == SHA256Digest.hex(try #require(der.first).der))
        #expect(pem.first?.subject == "CN=SeatLedger Test Root CA,OU=Test Certification Authority,O=SeatLedger Test,C=US")

        let bundle = FileManager.default.temporaryDirectory.appendingPathComponent("seatledger-bundle-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: bundle) }
        let text = try ["root.pem", "p256-root.pem", "rogue-root.pem"].map {
            try String(contentsOf: Fixtures.pkiDirectory.appendingPathComponent($0), encoding: .utf8)
        }.joined(separator: "\n")
        try Data(text.utf8).write(to: bundle)
        let anchors = try TrustAnchor.load(contentsOf: bundle)
        #expect(anchors.count == 3)
        #expect(Set(anchors.map(\.sha256Fingerprint)).count == 3)
    }

    @Test("bad anchor material is rejected")
    func badAnchors() throws {
        let der = try Fixtures.certificateDER("root.der")
        for bytes in [Data(), Data("junk".utf8), der + Data([0]), der.prefix(der.count - 1)] {
            #expect(throws: VerificationError.self) { try TrustAnchor(der: bytes) }
        }
        #expect(throws: VerificationError.self) { try SignedPayloadVerifier(trustAnchors: []) }
    }
}
