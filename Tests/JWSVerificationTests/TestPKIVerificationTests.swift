import AppStoreModels
import Foundation
import JWSSigning
import Testing

@testable import JWSVerification

/// Sign with the project's test PKI (Tools/pki) and verify, including every negative chain.
@Suite("Test PKI round trip")
struct TestPKIVerificationTests {
    @Test("sign then verify returns the payload and the chain's fingerprints")
    func roundTrip() throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let signer = try Fixtures.signer()
        let payload = Fixtures.payload(signedDate: TestDates.mid2025, index: 7)
        let verified = try verifier.verify(try signer.sign(payload: payload))

        #expect(verified.payload == payload)
        #expect(verified.payloadBytes == payload.canonicalData())
        #expect(verified.signedDate == Date(timeIntervalSince1970: TimeInterval(TestDates.mid2025) / 1000))
        #expect(verified.header == Fixtures.header(for: signer))
        #expect(verified.rootFingerprint == SHA256Digest.hex(try Fixtures.certificateDER("root.der")))
        #expect(verified.intermediateFingerprint == SHA256Digest.hex(try Fixtures.certificateDER("intermediate.pem")))
        #expect(verified.leafFingerprint == SHA256Digest.hex(try Fixtures.certificateDER("leaf.pem")))
    }

    @Test("x5c[2] is ignored even when it is junk: trust comes from the configured anchors", arguments: [1, 2])
    func x5cRootIgnored(variant: Int) throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let full = try Fixtures.signer()
        let third: [Data] = switch variant {
        case 1: [try Fixtures.certificateDER("rogue-root.pem")]
        default: [Data("not a certificate".utf8)]
        }
        let signer = JWSSigner(signer: full.signer, certificateChain: Array(full.certificateChain.prefix(2)) + third)
        let verified = try verifier.verify(try signer.sign(payload: Fixtures.payload(signedDate: TestDates.mid2025)))
        #expect(verified.rootFingerprint == SHA256Digest.hex(try Fixtures.certificateDER("root.pem")))
    }

    @Test("changing the payload or header after signing breaks the signature")
    func tampering() throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let signer = try Fixtures.signer()
        let jws = try signer.sign(payload: Fixtures.payload(signedDate: TestDates.mid2025))

        let otherPayload = Fixtures.payload(signedDate: TestDates.mid2025, extra: ["data": .object(["quantity": .int(500)])])
        let tamperedPayload = Fixtures.replacingPart(1, of: jws, with: Base64URL.encode(otherPayload.canonicalData()))
        let payloadError = Fixtures.error { () throws(VerificationError) in try verifier.verify(tamperedPayload) }
        #expect(payloadError?.failure == .badSignature)
        #expect(payloadError?.description.hasPrefix("bad signature") == true)

        let otherHeader = Fixtures.header(for: signer, overrides: ["typ": .string("JWT")])
        let tamperedHeader = Fixtures.replacingPart(0, of: jws, with: Base64URL.encode(otherHeader.canonicalData()))
        #expect(Fixtures.error { () throws(VerificationError) in try verifier.verify(tamperedHeader) }?.failure == .badSignature)
    }

    @Test("signature bytes: wrong values or wrong length are bad signatures", arguments: [
        "flip", "zeros", "ones", "short63", "long65", "der",
    ])
    func badSignatureBytes(kind: String) throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let jws = try Fixtures.signer().sign(payload: Fixtures.payload(signedDate: TestDates.mid2025))
        let parts = jws.split(separator: ".").map(String.init)
        var signature = try #require(Base64URL.decode(parts[2]))
        #expect(signature.count == 64)
        switch kind {
        case "flip": signature[signature.startIndex + 10] ^= 0x01
        case "zeros": signature = Data(count: 64)
        case "ones": signature = Data(repeating: 0xFF, count: 64)
        case "short63": signature = signature.prefix(63)
        case "long65": signature.append(0)
        default:  // a DER ECDSA-Sig-Value is not the JOSE form
            signature = Data([0x30, 0x44, 0x02, 0x20]) + signature.prefix(32) + Data([0x02, 0x20]) + signature.suffix(32)
        }
        let forged = Fixtures.replacingPart(2, of: jws, with: Base64URL.encode(signature))
        let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(forged) }
        #expect(error?.failure == .badSignature)
    }

    @Test("alg other than ES256 is rejected", arguments: [
        JSONValue.string("RS256"), .string("none"), .string("es256"), .string("ES384"), .string("HS256"), .int(256), .null,
    ])
    func algNotES256(alg: JSONValue) throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let signer = try Fixtures.signer()
        // `.null` in overrides removes alg altogether.
        let header = Fixtures.header(for: signer, overrides: ["alg": alg])
        let jws = try Fixtures.compact(header: header, payload: Fixtures.payload(signedDate: TestDates.mid2025), signer: signer.signer)
        let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }
        #expect(error?.failure == .algNotES256)
        #expect(error?.failure.description == "alg not ES256")
    }

    @Test("chains without Apple's marker OIDs are rejected", arguments: ["no-leaf-oid-", "no-int-oid-"])
    func missingAppleOID(prefix: String) throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let jws = try Fixtures.signer(prefix).sign(payload: Fixtures.payload(signedDate: TestDates.mid2025))
        let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }
        #expect(error?.failure == .missingAppleOID)
        let expectedOID = prefix == "no-leaf-oid-"
            ? SignedPayloadVerifier.appleLeafOID : SignedPayloadVerifier.appleIntermediateOID
        #expect(error?.detail.contains(expectedOID) == true)
        // Failures are not cached.
        #expect(verifier.cachedChainCount == 0)
    }

    @Test("the short-lived leaf verifies inside its validity and is expired outside it", arguments: [
        (TestDates.march2024, true),
        (TestDates.shortLeafEnd - 1000, true),
        (TestDates.shortLeafEnd, false),  // notAfter itself is already expired (as in OpenSSL)
        (TestDates.mid2025, false),
        (TestDates.beforePKI, false),
    ])
    func expiredLeaf(signedDate: Int64, valid: Bool) throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let jws = try Fixtures.signer("expired-").sign(payload: Fixtures.payload(signedDate: signedDate))
        let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }
        if valid {
            #expect(error == nil)
        } else {
            #expect(error?.failure == .certificateExpired)
            #expect(error?.failure.description == "certificate expired at signedDate")
        }
    }

    @Test("an impostor chain with identical names and OIDs is not trusted")
    func rogueChain() throws {
        let jws = try Fixtures.signer("rogue-").sign(payload: Fixtures.payload(signedDate: TestDates.mid2025))
        let verifier = try Fixtures.verifier(trusting: "root.pem", "p256-root.pem")
        let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }
        #expect(error?.failure == .chainNotTrusted)
        // The same JWS is fine under its own root, so trust is the only thing wrong with it.
        let rogueVerifier = try Fixtures.verifier(trusting: "rogue-root.der")
        #expect(try rogueVerifier.verify(jws).rootFingerprint == SHA256Digest.hex(try Fixtures.certificateDER("rogue-root.pem")))
    }

    @Test("x5c[1] must be the leaf's issuer that chains to an anchor")
    func wrongIntermediate() throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let main = try Fixtures.signer()
        for middle in ["root.pem", "rogue-intermediate.pem", "p256-intermediate.pem"] {
            let chain = [main.certificateChain[0], try Fixtures.certificateDER(middle), main.certificateChain[2]]
            let jws = try JWSSigner(signer: main.signer, certificateChain: chain)
                .sign(payload: Fixtures.payload(signedDate: TestDates.mid2025))
            let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }
            #expect(error?.failure == .chainNotTrusted, "x5c[1] = \(middle)")
        }
    }

    @Test("the all-P-256 chain verifies when its root is configured")
    func p256Chain() throws {
        let jws = try Fixtures.signer("p256-").sign(payload: Fixtures.payload(signedDate: TestDates.mid2025))
        let onlyMain = try Fixtures.verifier(trusting: "root.pem")
        #expect(Fixtures.error { () throws(VerificationError) in try onlyMain.verify(jws) }?.failure == .chainNotTrusted)

        let both = try Fixtures.verifier(trusting: "root.pem", "p256-root.der")
        #expect(try both.verify(jws).rootFingerprint == SHA256Digest.hex(try Fixtures.certificateDER("p256-root.der")))
        let mainJWS = try Fixtures.signer().sign(payload: Fixtures.payload(signedDate: TestDates.mid2025))
        #expect(try both.verify(mainJWS).rootFingerprint == SHA256Digest.hex(try Fixtures.certificateDER("root.der")))
    }

    @Test("a payload without signedDate is validated at the fallback date")
    func fallbackDate() throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let jws = try Fixtures.signer().sign(payload: Fixtures.payload(signedDate: nil))
        let inside = Date(timeIntervalSince1970: TimeInterval(TestDates.mid2025) / 1000)
        let verified = try verifier.verify(jws, fallbackDate: inside)
        #expect(verified.signedDate == nil)
        let outside = Date(timeIntervalSince1970: TimeInterval(TestDates.afterPKI) / 1000 + 86_400)
        let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws, fallbackDate: outside) }
        #expect(error?.failure == .certificateExpired)
    }
}
