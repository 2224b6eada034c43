import JWSVerification
import LedgerEvents

extension RejectionCode {
    /// The rejection code of a signature verification failure (the same text: every
    /// ``VerificationFailure`` is one of ``RejectionCode/catalogue``'s codes).
    public init(_ failure: VerificationFailure) { self.init(rawValue: failure.rawValue) }
}
