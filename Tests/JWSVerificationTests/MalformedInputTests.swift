import AppStoreModels
import Foundation
import JWSSigning
import Testing

@testable import JWSVerification

/// Inputs that are not well-formed JWS, headers or payloads.
@Suite("Malformed input")
struct MalformedInputTests {
    let verifier: SignedPayloadVerifier
    let signer: JWSSigner

    init() throws {
        verifier = try Fixtures.verifier(trusting: "root.pem")
        signer = try Fixtures.signer()
    }

    private func failure(_ jws: String) -> VerificationFailure? {
        Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }?.failure
    }

    @Test("strings that are not three non-empty base64url parts are not JWS", arguments: [
        "", "abc", "eyJhbGciOiJFUzI1NiJ9.eyJhIjoxfQ", "a.b.c.d", ".eyJhIjoxfQ.AAAA", "eyJhIjoxfQ..AAAA",
        "eyJhIjoxfQ.eyJhIjoxfQ.", "e30.e30.AA AA", "e30.e30.AA+A", "e30.e30.AA/A", "e30$.e30.AAAA", "e30.e30.A",
        "e30.e30.AAAA\n", "ewoicHVyY2hhc2UtaW5mbyIgPSAiZXdvaWRISmhibk5oWTNScGIyNHRhV1FpSUQwZ0lqTXpPVGt6TXprNUlqc0tmUW89IjsKfQo=",
    ])
    func notJWS(text: String) {
        #expect(failure(text) == .notJWS)
    }

    @Test("a real JWS with one part removed or duplicated is not a JWS")
    func partsRemoved() throws {
        let jws = try signer.sign(payload: Fixtures.payload(signedDate: TestDates.mid2025))
        let parts = jws.split(separator: ".").map(String.init)
        #expect(failure(parts[0] + "." + parts[1]) == .notJWS)
        #expect(failure(parts[0] + "." + parts[2]) == .notJWS)
        #expect(failure(jws + "." + parts[2]) == .notJWS)
        #expect(failure(jws) == nil)
    }

    @Test("headers that are not JSON objects are malformed", arguments: [
        "not json", "[\"ES256\"]", "\"ES256\"", "{\"alg\":\"ES256\",}", "{\"alg\":\"ES256\"} x", "{\"alg\":\"ES256\"",
    ])
    func malformedHeader(headerText: String) throws {
        let jws = try Fixtures.compact(
            headerBytes: Data(headerText.utf8), payloadBytes: Fixtures.payload(signedDate: TestDates.mid2025).canonicalData(),
            signer: signer.signer)
        #expect(failure(jws) == .malformedHeader)
    }

    @Test("a header repeating a parameter is malformed, whichever value comes last (RFC 7515 §4)")
    func repeatedHeaderParameter() throws {
        let header = Fixtures.header(for: signer, overrides: [:])
        let text = header.canonicalString()
        // The real header with "alg" given twice: first "none", then the real "ES256" (and the reverse).
        for repeated in [text.replacingOccurrences(of: #"{"alg""#, with: #"{"alg":"none","alg""#),
                         text.replacingOccurrences(of: #""alg":"ES256""#, with: #""alg":"ES256","alg":"none""#)] {
            #expect(repeated != text)
            let jws = try Fixtures.compact(headerBytes: Data(repeated.utf8),
                                           payloadBytes: Fixtures.payload(signedDate: TestDates.mid2025).canonicalData(),
                                           signer: signer.signer)
            #expect(failure(jws) == .malformedHeader, "\(repeated)")
        }
    }

    @Test("a crit header parameter is refused")
    func critHeader() throws {
        let header = Fixtures.header(for: signer, overrides: ["crit": .array([.string("exp")])])
        let jws = try Fixtures.compact(header: header, payload: Fixtures.payload(signedDate: TestDates.mid2025), signer: signer.signer)
        #expect(failure(jws) == .malformedHeader)
    }

    @Test("x5c must be an array of exactly leaf, intermediate and root", arguments: [
        ("absent", VerificationFailure.missingX5C), ("empty", .invalidChainLength), ("leafOnly", .invalidChainLength),
        ("string", .missingX5C), ("number", .badCertificate), ("base64url", .badCertificate),
        ("garbage", .badCertificate), ("trailing", .badCertificate), ("two", .invalidChainLength), ("four", .invalidChainLength),
    ])
    func x5cShape(kind: String, expected: VerificationFailure) throws {
        let chain = signer.certificateChain.map { JSONValue.string($0.base64EncodedString()) }
        let x5c: JSONValue = switch kind {
        case "absent": .null
        case "empty": .array([])
        case "leafOnly": .array([chain[0]])
        case "string": chain[0]
        case "number": .array([.int(1), chain[1], chain[2]])
        case "base64url": .array([.string(Base64URL.encode(signer.certificateChain[0])), chain[1], chain[2]])
        case "garbage": .array([.string(Data("garbage garbage".utf8).base64EncodedString()), chain[1], chain[2]])
        case "trailing": .array([.string((signer.certificateChain[0] + Data([0])).base64EncodedString()), chain[1], chain[2]])
        case "two": .array(Array(chain.prefix(2)))
        default: .array(chain + [chain[2]])
        }
        let header = Fixtures.header(for: signer, overrides: ["x5c": x5c])
        if kind == "base64url" {
            // Only meaningful if the URL alphabet actually differs for this certificate.
            #expect(Base64URL.encode(signer.certificateChain[0]) != signer.certificateChain[0].base64EncodedString())
        }
        let jws = try Fixtures.compact(header: header, payload: Fixtures.payload(signedDate: TestDates.mid2025), signer: signer.signer)
        #expect(failure(jws) == expected)
    }

    @Test("payloads that are not JSON objects, or have a non-integer signedDate, are malformed JSON", arguments: [
        "not json", "[1,2]", "42", "{\"signedDate\":", "{\"signedDate\":\"soon\"}", "{\"signedDate\":1.5}", "{\"a\":1}{}",
    ])
    func malformedPayload(payloadText: String) throws {
        let jws = try signer.sign(payloadBytes: Data(payloadText.utf8))
        let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }
        #expect(error?.failure == .malformedPayload)
        #expect(error?.failure.rawValue == "malformed_json")
        #expect(error?.failure.description == "malformed JSON")
    }

    @Test("failure codes and wording are stable")
    func failureCodes() {
        let expected: [(VerificationFailure, String, String)] = [
            (.notJWS, "not_jws", "not a JWS"), (.malformedHeader, "malformed_header", "malformed header"),
            (.malformedPayload, "malformed_json", "malformed JSON"), (.algNotES256, "alg_not_es256", "alg not ES256"),
            (.missingX5C, "missing_x5c", "missing x5c certificate chain"),
            (.invalidChainLength, "invalid_chain_length", "invalid x5c chain length"), (.badCertificate, "bad_certificate", "bad certificate"),
            (.signedDateOutOfRange, "signed_date_out_of_range", "signedDate out of range"),
            (.chainNotTrusted, "chain_not_trusted", "chain not trusted"),
            (.certificateExpired, "certificate_expired", "certificate expired at signedDate"),
            (.missingAppleOID, "missing_apple_oid", "missing Apple OID"), (.badSignature, "bad_signature", "bad signature"),
        ]
        for (failure, code, text) in expected {
            #expect(failure.rawValue == code)
            #expect(failure.description == text)
            #expect(VerificationFailure(rawValue: code) == failure)
        }
        #expect(Set(expected.map(\.0)).count == expected.count)
        #expect(VerificationError(.badSignature, "x").description == "bad signature: x")
        #expect(VerificationError(.notJWS).description == "not a JWS")
    }
}
