import AppStoreModels
import Foundation
import JWSSigning
import Testing

@testable import JWSVerification

/// The date a chain is validated at can come from another payload member (an `AppTransaction`'s
/// `receiptCreationDate`, as Apple's App Store Server Library reads it), and a caller may refuse a
/// payload without one instead of validating at a fallback.
@Suite("Validation date member")
struct DateMemberTests {
    /// An AppTransaction-shaped payload: `receiptCreationDate` inside the test PKI's validity, and
    /// (when given) a `signedDate` outside it, so the two readings give different verdicts.
    private static func appTransaction(signedDate: Int64?) -> JSONValue {
        var fields: [String: JSONValue] = [
            "receiptType": "Sandbox", "bundleId": "com.example.seats", "appTransactionId": "705000000000000009",
            "receiptCreationDate": .int(TestDates.mid2025),
        ]
        if let signedDate { fields["signedDate"] = .int(signedDate) }
        return .object(fields)
    }

    @Test("receiptCreationDate is the validation instant when named, whatever signedDate says")
    func receiptCreationDate() throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        let jws = try Fixtures.signer().sign(payload: Self.appTransaction(signedDate: TestDates.afterPKI))

        let verified = try verifier.verify(jws, dateMember: "receiptCreationDate", fallbackDate: nil)
        #expect(verified.signedDate == Date(timeIntervalSince1970: TimeInterval(TestDates.mid2025) / 1000))

        // The same JWS read by its signedDate (2036) is outside the chain's validity.
        let bySignedDate = Fixtures.error { () throws(VerificationError) in try verifier.verify(jws) }
        #expect(bySignedDate?.failure == .certificateExpired)
        #expect(bySignedDate?.detail.contains("signedDate") == true, "\(String(describing: bySignedDate))")
    }

    @Test("a refusal at the named date names that member")
    func refusalNamesMember() throws {
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        var payload = Self.appTransaction(signedDate: nil)
        payload = .object((payload.objectValue ?? [:]).merging(["receiptCreationDate": .int(TestDates.beforePKI)]) { $1 })
        let jws = try Fixtures.signer().sign(payload: payload)
        let error = Fixtures.error { () throws(VerificationError) in
            try verifier.verify(jws, dateMember: "receiptCreationDate", fallbackDate: nil)
        }
        #expect(error?.failure == .certificateExpired)
        #expect(error?.detail.contains("receiptCreationDate") == true, "\(String(describing: error))")
    }

    @Test("without the member and without a fallback: missing_signed_date, before the chain is checked")
    func missingDate() throws {
        // Signed by a chain no root trusts: the refusal is still about the date.
        let verifier = try Fixtures.verifier(trusting: "root.pem")
        var payload = Self.appTransaction(signedDate: TestDates.mid2025).objectValue ?? [:]
        payload["receiptCreationDate"] = nil
        let jws = try Fixtures.signer("rogue-").sign(payload: .object(payload))
        let error = Fixtures.error { () throws(VerificationError) in
            try verifier.verify(jws, dateMember: "receiptCreationDate", fallbackDate: nil)
        }
        #expect(error?.failure == .missingSignedDate)
        #expect(error?.failure.rawValue == "missing_signed_date")
        #expect(error?.description == "missing signed date: the payload has no receiptCreationDate to validate its chain at")

        // With a fallback (the default), the same payload is checked at it, and the chain decides.
        let withFallback = Fixtures.error { () throws(VerificationError) in
            try verifier.verify(jws, dateMember: "receiptCreationDate", fallbackDate: Date())
        }
        #expect(withFallback?.failure == .chainNotTrusted)
    }
}
