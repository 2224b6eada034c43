import AppStoreModels
import Foundation
import Testing

@testable import JWSVerification

/// Interoperability with JWS produced by Apple (test resources of the App Store Server Library).
@Suite("Apple test vectors")
struct AppleTestVectorTests {
    let verifier: SignedPayloadVerifier
    let testCA: TrustAnchor
    /// Validation instant for samples without signedDate (wrongBundleId): inside testCA's
    /// 2023-01-05 ..< 2033-01-02 validity, so the tests do not depend on today's date.
    static let fallback = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14

    init() throws {
        let anchors = try TrustAnchor.load(contentsOf: Fixtures.appleTestCA)
        testCA = try #require(anchors.first)
        verifier = try SignedPayloadVerifier(trustAnchors: anchors)
    }

    @Test("signed samples verify against testCA", arguments: ["testNotification", "transactionInfo", "renewalInfo", "wrongBundleId"])
    func samplesVerify(name: String) throws {
        let verified = try verifier.verify(try Fixtures.appleSigned(name), fallbackDate: Self.fallback)
        #expect(verified.rootFingerprint == testCA.sha256Fingerprint)
        #expect(verified.header["alg"] == .string("ES256"))
        #expect((verified.signedDate != nil) == (name != "wrongBundleId"), "only wrongBundleId lacks signedDate")
        #expect(verified.signedDate.map { Int64($0.timeIntervalSince1970 * 1000) } == verified.payload["signedDate"]?.int64Value)
        #expect(verified.leafFingerprint.count == 64)
        #expect(verified.intermediateFingerprint != verified.leafFingerprint)
    }

    @Test("testNotification decodes to the documented fields")
    func testNotificationDecodes() throws {
        // A fallback far outside the chain's validity proves signedDate is the validation instant.
        let farFuture = Date(timeIntervalSince1970: 2_200_000_000)
        let verified = try verifier.verify(try Fixtures.appleSigned("testNotification"), fallbackDate: farFuture)
        #expect(verified.payload["notificationUUID"]?.stringValue == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(verified.payload["signedDate"]?.int64Value == 1_681_314_324_000)
        #expect(verified.signedDate == Date(timeIntervalSince1970: 1_681_314_324))
        #expect(verified.payload["notificationType"]?.stringValue == "TEST")
        #expect(verified.payload["data"]?["bundleId"]?.stringValue == "com.example")
        #expect(verified.payload["data"]?["appAppleId"]?.int64Value == 1234)
        #expect(try JSONValue.parse(verified.payloadBytes) == verified.payload)
    }

    @Test("wrongBundleId verifies at this layer; the bundle check belongs to a later one")
    func wrongBundleIdVerifies() throws {
        let jws = try Fixtures.appleSigned("wrongBundleId")
        let verified = try verifier.verify(jws, fallbackDate: Self.fallback)
        #expect(verified.payload["data"]?["bundleId"]?.stringValue == "com.example.wrong")
        // Without signedDate the fallback decides: after testCA expired, the chain is refused.
        let afterExpiry = Date(timeIntervalSince1970: 2_000_000_000)  // 2033-05-18
        let error = Fixtures.error { () throws(VerificationError) in
            try verifier.verify(jws, fallbackDate: afterExpiry)
        }
        #expect(error?.failure == .certificateExpired)
    }

    @Test("renewalInfo carries testCA as x5c[2], which the verifier ignores")
    func renewalInfoRoot() throws {
        let verified = try verifier.verify(try Fixtures.appleSigned("renewalInfo"), fallbackDate: Self.fallback)
        let third = try #require(verified.header["x5c"]?.arrayValue?.dropFirst(2).first?.stringValue)
        #expect(Data(base64Encoded: third) == testCA.der)
        #expect(verified.rootFingerprint == testCA.sha256Fingerprint)
    }

    @Test("missingX5CHeaderClaim is rejected as missing x5c")
    func missingX5C() throws {
        let jws = try Fixtures.appleSigned("missingX5CHeaderClaim")
        let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }
        #expect(error?.failure == .missingX5C)
    }

    @Test("legacyTransaction (an old receipt) is not a JWS")
    func legacyTransaction() throws {
        let text = try Fixtures.appleSigned("legacyTransaction")
        let error = Fixtures.error { () throws(VerificationError) in try verifier.verify(text) }
        #expect(error?.failure == .notJWS)
    }

    @Test("Apple's samples are not trusted under the project's test root or Apple Root CA - G3",
          arguments: ["root.pem", "G3"])
    func wrongAnchor(anchor: String) throws {
        let anchors = anchor == "G3"
            ? try TrustAnchor.load(contentsOf: Fixtures.appleRootG3) : try Fixtures.pkiAnchors(anchor)
        let other = try SignedPayloadVerifier(trustAnchors: anchors)
        let jws = try Fixtures.appleSigned("testNotification")
        let error = Fixtures.error { () throws(VerificationError) in try other.verify(jws) }
        #expect(error?.failure == .chainNotTrusted)
        #expect(error?.description.hasPrefix("chain not trusted: ") == true)
        #expect(error?.detail.contains("x5c leaf") == true)
    }

    @Test("Apple Root CA - G3 loads as a trust anchor with its published fingerprint")
    func appleRootG3() throws {
        let anchors = try TrustAnchor.load(contentsOf: Fixtures.appleRootG3)
        #expect(anchors.count == 1)
        let root = try #require(anchors.first)
        #expect(root.sha256Fingerprint == "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        #expect(root.subject == "CN=Apple Root CA - G3,OU=Apple Certification Authority,O=Apple Inc.,C=US")
        #expect(try TrustAnchor(der: root.der) == root)
    }
}
